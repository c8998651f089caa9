"""The channel layer: sockets' channels in this process, groups fanned out per process.

A Channels layer (the layer specification's ``send``, ``receive``, ``new_channel`` and the
``groups`` and ``flush`` extensions), so the consumers use nothing but Channels'
documented API. What it does differently from ``channels_redis``:

- **A socket's channel lives in its process.** Its queue is in memory: no Redis
  subscription per socket, no serialization on the way to the consumer.
- **One Redis subscription per group per process**, held while a socket of the process
  is in the group (``group_add``), whatever the number of those sockets.
- **A group message goes to every member but its origin.** A message may name the
  channel it comes from (``ORIGIN``, the mover's socket of a ``game.moved``): the
  members of the group in this process get it at once, in memory, all but that one, and
  so do the members in other processes, through Redis. The mover's socket gets its
  answer and nothing else.
- **No Redis message comes back for nobody.** The publish is one Lua script that
  publishes only when the group has a subscriber other than this process (``PUBSUB
  NUMSUB``, compared with this process's own confirmed subscription), so a lone
  player's move costs one write to Redis and no message back. When another process does
  listen, this process receives its own publish too; it is dropped by its tag, before
  any decoding, since its members already had it.
- **Nothing waits for Redis.** The publishing connection has ``CLIENT REPLY OFF``:
  commands are written and never answered (no reply to read, no task to wake); events
  from worker threads are handed to the event loop that holds the sockets with one
  ``call_soon_threadsafe`` (a process without sockets, gunicorn's, uses a loop thread of
  its own). The JSON of a message is orjson's.

At most once, like ``channels_redis``'s pub/sub layer: while Redis is away a group
message reaches only this process's members; the subscription is made again when Redis
answers, and ``api.socket_faults.LayerWatch`` (a ``send`` to itself through Redis) then
has every socket resync. ``send`` goes through Redis to the channel's own process, as
``channels_redis``'s does; without ``url`` everything stays in the process (one server).

Messages are handed to consumers as they are, not copied: a handler must not change one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson
from channels.layers import BaseChannelLayer

from core.events import ORIGIN

logger = logging.getLogger(__name__)

#: Bytes of a process's tag, which starts each payload it publishes to a group.
TAG_BYTES = 16
#: The tag of a payload whose members in its process have not had it (a ``send``, or a
#: publish from a process without sockets).
NO_TAG = b"-" * TAG_BYTES
#: Bytes a publishing connection may have waiting before messages are dropped (a stalled
#: Redis): at most what is in flight is lost.
MAX_BUFFER = 4 * 1024 * 1024
#: Commands kept while the publishing connection is being made.
MAX_WAITING = 1000

#: Publish ``ARGV[2]`` to ``KEYS[1]`` when it has more subscribers than ``ARGV[1]`` (1: this
#: process's own confirmed subscription, whose members already have it; 0: none).
PUBLISH_TO_OTHERS = (
    "if redis.call('PUBSUB','NUMSUB',KEYS[1])[2] > tonumber(ARGV[1]) then "
    "return redis.call('PUBLISH',KEYS[1],ARGV[2]) end return 0"
)


# -- RESP, the Redis protocol -------------------------------------------------------------


class RespError(Exception):
    """An error reply of Redis."""


_INCOMPLETE = object()


def command(*parts: bytes | str) -> bytes:
    """One command in RESP."""
    out = [b"*%d\r\n" % len(parts)]
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def parse(buffer: bytearray, pos: int) -> tuple[Any, int]:
    """The RESP value at ``pos`` and the position after it, or (``_INCOMPLETE``, pos)."""
    end = buffer.find(b"\r\n", pos)
    if end < 0:
        return _INCOMPLETE, pos
    kind, line, after = buffer[pos], bytes(buffer[pos + 1 : end]), end + 2
    if kind == 0x2B:  # +
        return line, after
    if kind == 0x2D:  # -
        return RespError(line.decode(errors="replace")), after
    if kind == 0x3A:  # :
        return int(line), after
    if kind == 0x24:  # $
        size = int(line)
        if size < 0:
            return None, after
        if len(buffer) < after + size + 2:
            return _INCOMPLETE, pos
        return bytes(buffer[after : after + size]), after + size + 2
    if kind == 0x2A:  # *
        count = int(line)
        if count < 0:
            return None, after
        items = []
        for _ in range(count):
            item, after = parse(buffer, after)
            if item is _INCOMPLETE:
                return _INCOMPLETE, pos
            items.append(item)
        return items, after
    raise ValueError(f"not RESP: {bytes(buffer[pos : pos + 20])!r}")


_PUSHES = (b"message", b"subscribe", b"unsubscribe")


class Link(asyncio.Protocol):
    """One connection to Redis: replies matched to commands in order; on a subscribing
    connection, its pushes (messages, subscribe and unsubscribe answers) to ``on_push``."""

    def __init__(self, on_push: Callable[[list[Any]], None] | None = None) -> None:
        self.on_push = on_push
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.replies: deque[asyncio.Future[Any]] = deque()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        pos = 0
        try:
            while pos < len(buffer):
                value, after = parse(buffer, pos)
                if value is _INCOMPLETE:
                    break
                pos = after
                if self.on_push is not None and type(value) is list and value[0] in _PUSHES:
                    self.on_push(value)
                elif self.replies:
                    reply = self.replies.popleft()
                    if not reply.done():
                        if isinstance(value, RespError):
                            reply.set_exception(value)
                        else:
                            reply.set_result(value)
        except Exception:  # not Redis, or a bug: drop the connection, it is made again
            logger.exception("a Redis connection of the channel layer failed")
            pos = len(buffer)
            if self.transport is not None:
                self.transport.abort()
        del buffer[:pos]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        while self.replies:
            reply = self.replies.popleft()
            if not reply.done():
                reply.set_exception(ConnectionError("Redis closed the connection"))
        if not self.closed.done():
            self.closed.set_result(None)

    @property
    def open(self) -> bool:
        return self.transport is not None and not self.transport.is_closing()

    def write(self, data: bytes) -> None:
        if self.transport is not None:
            self.transport.write(data)

    async def call(self, *parts: bytes | str, timeout: float) -> Any:
        """A command and its reply."""
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.replies.append(reply)
        self.write(command(*parts))
        return await asyncio.wait_for(reply, timeout)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def connect(
    url: str, timeout: float, on_push: Callable[[list[Any]], None] | None = None
) -> Link:
    """A connection to the Redis at ``url`` (``redis://`` or ``rediss://``), signed in."""
    parts = urlsplit(url)
    context = ssl.create_default_context() if parts.scheme == "rediss" else None
    loop = asyncio.get_running_loop()
    _, link = await asyncio.wait_for(
        loop.create_connection(
            lambda: Link(on_push), parts.hostname or "localhost", parts.port or 6379, ssl=context
        ),
        timeout,
    )
    try:
        if parts.password is not None:
            user = [unquote(parts.username)] if parts.username else []
            await link.call("AUTH", *user, unquote(parts.password), timeout=timeout)
    except BaseException:
        link.close()
        raise
    return link


class Publisher:
    """A connection that only writes (``CLIENT REPLY OFF``), made on first use and again
    after it is lost (at most every ``retry`` seconds); a command written while Redis is
    away is dropped."""

    def __init__(self, url: str, timeout: float, retry: float) -> None:
        self.url, self.timeout, self.retry = url, timeout, retry
        self.link: Link | None = None
        self.waiting: list[bytes] = []
        self.connecting = False
        self.retry_at = 0.0
        self.dropped = 0

    def write(self, data: bytes) -> None:
        link = self.link
        if link is not None and link.open:
            assert link.transport is not None
            if link.transport.get_write_buffer_size() > MAX_BUFFER:  # Redis stalls
                self._drop()
                return
            link.transport.write(data)
            return
        if self.connecting:
            if len(self.waiting) < MAX_WAITING:
                self.waiting.append(data)
            else:
                self._drop()
            return
        if time.monotonic() < self.retry_at:
            self._drop()
            return
        self.connecting = True
        self.waiting.append(data)
        task = asyncio.get_running_loop().create_task(self._connect())
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)

    def _drop(self) -> None:
        if not self.dropped:
            logger.warning("Redis is away: group messages reach this process's sockets only")
        self.dropped += 1

    async def _connect(self) -> None:
        try:
            link = await connect(self.url, self.timeout)
        except Exception as exc:
            self.retry_at = time.monotonic() + self.retry
            self.dropped += len(self.waiting)
            logger.warning("the channel layer cannot publish to Redis: %s", exc)
        else:
            link.write(command("CLIENT", "REPLY", "OFF"))  # never answered
            for data in self.waiting:
                link.write(data)
            self.link, self.dropped = link, 0
        finally:
            self.waiting.clear()
            self.connecting = False


