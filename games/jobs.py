"""Background jobs a server process starts: ``manage.py`` commands in processes of their own.

A request never waits for them (the solver runs there, never on a request thread).
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading

from django.conf import settings

logger = logging.getLogger(__name__)

_job_lock = threading.Lock()
_job: subprocess.Popen | None = None


def manage_command(*args: str) -> subprocess.Popen:
    """``manage.py *args`` in a background process of its own (it outlives a request)."""
    manage = str(settings.BASE_DIR / "manage.py")
    return subprocess.Popen(
        [sys.executable, manage, *args], stdin=subprocess.DEVNULL, start_new_session=True
    )


def dailies_job_start() -> None:
    """Start ``manage.py create_dailies --days 2`` in a background process, unless this
    server process has one running already."""
    global _job
    with _job_lock:
        if _job is not None and _job.poll() is None:
            return
        logger.warning("a daily is missing: starting create_dailies")
        _job = manage_command("create_dailies", "--days", "2")
