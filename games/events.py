"""The only place that talks to the channel layer: events go out after commit.

Consumers join ``game_group(id)`` for a game they show and ``daily_group`` for
a day's board. Events carry little: a game event says which game moved to
which ply (listeners read the state from the database, the source of truth); a
board event carries the public board line with its rank at send time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from datetime import date
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction

logger = logging.getLogger(__name__)


def game_group(game_id: int) -> str:
    """Channel group of one game's listeners."""
    return f"game.{game_id}"


def daily_group(variant: str, day: date) -> str:
    """Channel group of one day's board listeners."""
    return f"daily.{variant}.{day.isoformat()}"


def token_group(token_id: int) -> str:
    """Channel group of the game sockets opened with one personal token."""
    return f"token.{token_id}"


def session_group(session_key: str) -> str:
    """Channel group of the game sockets opened with one browser session.

    Named by a digest of the key: the key itself is a credential and stays out of Redis.
    """
    return "session." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


_local = threading.local()


@contextmanager
def sending_on(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Within: events are handed to ``loop`` (the server's event loop) without waiting.

    The server's worker threads run their calls inside this (``api.threads``).
    Waiting for the send (``async_to_sync``) would hold the worker and hop
    between threads for every event; measured under load it cost more server
    CPU per move than the move itself. Elsewhere (tests, commands) events are
    sent and waited for.
    """
    previous = getattr(_local, "loop", None)
    _local.loop = loop
    try:
        yield
    finally:
        _local.loop = previous


def _sent(group: str, message: dict[str, Any], future: Future) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.error(
            "could not send %s to %s", message.get("type"), group, exc_info=future.exception()
        )


def _send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    loop = getattr(_local, "loop", None)
    try:
        if loop is not None and loop.is_running():
            # Sent in order: the loop starts the sends in the order they were handed over.
            future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
            future.add_done_callback(lambda f: _sent(group, message, f))
        else:
            async_to_sync(layer.group_send)(group, message)
    except Exception:  # an event lost is a display delay, never lost data
        logger.exception("could not send %s to %s", message.get("type"), group)


def token_revoked(*, token_id: int) -> None:
    """After commit: the sockets opened with this token must close (it no longer admits)."""
    message = {"type": "auth.revoked", "reason": "token revoked"}
    transaction.on_commit(lambda: _send(token_group(token_id), message))


def session_ended(*, session_key: str) -> None:
    """After commit: the sockets opened with this session must close (signed out)."""
    message = {"type": "auth.revoked", "reason": "signed out"}
    transaction.on_commit(lambda: _send(session_group(session_key), message))


def game_changed(*, game_id: int, ply: int, status: str) -> None:
    """After commit: tell a game's listeners that it moved on."""
    message = {"type": "game.changed", "game_id": game_id, "ply": ply, "status": status}
    transaction.on_commit(lambda: _send(game_group(game_id), message))


def result_entered(*, variant: str, day: date, line: dict[str, Any]) -> None:
    """Send a new board line (``line`` as ``boards.entry``, rank included) to the day's board."""
    # Round-trip through JSON so datetimes become text the channel layer can carry.
    result = json.loads(DjangoJSONEncoder().encode(line))
    _send(daily_group(variant, day), {"type": "board.result", "result": result})