#: Tasks in flight (the loop keeps only weak references to tasks).
_tasks: set[asyncio.Task[Any]] = set()


# -- the layer ---------------------------------------------------------------------------


class Hub:
    """The layer's side in the event loop of the sockets: their channels' queues, the
    groups they are in, the subscribing connection and the publishing one."""

    def __init__(self, layer: FanoutChannelLayer) -> None:
        self.layer = layer
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.queues: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        #: group -> this process's channels in it
        self.groups: dict[str, set[str]] = {}
        self.subscriber: Link | None = None
        #: Redis channel -> subscribe and unsubscribe commands not answered yet
        self.unanswered: dict[bytes, int] = {}
        self.answered: dict[bytes, list[asyncio.Future[None]]] = {}
        self.publisher: Publisher | None = None
        #: Done while the subscribing connection is up, its subscriptions sent.
        self.connected: asyncio.Future[None] = self.loop.create_future()
        self.task: asyncio.Task[None] | None = None
        if layer.url:
            self.publisher = Publisher(layer.url, layer.timeout, layer.retry)
            self.task = self.loop.create_task(self._subscribed())

    @property
    def alive(self) -> bool:
        return self.loop.is_running() and not self.loop.is_closed()

    # -- local delivery

    def queue(self, channel: str) -> asyncio.Queue[dict[str, Any]]:
        queue = self.queues.get(channel)
        if queue is None:
            queue = self.queues[channel] = asyncio.Queue(self.layer.get_capacity(channel))
        return queue

    def deliver(self, channel: str, message: dict[str, Any]) -> None:
        queue = self.queues.get(channel)
        if queue is None:
            return  # its consumer is gone
        try:
            queue.put_nowait(message)
        except asyncio.QueueFull:
            logger.warning("channel %s is full: a message to it was dropped", channel)

    def publish(self, group: str, message: dict[str, Any]) -> None:
        """A group message: to this process's members but its origin now, and through
        Redis to the other processes' (only if one subscribes)."""
        origin = message.get(ORIGIN)
        for channel in self.groups.get(group, ()):
            if channel != origin:
                self.deliver(channel, message)
        if self.publisher is not None:
            key = self.layer.group_key(group)
            mine = b"1" if group in self.groups and self.confirmed(key) else b"0"
            payload = self.layer.tag + orjson.dumps(message)
            self.publisher.write(command(b"EVAL", PUBLISH_TO_OTHERS, b"1", key, mine, payload))

    # -- the subscription

    def confirmed(self, key: bytes) -> bool:
        """Redis has this process's last subscribe or unsubscribe of ``key`` (on the
        connection it has now)."""
        return self.subscriber is not None and key not in self.unanswered

    def send(self, channel: str, message: dict[str, Any]) -> None:
        """``send``: through Redis to the channel's process (this one's: in memory without
        Redis)."""
        if self.publisher is None:
            self.deliver(channel, message)
            return
        owner = channel.rsplit("!", 1)[0][-TAG_BYTES:].encode()
        key = self.layer.process_prefix + owner
        payload = NO_TAG + orjson.dumps({"channel": channel, "message": message})
        self.publisher.write(command(b"PUBLISH", key, payload))

    def subscribe(self, key: bytes, subscribe: bool = True) -> None:
        if self.subscriber is not None and self.subscriber.open:
            self.unanswered[key] = self.unanswered.get(key, 0) + 1
            self.subscriber.write(command("SUBSCRIBE" if subscribe else "UNSUBSCRIBE", key))

    async def until_subscribed(self, key: bytes) -> None:
        """Wait (at most the layer's timeout) until Redis has the subscription to ``key``:
        a socket joins a group before it reads what the group's messages change."""
        if self.subscriber is None and self.layer.url is not None:
            with contextlib.suppress(asyncio.TimeoutError):  # Redis away: the watch resyncs
                await asyncio.wait_for(asyncio.shield(self.connected), self.layer.timeout)
        if self.subscriber is None or key not in self.unanswered:
            return
        answered: asyncio.Future[None] = self.loop.create_future()
        self.answered.setdefault(key, []).append(answered)
        with contextlib.suppress(asyncio.TimeoutError):  # Redis is slow: the watch resyncs
            await asyncio.wait_for(answered, self.layer.timeout)

    def pushed(self, push: list[Any]) -> None:
        kind, key = push[0], push[1]
        if kind == b"message":
            self.received(key, push[2])
            return
        left = self.unanswered.get(key, 1) - 1
        if left > 0:
            self.unanswered[key] = left
            return
        self.unanswered.pop(key, None)
        for answered in self.answered.pop(key, ()):
            if not answered.done():
                answered.set_result(None)

    def received(self, key: bytes, payload: bytes) -> None:
        """A message from Redis: to a group (not this process's own: its members had it),
        or a ``send`` to a channel of this process."""
        if payload[:TAG_BYTES] == self.layer.tag:
            return
        message = orjson.loads(memoryview(payload)[TAG_BYTES:])
        if key == self.layer.process_key:
            self.deliver(message["channel"], message["message"])
            return
        group = key[len(self.layer.group_prefix) :].decode()
        origin = message.get(ORIGIN)
        for channel in self.groups.get(group, ()):
            if channel != origin:
                self.deliver(channel, message)

    async def _subscribed(self) -> None:
        """Hold the subscribing connection: made again whenever it is lost, with every
        group of this process subscribed again."""
        layer = self.layer
        assert layer.url is not None
        away = False
        while True:
            try:
                link = await connect(layer.url, layer.timeout, self.pushed)
            except Exception as exc:
                if not away:
                    logger.warning("the channel layer cannot subscribe to Redis: %s", exc)
                away = True
                await asyncio.sleep(layer.retry)
                continue
            if away:
                logger.warning("the channel layer subscribes to Redis again")
            away = False
            self.subscriber = link
            self.unanswered.clear()
            self.subscribe(layer.process_key)
            for group in self.groups:
                self.subscribe(layer.group_key(group))
            if not self.connected.done():
                self.connected.set_result(None)
            try:
                await link.closed
            finally:
                self.connected = self.loop.create_future()
                self.subscriber = None
                self.unanswered.clear()
                for waiting in self.answered.values():
                    for answered in waiting:
                        if not answered.done():
                            answered.set_result(None)
                self.answered.clear()
                link.close()
            logger.warning("the channel layer lost its Redis subscription")
            await asyncio.sleep(min(layer.retry, 0.1))


