"""One pinned clock for the servers that browser and end-to-end tests start.

``pinned_clock_env()`` gives the environment that makes a Python subprocess run
at ``PINNED_NOW`` (plus the real time passed since the call, so clocks tick and
all processes agree); ``sitecustomize.py`` beside this file applies it at start-up.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import time_machine

#: The instant the servers start at: a noon, far from the day's end.
PINNED_NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
#: The day those servers play.
PINNED_DAY = PINNED_NOW.date()


def _real_time() -> float:
    """The real epoch time, also while this process's own clock is pinned (tests/conftest.py)."""
    hatch = time_machine.escape_hatch
    return hatch.time.time() if hatch.is_travelling() else time.time()


def pinned_clock_env(now: datetime = PINNED_NOW) -> dict[str, str]:
    """Variables to add to a subprocess's environment to pin its clock at ``now``."""
    path = [str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH", "")]
    return {
        "PYTHONPATH": os.pathsep.join(p for p in path if p),
        "PATIENCE_TEST_NOW": now.isoformat(),
        "PATIENCE_TEST_NOW_AT": repr(_real_time()),
        # The day's clock too: PostgreSQL's now() cannot be pinned.
        "SHARED_CLOCK": "process",
    }
