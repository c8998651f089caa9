"""Helpers for the service's own asyncio loops."""

from __future__ import annotations

import asyncio


def cancel_requested() -> bool:
    """Whether this task was cancelled, even if the cancel was swallowed on the way (a
    timeout of Python 3.11 can, when it expires as the cancel comes): a loop of its own
    that reads it ends anyway, and an event loop's close does not wait for it for good."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