class FanoutChannelLayer(BaseChannelLayer):
    """See the module docstring. ``url``: Redis (none: this process only); ``prefix``
    of its channel names; ``timeout`` of a connect or a subscription; ``retry``: seconds
    between two tries to reach Redis."""

    extensions = ["groups", "flush"]

    def __init__(
        self,
        url: str | None = None,
        prefix: str = "asgi",
        timeout: float = 0.5,
        retry: float = 5.0,
        capacity: int = 100,
        **kwargs: Any,
    ) -> None:
        super().__init__(capacity=capacity, **kwargs)
        self.url = url or None
        self.timeout, self.retry = timeout, retry
        self.tag = uuid.uuid4().hex[:TAG_BYTES].encode()
        self.group_prefix = f"{prefix}:group:".encode()
        self.process_prefix = f"{prefix}:process:".encode()
        self.process_key = self.process_prefix + self.tag
        self._home: Hub | None = None
        self._count = itertools.count(1)
        self._sender: asyncio.AbstractEventLoop | None = None
        self._sender_lock = threading.Lock()
        self._remote: Publisher | None = None

    def group_key(self, group: str) -> bytes:
        return self.group_prefix + group.encode()

    # -- where a call runs

    def hub(self) -> Hub:
        """The hub of the running loop, the sockets' (made on first use; again when the
        loop it had is gone, as between tests)."""
        home = self._home
        if home is None or home.loop is not asyncio.get_running_loop():
            if home is not None and home.alive:
                raise RuntimeError("the fan-out channel layer serves one event loop a process")
            home = self._home = Hub(self)
        return home

    def publish_threadsafe(self, group: str, message: dict[str, Any]) -> None:
        """``group_send`` from any thread, without waiting: to the sockets' loop (in order
        of the calls), or, in a process without sockets, to Redis from a loop thread of
        the layer's own."""
        home = self._home
        if home is not None and home.alive:
            if threading.get_ident() == home.thread:
                home.publish(group, message)
            else:
                home.loop.call_soon_threadsafe(home.publish, group, message)
            return
        if self.url is not None:
            self._sender_loop().call_soon_threadsafe(self._publish_remote, group, message)

    def _sender_loop(self) -> asyncio.AbstractEventLoop:
        with self._sender_lock:
            if self._sender is None:
                loop = self._sender = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="channel-layer-publish", daemon=True
                ).start()
            return self._sender

    def _publish_remote(self, group: str, message: dict[str, Any]) -> None:
        assert self.url is not None
        if self._remote is None:
            self._remote = Publisher(self.url, self.timeout, self.retry)
        payload = NO_TAG + orjson.dumps(message)
        self._remote.write(command(b"PUBLISH", self.group_key(group), payload))

    # -- the channel layer specification

    async def new_channel(self, prefix: str = "specific.") -> str:
        channel = f"{prefix}{self.tag.decode()}!{next(self._count)}"
        self.hub().queue(channel)
        return channel

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        """To ``channel``'s queue, through Redis to its process (with ``url``)."""
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        home = self._home
        if home is not None and home.alive and home.loop is not asyncio.get_running_loop():
            home.loop.call_soon_threadsafe(home.send, channel, message)
            return
        hub = self.hub()
        await hub.until_subscribed(self.process_key)
        hub.send(channel, message)

    async def receive(self, channel: str) -> dict[str, Any]:
        hub = self.hub()
        queue = hub.queue(channel)
        try:
            return await queue.get()
        except asyncio.CancelledError:  # its consumer ends
            if queue.empty():
                hub.queues.pop(channel, None)
            raise

    async def group_add(self, group: str, channel: str) -> None:
        self.require_valid_group_name(group)
        self.require_valid_channel_name(channel)
        hub = self.hub()
        members = hub.groups.get(group)
        key = self.group_key(group)
        if members is None:
            members = hub.groups[group] = set()
            hub.subscribe(key)
        members.add(channel)
        await hub.until_subscribed(key)

    async def group_discard(self, group: str, channel: str) -> None:
        hub = self.hub()
        members = hub.groups.get(group)
        if members is None or channel not in members:
            return
        members.discard(channel)
        if not members:
            del hub.groups[group]
            hub.subscribe(self.group_key(group), subscribe=False)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_group_name(group)
        self.publish_threadsafe(group, message)

    async def flush(self) -> None:
        hub = self.hub()
        for group in list(hub.groups):
            hub.subscribe(self.group_key(group), subscribe=False)
        hub.groups.clear()
        hub.queues.clear()
