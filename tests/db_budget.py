"""The database connection budget of a deployment (docs/scaling.md, "Database
connections"), read from its commands and settings: shared by the compose and Kubernetes
checks."""

from __future__ import annotations

from collections.abc import Mapping

#: PostgreSQL's connections (its default; compose sets it explicitly).
MAX_CONNECTIONS = 100
#: Connections no server or job may take: PostgreSQL's superuser reserve (3), people's
#: psql sessions, a pg_dump or manage.py run by hand.
RESERVE = 10


def _flag(command: str, name: str) -> int:
    words = command.split()
    return int(words[words.index(name) + 1])


def connections(command: str, env: Mapping[str, str]) -> int:
    """The most database connections one replica running ``command`` can hold, after
    checking that its pool allows one per thread that can use one and no more."""
    if "patience-backup.sh" in command:
        return 1  # pg_dump
    pool = int(env["DB_POOL_MAX_SIZE"])
    assert int(env["DB_POOL_MIN_SIZE"]) <= pool
    if command.startswith("gunicorn "):
        assert pool == _flag(command, "--threads"), command
        return _flag(command, "--workers") * pool
    if command.startswith("daphne "):
        # The worker threads, and Channels' one thread for thread-sensitive calls.
        assert pool == int(env["ASGI_THREADS"]) + 1, command
        return pool
    assert command.startswith(("python manage.py", "sh -c")), command
    assert pool == 1, command  # a job runs on one thread
    return pool
