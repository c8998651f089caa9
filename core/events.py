"""The only place that talks to the channel layer: an event goes out after commit.

An event is a typed value (``Event``): it names its consumer handler (``TYPE``) and
builds its own channel-layer ``message`` (JSON data, msgpack on Redis), as zulip's
actions build theirs. ``emit`` sends it to a channel group after the caller's
transaction commits, so a socket never shows what a rollback undid.

A message may name the channel it comes from (``ORIGIN``: the socket that made a move):
the channel layer (``core.fanout``) delivers it to every member of the group but that
one, which has its answer already.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import Future
from dataclasses import dataclass, fields
from functools import partial
from typing import Any, ClassVar

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction

from core import tracing

logger = logging.getLogger(__name__)

#: The key of a message naming the channel it comes from, which the group send skips.
ORIGIN = "origin"


@dataclass(frozen=True)
class Event:
    """An event: ``TYPE`` names its consumer handler (``game.moved`` -> ``game_moved``)."""

    TYPE: ClassVar[str]

    @property
    def message(self) -> dict[str, Any]:
        """The channel-layer message: ``type`` first, then the event's body."""
        return {"type": self.TYPE, **self.body()}

    def body(self) -> dict[str, Any]:
        """The message's keys but ``type``: the fields, for an event of plain values."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


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
    The fan-out layer (``core.fanout``) takes the message from any thread at once.
    """
    if (publish := getattr(layer, "publish_threadsafe", None)) is not None:
        publish(group, message)
        return
    if not type(layer).__module__.startswith("channels_redis"):
        async_to_sync(layer.group_send)(group, message)
        return
    if not _in_flight.acquire(timeout=max(1.0, 4 * settings.REDIS_TIMEOUT)):
        raise TimeoutError(f"{EVENTS_IN_FLIGHT} events are waiting for Redis")
    future = asyncio.run_coroutine_threadsafe(_in_order(layer, group, message), _sender_loop())
    future.add_done_callback(partial(_sent, str(message.get("type")), group))


def send(group: str, message: dict[str, Any]) -> None:
    """Send ``message`` to ``group`` now (a caller already past its commit)."""
    layer = get_channel_layer()
    if layer is None:
        return
    if (request := tracing.request_id.get()) is not None:  # the request that caused it
        message = {**message, "request_id": request}
    try:
        _group_send(layer, group, message)
    except Exception:  # an event lost is a display delay, never lost data
        logger.exception("could not send %s to %s", message.get("type"), group)


def emit(event: Event, group: str) -> None:
    """Send ``event`` to ``group`` after the caller's transaction commits (at once outside
    one)."""
    message = event.message
    transaction.on_commit(lambda: send(group, message))
