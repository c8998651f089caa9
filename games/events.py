"""The only place that talks to the channel layer: events go out after commit.

An event is a typed value (``games.event_types``). ``emit`` hands it to this process's
subscribers at once, inside the caller's transaction (a race finishes when its last
game ends: ``games.services.races`` subscribes to ``GameMoved``), and sends it to its
channel group after commit, as the message its type's wire form renders (registered by
the edge, ``api.events``). The move command emits one ``GameMoved`` per change, whose
message carries the game's public state, so a socket forwards it without reading the game.

Consumers join ``game_group(id)`` for a game they show (and a race game's socket its
race's group, to which a race game's ``GameMoved`` goes, with the player's progress for
the race's sockets) and ``daily_group`` for a day's board.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future
from datetime import date, datetime
from functools import partial
from typing import Any, TypeVar

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction

from games import tracing
from games.event_types import (
    AuthRevoked,
    BoardResult,
    Event,
    GameMoved,
    RaceChanged,
    RaceRematch,
)

logger = logging.getLogger(__name__)

E = TypeVar("E", bound=Event)


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


#: Events handed to this process's sender loop and not yet sent: a caller waits for room
#: beyond this many (Redis slower than the moves), up to the send's timeout.
EVENTS_IN_FLIGHT = 1000
_in_flight = threading.BoundedSemaphore(EVENTS_IN_FLIGHT)
_order = asyncio.Lock()  # bound to the sender loop, the only one it is used on, at first use


async def _in_order(layer: Any, group: str, message: dict[str, Any]) -> None:
    """One send on the sender loop, after every send handed over before it: a lock's
    waiters are woken first come, first served, so a process's events reach Redis in the
    order their transactions committed."""
    async with _order:
        await layer.group_send(group, message)


def _sent(kind: str, group: str, future: Future[None]) -> None:
    _in_flight.release()
    if not future.cancelled() and (error := future.exception()) is not None:
        logger.error("could not send %s to %s", kind, group, exc_info=error)


def _group_send(layer: Any, group: str, message: dict[str, Any]) -> None:
    """Send to a group from synchronous code.

    Outside an ASGI server's loop (gunicorn's threads, commands) ``async_to_sync`` starts
    an event loop in a new thread for every call, and the Redis layer, which keeps its
    connections per event loop, then connects to Redis for every event (its CPU cost is
    in bench/README.md). One loop per process, started once, serves every send to Redis
    instead, and the caller does not wait for Redis: a move's answer went out only after
    its event's round trip, which cost every socket move its latency (issue 31,
    docs/scaling.md). Sends keep their order (``_in_order``), a failure is logged when it
    happens, and a caller waits only when ``EVENTS_IN_FLIGHT`` sends are pending.
    The in-memory layer (development, tests) is bound to its caller's loop: as before.
    """
    if not type(layer).__module__.startswith("channels_redis"):
        async_to_sync(layer.group_send)(group, message)
        return
    if not _in_flight.acquire(timeout=max(1.0, 4 * settings.REDIS_TIMEOUT)):
        raise TimeoutError(f"{EVENTS_IN_FLIGHT} events are waiting for Redis")
    future = asyncio.run_coroutine_threadsafe(_in_order(layer, group, message), _sender_loop())
    future.add_done_callback(partial(_sent, str(message.get("type")), group))


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


_subscribers: defaultdict[type[Event], list[Callable[[Any], None]]] = defaultdict(list)


def subscribe(kind: type[E], handler: Callable[[E], None]) -> None:
    """Call ``handler`` with every event of ``kind`` emitted in this process, inside the
    emitter's transaction (registered once, at app start: ``games.apps``)."""
    if handler not in _subscribers[kind]:
        _subscribers[kind].append(handler)


def emit(event: Event, group: str) -> None:
    """Hand ``event`` to this process's subscribers now, and to ``group`` after commit
    (before what the subscribers leave for after commit: a race's last move shows before
    its end)."""
    message = event.message
    transaction.on_commit(lambda: _send(group, message))
    for handler in _subscribers[type(event)]:
        handler(event)


def token_revoked(*, token_id: int) -> None:
    """After commit: the sockets opened with this token must close (it no longer admits)."""
    emit(AuthRevoked(reason="token revoked"), token_group(token_id))


def session_ended(*, session_key: str) -> None:
    """After commit: the sockets opened with this session must close (signed out)."""
    emit(AuthRevoked(reason="signed out"), session_group(session_key))


def game_moved(event: GameMoved) -> None:
    """The one event of a game's change: to its race's group for a race's game (its game
    sockets join it), else to the game's group."""
    race = event.race
    emit(event, race_group(race.code) if race is not None else game_group(event.game.pk))


def result_entered(*, variant: str, day: date, line: dict[str, Any]) -> None:
    """Send a new board line (``games.selectors.boards.result_line``) to the day's board
    now (called after commit)."""
    _send(daily_group(variant, day), BoardResult(variant=variant, day=day, line=line).message)


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def race_changed(*, code: str, starts_at: datetime | None, ends_at: datetime | None) -> None:
    """After commit: a race's roster or status changed (listeners read it again); its start
    and time limit, for the sockets to wake at."""
    emit(RaceChanged(code=code, starts_at=_iso(starts_at), ends_at=_iso(ends_at)), race_group(code))


def race_rematch(*, code: str, rematch: str) -> None:
    """After commit: the players of race ``code`` are offered the race ``rematch``."""
    emit(RaceRematch(code=code, rematch=rematch), race_group(code))
