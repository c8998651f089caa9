"""Background jobs a server process starts: ``manage.py`` commands in processes of their own.

A request never waits for them (the solver runs there, never on a request thread).
A job ends with the server process that started it (``core.lifeline``), so a
killed server leaves no orphan; a job that died is started again by the next
request that needs it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading

from django.conf import settings

logger = logging.getLogger(__name__)

_job_lock = threading.Lock()
_jobs: dict[str, subprocess.Popen] = {}


def manage_command(*args: str) -> subprocess.Popen:
    """``manage.py *args`` in a background process of its own: it outlives a request, not
    this server process."""
    manage = str(settings.BASE_DIR / "manage.py")
    lifeline = ["-m", "core.lifeline", str(os.getpid())]
    return subprocess.Popen(
        [sys.executable, *lifeline, manage, *args],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        cwd=settings.BASE_DIR,
    )


def job_start(*args: str) -> None:
    """Start ``manage.py *args`` in a background process, unless this server process has
    that job running already."""
    with _job_lock:
        job = _jobs.get(args[0])
        if job is not None and job.poll() is None:
            return
        logger.warning("starting the background job %s", " ".join(args))
        _jobs[args[0]] = manage_command(*args)


def dailies_job_start() -> None:
    """A daily is missing: start ``manage.py create_dailies --days 2``."""
    job_start("create_dailies", "--days", "2")


def race_pool_job_start() -> None:
    """The pool of race deals runs low: start ``manage.py races`` (fills it, once)."""
    job_start("races")


def analysis_job_start() -> None:
    """An analysis waits: start ``manage.py analyse_games`` (runs the queue, then ends)."""
    job_start("analyse_games")
