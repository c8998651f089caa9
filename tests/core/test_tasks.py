"""A task's own loop sees a cancel that an await swallowed."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from core.tasks import cancel_requested


@pytest.mark.asyncio
async def test_a_swallowed_cancel_is_still_seen() -> None:
    seen: list[bool] = []

    async def loop() -> None:
        seen.append(cancel_requested())
        with contextlib.suppress(asyncio.CancelledError):  # as a Python 3.11 timeout can
            await asyncio.sleep(10)
        seen.append(cancel_requested())

    task = asyncio.create_task(loop())
    await asyncio.sleep(0)
    task.cancel()
    await task
    assert seen == [False, True]
