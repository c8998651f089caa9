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
- **Nothing waits for Redis.** Publishes go into a bounded queue that one writer task
  drains, a pipeline (one round trip) at a time, in the order of the calls; a stalled
  Redis fills the queue and what is beyond it is dropped. Events from worker threads are
  handed to the event loop that holds the sockets with one ``call_soon_threadsafe`` (a
  process without sockets, gunicorn's, uses a loop thread of its own). The JSON of a
  message is orjson's.
- **Redis is spoken by redis-py** (``redis.asyncio``): its ``PubSub`` for the
  subscribing connection (whose subscribe and unsubscribe answers tell what Redis has
  confirmed), a client of its own for publishing (the script by EVALSHA). Neither
  retries: every connect and reply waits at most the layer's ``timeout``.

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
import threading
import time
import uuid
from collections import deque
from typing import Any

import orjson
from channels.layers import BaseChannelLayer
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import NoScriptError, RedisError

from core.events import ORIGIN
from core.tasks import cancel_requested

logger = logging.getLogger(__name__)

#: Bytes of a process's tag, which starts each payload it publishes to a group.
TAG_BYTES = 16
#: The tag of a payload whose members in its process have not had it (a ``send``, or a
#: publish from a process without sockets).
NO_TAG = b"-" * TAG_BYTES
#: Publishes a process may have waiting for Redis before more are dropped (a stalled or
#: unreachable Redis): memory stays bounded, the sockets resync.
MAX_QUEUED = 10_000
#: Publishes written in one pipeline (one round trip).
MAX_BATCH = 500
#: Seconds the subscribing connection waits for a message before it looks whether its
#: task was asked to stop (``cancel_requested``).
LISTEN_SECONDS = 1.0

#: Publish ``ARGV[2]`` to ``KEYS[1]`` when it has more subscribers than ``ARGV[1]`` (1: this
#: process's own confirmed subscription, whose members already have it; 0: none).
PUBLISH_TO_OTHERS = (
    "if redis.call('PUBSUB','NUMSUB',KEYS[1])[2] > tonumber(ARGV[1]) then "
    "return redis.call('PUBLISH',KEYS[1],ARGV[2]) end return 0"
)


# -- Redis, through redis-py's asyncio client --------------------------------------------


def client(url: str, timeout: float, max_connections: int) -> Redis:
    """A redis-py client of the layer: every connect, command and reply waits at most
    ``timeout`` and is never retried (a message late is worth less than one dropped: the
    sockets resync), with no ``CLIENT SETINFO`` round trips on connect."""
    return Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        max_connections=max_connections,
        driver_info=None,
    )


#: What a Redis that is away, slow or gone raises through redis-py.
REDIS_FAILURES = (RedisError, OSError, asyncio.TimeoutError)


