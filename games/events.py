"""The only place that talks to the channel layer: events go out after commit.

Consumers join ``game_group(id)`` for a game they show (and a race game's socket
its race's group, whose ``race.progress`` carries that game's moves) and
``daily_group`` for a day's board. Events carry little: a game event says which game moved to
which ply (listeners read the state from the database, the source of truth); a
board event carries the public board line with its rank at send time.

The sockets of one game also greet each other (``game_hello``, ``game_peer``; sent by
``api.consumers.GameConsumer``, no commit involved): a socket that has met no other
socket of its game moves without ``game.changed``, whose only listener would be itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from datetime import date
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction

from games import tracing

logger = logging.getLogger(__name__)


def game_group(game_id: int) -> str:
    """Channel group of one game's listeners."""
    return f"game.{game_id}"


def daily_group(variant: str, day: date) -> str:
    """Channel group of one day's board listeners."""
    return f"daily.{variant}.{day.isoformat()}"


def race_group(code: str) -> str:
    """Channel group of one race's listeners (players and spectators)."""
    return f"race.{code}"


def token_group(token_id: int) -> str:
    """Channel group of the game sockets opened with one personal token."""
    return f"token.{token_id}"


def session_group(session_key: str) -> str:
    """Channel group of the game sockets opened with one browser session.

    Named by a digest of the key: the key itself is a credential and stays out of Redis.
    """
    return "session." + hashlib.sha256(session_key.encode()).hexdigest()[:40]


_sender_lock = threading.Lock()
_sender: list[asyncio.AbstractEventLoop] = []


def _sender_loop() -> asyncio.AbstractEventLoop:
    """This process's event loop for sends from synchronous code, in a thread of its own."""
    with _sender_lock:
        if not _sender:
            _sender.append(asyncio.new_event_loop())
            threading.Thread(
                target=_sender[0].run_forever, name="channel-layer-sends", daemon=True
            ).start()
        return _sender[0]


def _group_send(layer: Any, group: str, message: dict[str, Any]) -> None:
    """Send to a group from synchronous code and wait for it.

    Outside an ASGI server's loop (gunicorn's threads, commands) ``async_to_sync`` starts
    an event loop in a new thread for every call, and the Redis layer, which keeps its
    connections per event loop, then connects to Redis for every event (its CPU cost is
    in bench/README.md). One loop per process, started once, serves every send to Redis instead.
    The in-memory layer (development, tests) is bound to its caller's loop: as before.
    """
    if not type(layer).__module__.startswith("channels_redis"):
        async_to_sync(layer.group_send)(group, message)
        return
    future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), _sender_loop())
    try:
        future.result(timeout=max(1.0, 4 * settings.REDIS_TIMEOUT))
    except TimeoutError:
        future.cancel()
        raise


def _send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if (request := tracing.request_id.get()) is not None:  # the request that caused it
        message = {**message, "request_id": request}
    try:
        _group_send(layer, group, message)
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


def _peer(channel: str, shown: tuple[int, str], *, hello: bool) -> dict[str, Any]:
    return {
        "type": "game.peer",
        "channel": channel,
        "ply": shown[0],
        "status": shown[1],
        "hello": hello,
    }


async def game_hello(layer: Any, *, game_id: int, channel: str, shown: tuple[int, str]) -> None:
    """A socket that has just joined ``game_group(game_id)`` (and read the game) tells the
    game's other sockets, on every process, that it exists and shows ``shown`` (ply,
    status); each answers with ``game_peer``."""
    await layer.group_send(game_group(game_id), _peer(channel, shown, hello=True))


async def game_peer(layer: Any, *, to: str, channel: str, shown: tuple[int, str]) -> None:
    """The answer to a ``game_hello``, straight to the new socket's channel ``to``."""
    await layer.send(to, _peer(channel, shown, hello=False))


async def game_behind(layer: Any, *, to: str, game_id: int, ply: int, status: str) -> None:
    """A ``game.changed`` for one socket only: a peer showed an older state than ``ply``
    (moves made before the two sockets met were not announced)."""
    message = {"type": "game.changed", "game_id": game_id, "ply": ply, "status": status}
    await layer.send(to, message)


def result_entered(*, variant: str, day: date, line: dict[str, Any]) -> None:
    """Send a new board line to the day's board: JSON data, as ``games.shapes.board_line``
    renders it, which the channel layer carries as it is."""
    _send(daily_group(variant, day), {"type": "board.result", "result": line})


def race_changed(*, code: str) -> None:
    """After commit: a race's roster or status changed (listeners read it again)."""
    message = {"type": "race.changed", "code": code}
    transaction.on_commit(lambda: _send(race_group(code), message))


def race_progress(
    *, code: str, player: dict[str, Any], game_id: int, ply: int, status: str
) -> None:
    """After commit: a move of a race's game, the move's only event. ``player`` is JSON
    data as ``games.shapes.progress`` renders it (counts only, never cards), for the
    race's sockets; ``game_id``, ``ply`` and ``status`` are a ``game.changed`` for the
    game's sockets, which join the race's group (one send reaches both)."""
    message = {
        "type": "race.progress",
        "player": player,
        "game_id": game_id,
        "ply": ply,
        "status": status,
    }
    transaction.on_commit(lambda: _send(race_group(code), message))


def race_rematch(*, code: str, rematch: str) -> None:
    """After commit: the players of race ``code`` are offered the race ``rematch``."""
    message = {"type": "race.rematch", "code": rematch}
    transaction.on_commit(lambda: _send(race_group(code), message))
