"""Sockets through database and Redis faults: they answer ``unavailable`` and catch up.

- **The database fails** (a lost or refused connection, ``api.errors.database_unavailable``):
  during the handshake (the session or token lookup, ``DatabaseGuard``) or a socket's
  connect, the socket is accepted and closed with ``CLOSE_UNAVAILABLE`` (4503, "connect
  again in a few seconds"), never with 1011 (an application crash) or an HTTP 500; a
  request frame is answered with the ``unavailable`` error frame and the socket stays
  open; a group event that needed the database is made up by a resync a moment later.
  Each case goes through ``api.errors.error_payload``, as a REST request's does: the log
  line and the pool sweep (``core.db.pool_sweep``) of HTTP.
- **Redis comes back after an outage**: events sent while it was away are lost (the
  channel layer delivers at most once), so each process watches its channel layer
  (``LayerWatch``: a message to itself every ``WATCH_INTERVAL`` seconds) and, when a round
  trip passes again after one failed, every open socket of the process sends its game,
  race or board again as the database has it (``Resyncing.resync``), spread over
  ``RESYNC_SPREAD`` seconds so that the reads do not all arrive at once.
"""

from __future__ import annotations

import asyncio
import logging
import random
import weakref
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings

from api.errors import UNAVAILABLE_RETRY_AFTER, database_unavailable, error_payload
from core.tasks import cancel_requested

logger = logging.getLogger(__name__)

#: Close code of a socket whose connect met a database fault (as ``daily_not_ready``):
#: connect again in a few seconds.
CLOSE_UNAVAILABLE = 4503

#: Seconds between two round trips of a process's watch through its channel layer.
WATCH_INTERVAL = 1.0
#: Seconds a round trip may take before the channel layer counts as away.
WATCH_TIMEOUT = 5.0
#: Seconds over which the resyncs after an outage are spread.
RESYNC_SPREAD = 1.0


class DatabaseGuard:
    """ASGI middleware around the WebSocket authentication: a database fault during the
    handshake (the session's user, a token) closes the socket with 4503, not HTTP 500."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        seen = {"connect": False, "accept": False}

        async def watched_receive() -> dict[str, Any]:
            message = await receive()
            seen["connect"] |= message["type"] == "websocket.connect"
            return message

        async def watched_send(message: dict[str, Any]) -> None:
            seen["accept"] |= message["type"] == "websocket.accept"
            await send(message)

        try:
            await self.inner(scope, watched_receive, watched_send)
        except Exception as exc:
            payload = error_payload(exc) if database_unavailable(exc) else None
            if payload is None or seen["accept"]:
                raise
            if not seen["connect"]:
                await receive()  # the websocket.connect that the handshake did not reach
            await send({"type": "websocket.accept"})
            await send(
                {
                    "type": "websocket.close",
                    "code": CLOSE_UNAVAILABLE,
                    "reason": _reason(payload[1]),
                }
            )


def _reason(body: dict[str, Any]) -> str:
    error = body["error"]
    return f"{error['code']}: {error['message']}"[:120]


class Resyncing(AsyncWebsocketConsumer):
    """Base of the consumers: database faults answered as the module docstring says, and
    a resync after a Redis outage.

    A consumer sets ``ready`` once its first frame is out and implements ``resync`` (send
    the current state from the database) and ``refuse`` (answer a request with an error
    envelope); ``watch`` enrols it for the resyncs after an outage.
    """

    ready: bool

    async def dispatch(self, message: dict[str, Any]) -> None:
        try:
            await super().dispatch(message)
        except Exception as exc:
            kind = message["type"]
            if kind == "websocket.disconnect" or not database_unavailable(exc):
                raise  # a disconnect ends the consumer (StopConsumer) whatever happened
            payload = error_payload(exc)  # logged, and the pool swept
            assert payload is not None  # a database fault has its envelope
            await self._database_failed(kind, payload[1])

    async def _database_failed(self, kind: str, body: dict[str, Any]) -> None:
        if kind == "websocket.connect" or not self.ready:
            self.ready = False
            await self.close(code=CLOSE_UNAVAILABLE, reason=_reason(body))
        elif kind == "websocket.receive":
            await self.refuse(body)
        else:  # a group event it could not show: shown by a resync when the database is back
            self.resync_soon(UNAVAILABLE_RETRY_AFTER)

    async def refuse(self, body: dict[str, Any]) -> None:
        """Answer a frame that was not acted on with this error envelope."""
        raise NotImplementedError

    async def resync(self) -> None:
        """Send the socket's game, race or board as the database has it now."""
        raise NotImplementedError

    def watch(self) -> None:
        """Enrol this (ready) socket for a resync whenever the channel layer comes back
        (the in-process layer, without ``REDIS_URL``, never goes away)."""
        if settings.REDIS_URL:
            LayerWatch.of_this_loop().sockets.add(self)

    def unwatch(self) -> None:
        """The socket is closing: no resync any more."""
        self.ready = False
        watch = LayerWatch.current
        if watch is not None:
            watch.sockets.discard(self)
            if not watch.sockets:
                watch.stop()

    def resync_soon(self, after: float) -> None:
        """``resync`` in ``after`` to ``after + RESYNC_SPREAD`` seconds, in a task of its own."""
        delay = after + random.uniform(0, RESYNC_SPREAD)
        task = asyncio.get_running_loop().create_task(self._resync_after(delay))
        _pending.add(task)
        task.add_done_callback(_pending.discard)

    async def _resync_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        if not self.ready:
            return
        try:
            await self.resync()
        except Exception as exc:
            if not database_unavailable(exc):
                logger.exception("a socket's resync failed")
                return
            error_payload(exc)  # logged, and the pool swept
            self.resync_soon(UNAVAILABLE_RETRY_AFTER)