class Publisher:
    """The commands a process publishes, written by one task of the event loop that
    drains a bounded queue: nothing waits for Redis, the publishes go in the order of the
    calls (a batch a round trip), and while Redis is away or stalls what does not fit in
    the queue is dropped (as is everything for ``retry`` seconds after a failure)."""

    def __init__(self, url: str, timeout: float, retry: float) -> None:
        self.retry = retry
        self.client = client(url, timeout, max_connections=2)
        self.script = self.client.register_script(PUBLISH_TO_OTHERS)
        #: (Redis channel, ``ARGV[1]`` of the script or None for a plain PUBLISH, payload)
        self.queue: deque[tuple[bytes, bytes | None, bytes]] = deque()
        #: The writer, while there is something to write.
        self.task: asyncio.Task[None] | None = None
        self.retry_at = 0.0
        self.dropped = 0

    def publish(self, key: bytes, payload: bytes, mine: bytes | None = None) -> None:
        """``payload`` to ``key``: through the script with ``mine`` (0 or 1: the publish
        only when another process subscribes), a plain PUBLISH without."""
        if len(self.queue) >= MAX_QUEUED or (self.retry_at and time.monotonic() < self.retry_at):
            self._drop()
            return
        self.queue.append((key, mine, payload))
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._write())

    def _drop(self, count: int = 1, error: BaseException | None = None) -> None:
        if not self.dropped:  # once while Redis is away
            logger.warning(
                "the channel layer cannot publish to Redis (%r): group messages reach this "
                "process's sockets only",
                error or "away",
            )
        self.dropped += count

    async def _write(self) -> None:
        """Drain the queue, then end (no task left pending in a loop that is closed)."""
        queue = self.queue
        try:
            while queue:
                batch = [queue.popleft() for _ in range(min(len(queue), MAX_BATCH))]
                try:
                    await self._run(batch)
                except REDIS_FAILURES as exc:
                    self._drop(len(batch) + len(queue), exc)
                    queue.clear()
                    self.retry_at = time.monotonic() + self.retry
                except Exception:  # a bug: the batch is lost, not the writer
                    logger.exception("the channel layer failed to publish")
                else:
                    self.retry_at, self.dropped = 0.0, 0
        finally:
            self.task = None

    async def _run(self, batch: list[tuple[bytes, bytes | None, bytes]]) -> None:
        """One pipeline (one round trip); the script is loaded again when Redis forgot it
        (a restart) and the commands that needed it run once more."""
        async with self.client.pipeline(transaction=False) as pipe:
            for key, mine, payload in batch:
                if mine is None:
                    pipe.publish(key, payload)
                else:
                    pipe.evalsha(self.script.sha, 1, key, mine, payload)
            results = await pipe.execute(raise_on_error=False)
        again = [
            command
            for command, result in zip(batch, results, strict=True)
            if isinstance(result, NoScriptError)
        ]
        if again:
            await self.client.script_load(PUBLISH_TO_OTHERS)
            await self._run(again)
        for result in results:
            if isinstance(result, Exception) and not isinstance(result, NoScriptError):
                logger.warning("Redis refused a publish of the channel layer: %s", result)


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
        self.client: Redis | None = None
        #: The subscribing connection, while it is up.
        self.pubsub: PubSub | None = None
        #: Redis channel -> subscribe and unsubscribe commands not answered yet
        self.unanswered: dict[bytes, int] = {}
        self.answered: dict[bytes, list[asyncio.Future[None]]] = {}
        self.publisher: Publisher | None = None
        #: Done while the subscribing connection is up, its subscriptions sent.
        self.connected: asyncio.Future[None] = self.loop.create_future()
        self.task: asyncio.Task[None] | None = None
        if layer.url:
            self.client = client(layer.url, layer.timeout, max_connections=1)
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
            self.publisher.publish(key, self.layer.tag + orjson.dumps(message), mine)

    # -- the subscription

    def confirmed(self, key: bytes) -> bool:
        """Redis has this process's last subscribe or unsubscribe of ``key`` (on the
        connection it has now)."""
        return self.pubsub is not None and key not in self.unanswered

    def send(self, channel: str, message: dict[str, Any]) -> None:
        """``send``: through Redis to the channel's process (this one's: in memory without
        Redis)."""
        if self.publisher is None:
            self.deliver(channel, message)
            return
        owner = channel.rsplit("!", 1)[0][-TAG_BYTES:].encode()
        key = self.layer.process_prefix + owner
        payload = NO_TAG + orjson.dumps({"channel": channel, "message": message})
        self.publisher.publish(key, payload)

    async def subscribe(self, key: bytes, subscribe: bool = True) -> None:
        """SUBSCRIBE (or UNSUBSCRIBE) ``key`` on the connection there is; without one, or
        if it fails, nothing: the connection made again subscribes every group."""
        pubsub = self.pubsub
        if pubsub is None:
            return
        self.unanswered[key] = self.unanswered.get(key, 0) + 1
        try:
            if subscribe:
                await pubsub.subscribe(key)
            else:
                await pubsub.unsubscribe(key)
        except REDIS_FAILURES as exc:  # the reader sees the connection lost
            logger.debug("a subscription of the channel layer failed: %r", exc)

    async def until_subscribed(self, key: bytes) -> None:
        """Wait (at most the layer's timeout) until Redis has the subscription to ``key``:
        a socket joins a group before it reads what the group's messages change."""
        if self.pubsub is None and self.layer.url is not None:
            # ``asyncio.timeout``, not ``wait_for``, here and below: a cancel that comes as
            # the wait ends is not swallowed (Python 3.11).
            with contextlib.suppress(asyncio.TimeoutError):  # Redis away: the watch resyncs
                async with asyncio.timeout(self.layer.timeout):
                    await asyncio.shield(self.connected)
        if self.pubsub is None or key not in self.unanswered:
            return
        answered: asyncio.Future[None] = self.loop.create_future()
        self.answered.setdefault(key, []).append(answered)
        with contextlib.suppress(asyncio.TimeoutError):  # Redis is slow: the watch resyncs
            async with asyncio.timeout(self.layer.timeout):
                await answered

    def pushed(self, push: dict[str, Any]) -> None:
        """A message of the subscribing connection: one published, or Redis's answer to a
        subscribe or unsubscribe."""
        kind, key = push["type"], push["channel"]
        if kind == "message":
            self.received(key, push["data"])
            return
        if kind not in ("subscribe", "unsubscribe"):
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
        group of this process subscribed again (a new ``PubSub``: its own resubscribing
        would escape the bookkeeping of what Redis confirmed)."""
        layer = self.layer
        assert self.client is not None
        away = False
        while not cancel_requested():
            pubsub = self.client.pubsub()
            try:
                await pubsub.connect()
            except REDIS_FAILURES as exc:
                await self._close(pubsub)
                if not away:
                    logger.warning("the channel layer cannot subscribe to Redis: %r", exc)
                away = True
                await asyncio.sleep(layer.retry)
                continue
            if away:
                logger.warning("the channel layer subscribes to Redis again")
            away = False
            try:
                await self._listen(pubsub)
            except REDIS_FAILURES:
                pass
            finally:
                self._lost()
                await self._close(pubsub)
            logger.warning("the channel layer lost its Redis subscription")
            await asyncio.sleep(min(layer.retry, 0.1))
        raise asyncio.CancelledError

    async def _listen(self, pubsub: PubSub) -> None:
        """On a new connection: this process's subscriptions, then its messages until it
        is lost."""
        layer = self.layer
        self.pubsub = pubsub
        self.unanswered.clear()
        await self.subscribe(layer.process_key)
        for group in list(self.groups):
            if group in self.groups:  # not left meanwhile
                await self.subscribe(layer.group_key(group))
        if not self.connected.done():
            self.connected.set_result(None)
        while not cancel_requested():
            push = await pubsub.get_message(timeout=LISTEN_SECONDS)
            if push is not None:
                self.pushed(push)
        raise asyncio.CancelledError

    def _lost(self) -> None:
        """The connection is lost: nothing is confirmed, nobody waits for an answer."""
        self.connected = self.loop.create_future()
        self.pubsub = None
        self.unanswered.clear()
        for waiting in self.answered.values():
            for answered in waiting:
                if not answered.done():
                    answered.set_result(None)
        self.answered.clear()

    @staticmethod
    async def _close(pubsub: PubSub) -> None:
        with contextlib.suppress(Exception):  # a connection already gone
            await pubsub.aclose()


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
        self._remote.publish(self.group_key(group), NO_TAG + orjson.dumps(message))

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
        if members is None:  # in the group before the await: its messages reach it
            hub.groups[group] = {channel}
            await hub.subscribe(key)
        else:
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
            await hub.subscribe(self.group_key(group), subscribe=False)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_group_name(group)
        self.publish_threadsafe(group, message)

    async def flush(self) -> None:
        hub = self.hub()
        groups = list(hub.groups)
        hub.groups.clear()
        for group in groups:
            await hub.subscribe(self.group_key(group), subscribe=False)
        hub.queues.clear()
