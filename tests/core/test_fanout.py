"""core.fanout: a group message reaches every member but its origin, in order, across
processes (two layers stand for two processes), and no message comes back for nobody."""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
import redis
from redis.asyncio.client import PubSub

from core import fanout
from core.events import ORIGIN
from core.fanout import FanoutChannelLayer
from devtools.servers import RedisServer

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/6")
QUIET = 0.3  # seconds a socket must stay without a message


def redis_up() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_timeout=0.5).ping())
    except redis.RedisError:
        return False


needs_redis = pytest.mark.skipif(not redis_up(), reason="no Redis at REDIS_URL")


async def nothing_for(layer: FanoutChannelLayer, channel: str, seconds: float = QUIET) -> None:
    """No message for ``channel`` within ``seconds`` (a receive cancelled would end the
    channel, as a consumer's end does: its queue is looked at instead)."""
    await asyncio.sleep(seconds)
    queue = layer.hub().queues[channel]
    assert queue.empty(), f"{channel} got {queue.get_nowait()}"


async def got(layer: FanoutChannelLayer, channel: str) -> dict[str, Any]:
    return await asyncio.wait_for(layer.receive(channel), 5)


def moved(n: int, origin: str | None = None) -> dict[str, Any]:
    return {"type": "game.moved", "ply": n, ORIGIN: origin}


async def until_confirmed(group: str, *layers: FanoutChannelLayer) -> None:
    """Wait (at most 10 s) until Redis has every layer's subscription to ``group``: a
    loaded machine may take longer to connect than a layer waits in ``group_add``."""
    deadline = asyncio.get_running_loop().time() + 10
    while not all(layer.hub().confirmed(layer.group_key(group)) for layer in layers):
        assert asyncio.get_running_loop().time() < deadline, f"{group} not subscribed"
        await asyncio.sleep(0.05)


@pytest_asyncio.fixture
async def processes() -> AsyncIterator[tuple[FanoutChannelLayer, FanoutChannelLayer]]:
    """Two layers on one Redis, as two server processes; a prefix of this test's own.
    Their timeout is long: ``group_add`` then waits out a loaded machine's connect."""
    prefix = f"test-fanout-{uuid.uuid4().hex[:8]}"
    layers = (
        FanoutChannelLayer(url=REDIS_URL, prefix=prefix, timeout=5.0, retry=0.2),
        FanoutChannelLayer(url=REDIS_URL, prefix=prefix, timeout=5.0, retry=0.2),
    )
    yield layers
    for layer in layers:
        await layer.flush()


@pytest.mark.asyncio
async def test_in_one_process_the_origin_gets_nothing_the_others_everything() -> None:
    layer = FanoutChannelLayer()
    mover, tab, spectator = [await layer.new_channel() for _ in range(3)]
    for channel in (mover, tab, spectator):
        await layer.group_add("game.1", channel)
    for n in range(1, 4):
        await layer.group_send("game.1", moved(n, origin=mover))
    for channel in (tab, spectator):
        assert [(await got(layer, channel))["ply"] for _ in range(3)] == [1, 2, 3]
    await nothing_for(layer, mover)
    await layer.group_send("game.1", moved(4))  # no origin (REST): everyone
    for channel in (mover, tab, spectator):
        assert (await got(layer, channel))["ply"] == 4
    await layer.group_discard("game.1", tab)
    await layer.group_send("game.1", moved(5, origin=mover))
    assert (await got(layer, spectator))["ply"] == 5
    await nothing_for(layer, tab)


@pytest.mark.asyncio
@needs_redis
async def test_across_processes_every_member_but_the_origin_in_order(
    processes: tuple[FanoutChannelLayer, FanoutChannelLayer],
) -> None:
    a, b = processes
    mover, tab = await a.new_channel(), await a.new_channel()
    other = await b.new_channel()
    await a.group_add("race.x", mover)
    await a.group_add("race.x", tab)
    await b.group_add("race.x", other)
    plies = list(range(1, 51))

    def worker() -> None:  # events after commit come from worker threads
        for n in plies:
            a.publish_threadsafe("race.x", moved(n, origin=mover))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert [(await got(a, tab))["ply"] for _ in plies] == plies
    assert [(await got(b, other))["ply"] for _ in plies] == plies
    await nothing_for(a, mover)  # nor its own publish back from Redis
    await nothing_for(a, tab, 0.1)


