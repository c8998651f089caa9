"""Tools shared by the tests and the benchmarks: own server processes and accounts on them.

Not part of the installed service (``pyproject.toml`` leaves it out, as ``tests`` and ``bench``).
"""
