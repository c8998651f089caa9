"""core.events: group sends after commit, from the worker threads of the socket server."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer
from django.db import transaction

from core import events
from games import events as game_events
from games.event_types import RaceRematch
from games.events import game_group

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def offered(n: int) -> RaceRematch:
    """An event that needs no game (any type goes the same way)."""
    return RaceRematch(code=f"race{n}", rematch=f"next{n}")


@pytest.fixture
def settings_layer(settings: Any) -> Any:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    return get_channel_layer()


async def test_a_worker_thread_sends_the_event_after_commit(settings_layer: Any) -> None:
    channel = await settings_layer.new_channel()
    await settings_layer.group_add(game_group(7), channel)

    def move_in_a_worker() -> None:
        with transaction.atomic():
            events.emit(offered(3), game_group(7))

    await sync_to_async(move_in_a_worker, thread_sensitive=False)()
    message = await asyncio.wait_for(settings_layer.receive(channel), 3)
    assert message == offered(3).message


async def test_a_rolled_back_transaction_sends_nothing(settings_layer: Any) -> None:
    channel = await settings_layer.new_channel()
    await settings_layer.group_add(game_group(8), channel)

    def rolled_back() -> None:
        with pytest.raises(RuntimeError), transaction.atomic():
            events.emit(offered(1), game_group(8))
            raise RuntimeError("rolled back")

    await sync_to_async(rolled_back, thread_sensitive=False)()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(settings_layer.receive(channel), 0.3)


async def test_a_failed_send_is_logged_not_raised(
    settings_layer: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(group: str, message: dict) -> None:
        raise ConnectionError("redis is down")

    monkeypatch.setattr(settings_layer, "group_send", broken)

    def send() -> None:
        game_events.race_rematch(code="race1", rematch="next1")

    with caplog.at_level(logging.ERROR, logger="core.events"):
        await sync_to_async(send, thread_sensitive=False)()
    assert "could not send race.rematch" in caplog.text


@pytest.fixture
def redis_layer() -> Any:
    """A Redis layer whose ``group_send`` the test replaces: it never reaches Redis."""
    return RedisChannelLayer(hosts=["redis://127.0.0.1:1"])


async def until(done: Any) -> None:
    for _ in range(500):
        if done():
            return
        await asyncio.sleep(0.01)


async def test_sends_to_redis_keep_their_order_and_the_sender_does_not_wait(
    redis_layer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move's answer does not wait for its event's round trip to Redis; a process's
    events still arrive in the order they were handed over, a slow one not overtaken."""
    gate = threading.Event()
    arrived: list[int] = []

    async def slow(group: str, message: dict) -> None:
        while message["n"] == 0 and not gate.is_set():  # the first send hangs until released
            await asyncio.sleep(0.005)
        arrived.append(message["n"])

    monkeypatch.setattr(redis_layer, "group_send", slow)

    def send_all() -> None:
        for n in range(10):
            events._group_send(redis_layer, "game.1", {"type": "game.moved", "n": n})

    await sync_to_async(send_all, thread_sensitive=False)()  # returned with none sent
    assert arrived == []
    gate.set()
    await until(lambda: len(arrived) == 10)
    assert arrived == list(range(10))


async def test_a_failed_send_to_redis_is_logged_when_it_happens(
    redis_layer: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(group: str, message: dict) -> None:
        raise ConnectionError("redis is down")

    monkeypatch.setattr(redis_layer, "group_send", broken)
    with caplog.at_level(logging.ERROR, logger="core.events"):
        await sync_to_async(events._group_send, thread_sensitive=False)(
            redis_layer, "game.2", {"type": "game.moved"}
        )
        await until(lambda: "could not send" in caplog.text)
    assert "could not send game.moved to game.2" in caplog.text