@pytest.mark.asyncio
@needs_redis
async def test_a_lone_socket_gets_no_message_back_from_redis(
    processes: tuple[FanoutChannelLayer, FanoutChannelLayer], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = processes
    mover = await a.new_channel()
    await a.group_add("game.7", mover)
    hub = a.hub()
    came: list[bytes] = []
    received = hub.received
    monkeypatch.setattr(hub, "received", lambda key, payload: came.append(key))
    for n in range(5):
        await a.group_send("game.7", moved(n, origin=mover))
    await nothing_for(a, mover)
    assert came == []  # Redis published nothing: only this process subscribes
    other = await b.new_channel()
    await b.group_add("game.7", other)
    await a.group_send("game.7", moved(9, origin=mover))
    assert (await got(b, other))["ply"] == 9
    await asyncio.sleep(0.1)
    assert came == [a.group_key("game.7")]  # now it does, and drops its own by the tag
    monkeypatch.setattr(hub, "received", received)
    await nothing_for(a, mover)


@pytest.mark.asyncio
@needs_redis
async def test_a_process_without_sockets_reaches_every_socket(
    processes: tuple[FanoutChannelLayer, FanoutChannelLayer],
) -> None:
    """A REST move (gunicorn: no sockets, no origin) reaches the player's own tab too."""
    a, rest = processes
    tab = await a.new_channel()
    await a.group_add("game.3", tab)
    threading.Thread(target=rest.publish_threadsafe, args=("game.3", moved(1))).start()
    assert (await got(a, tab))["ply"] == 1


@pytest.mark.asyncio
@needs_redis
async def test_send_goes_through_redis_to_the_channels_process(
    processes: tuple[FanoutChannelLayer, FanoutChannelLayer],
) -> None:
    a, b = processes
    watch, socket = await a.new_channel(), await b.new_channel()
    await a.send(watch, {"type": "layer.watch"})
    await b.send(watch, {"type": "layer.watch", "n": 2})
    await a.send(socket, {"type": "hello"})
    came = [await got(a, watch), await got(a, watch)]  # two processes: in either order
    assert sorted(message.get("n", 1) for message in came) == [1, 2]
    assert (await got(b, socket))["type"] == "hello"


@pytest.mark.asyncio
@needs_redis
async def test_the_subscription_ends_when_cancelled_even_if_a_read_swallowed_it(
    processes: tuple[FanoutChannelLayer, FanoutChannelLayer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel swallowed on the way (a timeout of Python 3.11 can swallow one that comes
    as it expires) still ends the subscribing task: an event loop's close would otherwise
    wait for it for good."""
    read = PubSub.get_message

    async def swallowing(self: PubSub, *args: Any, **kwargs: Any) -> Any:
        try:
            return await read(self, *args, **kwargs)
        except asyncio.CancelledError:
            return None

    monkeypatch.setattr(PubSub, "get_message", swallowing)
    a, _ = processes
    await a.group_add("game.8", await a.new_channel())
    hub = a.hub()
    assert hub.task is not None and hub.confirmed(a.group_key("game.8"))
    await asyncio.sleep(0.05)  # the subscribing task waits in a read
    hub.task.cancel()
    done, _ = await asyncio.wait({hub.task}, timeout=5)
    assert done, "the subscribing task ran on after it was cancelled"


@pytest.mark.asyncio
async def test_redis_away_and_back() -> None:
    """While Redis is away, a group message reaches this process's members only; once it
    answers again the subscriptions are made again and messages cross again."""
    if not __import__("shutil").which("redis-server"):
        pytest.skip("redis-server is not installed")
    server = RedisServer()
    server.start()
    try:
        a = FanoutChannelLayer(url=server.url, timeout=0.3, retry=0.1)
        b = FanoutChannelLayer(url=server.url, timeout=0.3, retry=0.1)
        local, mine, theirs = await a.new_channel(), await a.new_channel(), await b.new_channel()
        for layer, channel in ((a, local), (a, mine), (b, theirs)):
            await layer.group_add("game.5", channel)
        await until_confirmed("game.5", a, b)
        await a.group_send("game.5", moved(1, origin=mine))
        assert (await got(b, theirs))["ply"] == 1
        assert (await got(a, local))["ply"] == 1
        server.kill()
        await asyncio.sleep(0.3)
        await a.group_send("game.5", moved(2, origin=mine))
        assert (await got(a, local))["ply"] == 2  # this process's members still get it
        server.start()
        await until_confirmed("game.5", a, b)
        await asyncio.sleep(0.3)  # the publisher's retry
        await a.group_send("game.5", moved(3, origin=mine))
        await a.group_send("game.5", moved(4, origin=mine))
        plies = []
        while 4 not in plies:
            plies.append((await got(b, theirs))["ply"])
        assert plies[-1] == 4 and 2 not in plies  # lost while away: the sockets resync
        assert [(await got(a, local))["ply"] for _ in range(2)] == [3, 4]
        await nothing_for(a, mine)
    finally:
        server.stop()


@pytest.mark.asyncio
async def test_a_stalled_redis_neither_blocks_nor_grows_the_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A paused Redis answers nothing: publishing stays instant, what is beyond the
    queue's bound is dropped, and the members of this process still get everything."""
    if not __import__("shutil").which("redis-server"):
        pytest.skip("redis-server is not installed")
    monkeypatch.setattr(fanout, "MAX_QUEUED", 100)
    server = RedisServer()
    server.start()
    try:
        a = FanoutChannelLayer(url=server.url, timeout=0.3, retry=0.1)
        mine, local = await a.new_channel(), await a.new_channel()
        await a.group_add("game.6", mine)
        await a.group_add("game.6", local)
        server.pause()
        loop = asyncio.get_running_loop()
        started = loop.time()
        for n in range(300):
            a.publish_threadsafe("game.6", moved(n, origin=mine))
            if n % 50 == 0:
                await asyncio.sleep(0)  # the writer runs, and waits for Redis
        assert loop.time() - started < 0.3  # nothing waited for Redis's timeout
        publisher = a.hub().publisher
        assert publisher is not None and len(publisher.queue) <= 100
        assert publisher.dropped > 0
        assert (await got(a, local))["ply"] == 0
        server.resume()
    finally:
        server.stop()
