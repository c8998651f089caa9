"""Processes that a server process starts die with it: no orphan keeps a core busy.

A solver worker or a background job whose server process was killed (``kill -9``,
out of memory) would run on with no parent, holding a core and, for a job, a
database connection. A watchdog thread in the child checks its parent every
``CHECK_SECONDS`` and ends the child once the parent is gone (its parent id then
changes: the child is handed to init or a subreaper). A thread that asks is
portable and, unlike ``PR_SET_PDEATHSIG``, is not tied to the thread that
started the child. Standard library only: solver workers import it without Django.

Run as ``python -m core.lifeline PARENT_PID SCRIPT ARGS...`` it runs ``SCRIPT``
as ``__main__`` under that watch (how ``core.jobs`` starts ``manage.py``).
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import time

#: How often a child looks for its parent: the longest an orphan lives on.
CHECK_SECONDS = 1.0


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(CHECK_SECONDS)
    os._exit(0)  # no clean-up owed to a parent that is gone; the database rolls back


def die_with_parent(parent: int) -> None:
    """End this process within ``CHECK_SECONDS`` once ``parent`` is no longer its parent
    (at once if it already is not)."""
    threading.Thread(target=_watch, args=(parent,), name="lifeline", daemon=True).start()


def main(argv: list[str]) -> None:
    """``PARENT_PID SCRIPT ARGS...``: run ``SCRIPT`` with ``ARGS`` as long as the parent lives."""
    parent, script, *args = argv
    die_with_parent(int(parent))
    sys.argv = [script, *args]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