#: Resync tasks in flight (the loop keeps only weak references to tasks).
_pending: set[asyncio.Task[None]] = set()


class LayerWatch:
    """A process's watch on its channel layer (one per event loop, while sockets are open):
    a message to itself every ``WATCH_INTERVAL`` seconds; the first one that comes back
    after one did not has every enrolled socket resync."""

    current: LayerWatch | None = None

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.sockets: weakref.WeakSet[Resyncing] = weakref.WeakSet()
        #: Whether the last round trip failed.
        self.away = False
        self.task = self.loop.create_task(self._run())

    @classmethod
    def of_this_loop(cls) -> LayerWatch:
        watch = cls.current
        if watch is None or watch.loop is not asyncio.get_running_loop() or watch.task.done():
            watch = cls.current = cls()
        return watch

    def stop(self) -> None:
        self.task.cancel()
        if LayerWatch.current is self:
            LayerWatch.current = None

    async def _run(self) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        echoed = asyncio.Event()
        receiver: asyncio.Task[None] | None = None
        try:
            while not cancel_requested():
                try:
                    if receiver is None:
                        channel = await layer.new_channel()
                        receiver = self.loop.create_task(_echoes(layer, channel, echoed))
                    echoed.clear()
                    await layer.send(channel, {"type": "layer.watch"})
                    # ``asyncio.timeout``, not ``wait_for``: Python 3.11's ``wait_for``
                    # swallows a cancel that comes as the echo does, and the watch would
                    # loop on after ``stop`` (and an event loop's close wait for it).
                    async with asyncio.timeout(WATCH_TIMEOUT):
                        await echoed.wait()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    if not self.away:
                        logger.warning("the channel layer is away: sockets resync when it is back")
                    self.away = True
                else:
                    if self.away:
                        self.away = False
                        logger.warning(
                            "the channel layer is back: %d sockets resync", len(self.sockets)
                        )
                        for socket in list(self.sockets):
                            socket.resync_soon(0)
                await asyncio.sleep(WATCH_INTERVAL)
            raise asyncio.CancelledError  # a cancel some await swallowed
        finally:
            if receiver is not None:
                receiver.cancel()


async def _echoes(layer: Any, channel: str, echoed: asyncio.Event) -> None:
    """Receive the watch's messages for as long as it runs. Never cancelled before that: a
    receive cancelled by a timeout would leave the channel, and one subscribed again
    after the layer reconnected may miss its messages."""
    while True:
        try:
            await layer.receive(channel)
        except asyncio.CancelledError:
            raise
        except Exception:  # not expected: the messages wait in the layer's queue
            logger.exception("the channel layer's watch could not receive")
            await asyncio.sleep(WATCH_INTERVAL)
        else:
            echoed.set()
