"""gunicorn's settings for the metrics of several workers: ``gunicorn -c
python:patience_site.gunicorn ...``.

With ``PROMETHEUS_MULTIPROC_DIR`` set, every worker writes its metrics to files there and a
scrape adds them up (``core.metrics``): the files of an earlier run are cleared at start,
and a dead worker's gauges are dropped (``multiprocess.mark_process_dead``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from prometheus_client import multiprocess


def _directory() -> Path | None:
    name = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    return Path(name) if name else None


def on_starting(server: Any) -> None:
    """Before the first worker: no value of an earlier run survives a restart."""
    directory = _directory()
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*.db"):
            stale.unlink()


def child_exit(server: Any, worker: Any) -> None:
    """A worker ended: its live gauges (open sockets, hint workers, ...) go with it."""
    if _directory() is not None:
        multiprocess.mark_process_dead(worker.pid)
