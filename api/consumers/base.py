"""What every socket shares: database calls in worker threads, the frame budget, JSON
frames, wake-ups at given moments, and the close codes (``api.consumers`` documents
the protocol)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import orjson
from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import close_old_connections
from rest_framework.utils.encoders import JSONEncoder

from api.errors import envelope
from api.socket_faults import Resyncing
from api.throttling import account_wait
from core import clock

logger = logging.getLogger(__name__)


CLOSE_BAD_REQUEST = 4400
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_TOO_MANY = 4429
CLOSE_NOT_READY = 4503

#: Seconds between looks at a hint solved in another server process.
HINT_LOOK_EVERY = 0.25

#: Longest text frame read; anything longer is a ``bad_message`` unread.
MAX_FRAME = 4096
BOARD_LIMIT = 10

T = TypeVar("T")


#: What orjson leaves to DRF's encoder: the types REST renders its own way (dates and times
#: as DRF formats them, dataclasses refused); ``dict`` keys that are not text made text, as
#: the json module does.
_JSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
_JSON_OPTIONS |= orjson.OPT_NON_STR_KEYS
_drf_encoder = JSONEncoder()


def dumps(message: dict[str, Any]) -> str:
    """JSON text as REST renders it (DRF's encoder for dates, decimals, ...), by orjson: a
    game state's frame in a tenth of the json module's time (bench/README.md)."""
    return orjson.dumps(message, default=_drf_encoder.default, option=_JSON_OPTIONS).decode()


def tidy(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` with the thread's connections tidied in the call's own context.

    asgiref (3.13) runs the call in a copy of the caller's context, where Django's
    connection handler keeps the connection it opens; ``database_sync_to_async``
    tidies outside that context and would leave the connection checked out.
    """
    close_old_connections()
    try:
        return func(*args)
    finally:
        close_old_connections()


#: ``tidy`` in the event loop's worker threads: made once, not per call (building a
#: ``SyncToAsync`` inspects the function each time).
in_worker = database_sync_to_async(tidy, thread_sensitive=False)


def bad(message: str) -> dict[str, Any]:
    return envelope("bad_message", message)


#: A socket woken at a race's start or time limit reads again this many times, this many
#: seconds apart, while the shared clock (PostgreSQL's) has not reached it yet.
WAKE_TRIES = 10
WAKE_RETRY = 0.2


def instant(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


class Dispatch(AsyncWebsocketConsumer):
    """Channels' ``dispatch`` without its thread hop before every message.

    Channels (4.2 and later) runs ``close_old_connections`` in its one thread for
    synchronous code before each handler: a hop to another thread and back for every
    frame and group event. These consumers never reach the database from that thread:
    every call runs in a worker thread through ``tidy``, which closes the thread's old
    connections before and after the call, where they were used. The hop cost about a
    third of the event loop's time per socket move (bench/README.md).
    """

    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)


class Consumer(Resyncing, Dispatch):
    """Shared plumbing: database calls, the frame budget, JSON frames (faults and resyncs:
    ``api.socket_faults``)."""

    async def db(self, func: Callable[..., T], *args: Any) -> T:
        """Run ``func`` in a worker thread (see the module docstring)."""
        return await in_worker(func, *args)

    async def flooded(self) -> bool:
        """Count a frame against this socket's bucket and its account's budget; True if refused.

        A refused frame is not acted on, and is answered ``throttled`` (see ``refused``).
        """
        wait = self.bucket_wait()
        if wait is None:
            wait = await self._account_wait()
        if wait is None:
            self.admitted()
            return False
        await self.refused(wait)
        return True

    def bucket_wait(self) -> float | None:
        """None if this socket's bucket holds a frame (it is taken by ``admitted``), else the
        seconds until it does."""
        rate, burst = settings.WS_MESSAGE_RATE, settings.WS_MESSAGE_BURST
        now = time.monotonic()
        tokens = getattr(self, "_tokens", burst) + (now - getattr(self, "_stamp", now)) * rate
        self._tokens, self._stamp = min(burst, tokens), now
        return None if self._tokens >= 1 else (1 - self._tokens) / rate

    def admitted(self) -> None:
        """A frame passed both limits: it takes its place in the bucket."""
        self._tokens -= 1
        if self._tokens >= settings.WS_MESSAGE_BURST - 1:  # it was full: the client is calm
            self._refused = 0

    async def refused(self, wait: float) -> None:
        """Answer a refused frame ``throttled``, or hang up on a client that ignores that.

        Refusals are forgiven only once the bucket is full again, so a flood that is let
        through a frame now and then is still closed.
        """
        self._refused = getattr(self, "_refused", 0) + 1
        if self._refused > settings.WS_MESSAGE_BURST:  # it ignores the answers: hang up
            self.ready = False
            await self.close(code=CLOSE_TOO_MANY, reason="too many messages")
            return
        wait = round(wait, 3)
        message = f"too many messages: wait {wait} s"
        await self.refuse(envelope("throttled", message, {"retry_after": wait}))

    async def _account_wait(self) -> float | None:
        """None if the account's budget (shared with REST) allows a frame, else the wait."""
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            return None
        return await self.db(account_wait, user.pk)

    def wake_at(self, moments: list[datetime | None]) -> None:
        """Call ``woken`` at each of ``moments`` still ahead on this process's clock (a race's
        start and time limit: nothing else marks them); replaces the last schedule."""
        if (alarm := getattr(self, "_alarm", None)) is not None:
            alarm.cancel()
        now = clock.now()
        ahead = sorted((m - now).total_seconds() for m in moments if m is not None and m > now)
        self._alarm = asyncio.create_task(self._ring(ahead)) if ahead else None

    async def _ring(self, delays: list[float]) -> None:
        """Sleep until each delay (seconds from the schedule) has passed, then wake."""
        start = time.monotonic()
        try:
            for delay in delays:
                await asyncio.sleep(delay - (time.monotonic() - start))
                for _ in range(WAKE_TRIES):
                    if await self.woken():
                        break
                    await asyncio.sleep(WAKE_RETRY)
        except Exception:  # a database fault: the client still has resync
            logger.exception("a socket's wake-up failed")

    async def woken(self) -> bool:
        """At a moment of ``wake_at``: send what it changed; False while nothing has yet."""
        raise NotImplementedError

    async def disconnect(self, code: int) -> None:
        self.wake_at([])
        self.unwatch()

    async def join(self, group: str) -> None:
        await self.channel_layer.group_add(group, self.channel_name)
        self.groups.append(group)  # left again on disconnect

    def read_frame(self, text_data: str | None) -> dict[str, Any]:
        """The request in a text frame; raises ``BadMessage``."""
        if text_data is None:
            raise BadMessage("send JSON in text frames")
        if len(text_data) > MAX_FRAME:
            raise BadMessage(f"a message has at most {MAX_FRAME} characters")
        try:
            data = json.loads(text_data)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            raise BadMessage("the message is not JSON") from None
        if not isinstance(data, dict):
            raise BadMessage("the message must be a JSON object")
        return data


class BadMessage(Exception):
    pass


class NotFoundConsumer(AsyncWebsocketConsumer):
    """Any other WebSocket path: accepted, then closed with 4404."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_NOT_FOUND, reason="no WebSocket endpoint here")
