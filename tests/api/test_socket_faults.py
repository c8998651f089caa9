"""Sockets through faults (api/socket_faults.py).

- A database fault answers ``unavailable``: the handshake and the connect close with 4503,
  a request gets the error frame, and each sweeps the pool as HTTP does. The faults are
  raised where the database is read; the real thing (backends killed under socket
  connects on PostgreSQL) is tests/e2e/test_socket_faults.py.
- After Redis was away (a redis-server of the test's own, killed and started again), open
  sockets show what changed meanwhile, whose events were lost.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.db import OperationalError, connections

from accounts import services as account_services
from api import errors, socket_faults, ws_auth
from core import clock
from devtools.servers import RedisServer
from games.play import finish
from games.play import move as play_move
from games.selectors import dailies as daily_selectors
from games.selectors import games as game_selectors
from games.selectors import races as race_selectors
from games.services import dailies as daily_services
from games.services import games as game_services
from patience_site.asgi import application
from tests.helpers import token_headers

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]
pytest_plugins = ["tests.own_redis"]


@pytest.fixture
def sweeps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pool sweeps started (``api.errors`` starts them, for REST and sockets alike)."""
    started: list[int] = []
    monkeypatch.setattr(errors, "pool_sweep", lambda: started.append(1))
    return started


def lost(*args: Any, **kwargs: Any) -> Any:
    raise OperationalError("terminating connection due to administrator command")


@database_sync_to_async
def game_and_token(user: Any) -> tuple[int, list]:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    return game.pk, token_headers(account_services.token_create(user=user, name="ws")[1])


async def closed_with(comm: WebsocketCommunicator) -> dict[str, Any]:
    connected, _ = await comm.connect()
    assert connected  # accepted, so that the close code reaches the client
    out = await comm.receive_output(3)
    assert out["type"] == "websocket.close", out
    return out


async def test_a_fault_in_the_handshake_closes_with_4503(
    channel_layers: None, user: Any, sweeps: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    game, headers = await game_and_token(user)
    monkeypatch.setattr(ws_auth, "token_authenticate", lost)
    out = await closed_with(WebsocketCommunicator(application, f"/ws/v1/games/{game}/", headers))
    assert out["code"] == socket_faults.CLOSE_UNAVAILABLE
    assert out["reason"].startswith("unavailable: ")
    assert sweeps == [1]


@pytest.mark.parametrize("where", ["game", "race"])
async def test_a_fault_in_the_connect_closes_with_4503(
    channel_layers: None, user: Any, sweeps: list[int], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    game, headers = await game_and_token(user)
    if where == "game":
        monkeypatch.setattr(game_selectors, "game_shown", lost)
        path = f"/ws/v1/games/{game}/"
    else:
        monkeypatch.setattr(race_selectors, "race_by_code", lost)
        path = "/ws/v1/races/abcdefghij/"
    out = await closed_with(WebsocketCommunicator(application, path, headers))
    assert out["code"] == socket_faults.CLOSE_UNAVAILABLE
    assert sweeps == [1]


async def test_a_request_that_meets_a_fault_is_answered_unavailable_and_the_socket_stays(
    channel_layers: None, user: Any, sweeps: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    await database_sync_to_async(daily_services.dailies_create)(first=clock.today(), days=1)
    day = (await database_sync_to_async(clock.today)()).isoformat()
    comm = WebsocketCommunicator(application, f"/ws/v1/daily/bristol/{day}/")
    assert (await comm.connect())[0]
    assert json.loads(await comm.receive_from(3))["type"] == "board"
    with monkeypatch.context() as patched:
        patched.setattr(daily_selectors, "published_deal", lost)
        await comm.send_to(text_data=json.dumps({"type": "resync"}))
        answer = json.loads(await comm.receive_from(3))
    assert answer["type"] == "error" and answer["error"]["code"] == "unavailable", answer
    assert answer["error"]["details"] == {"retry_after": errors.UNAVAILABLE_RETRY_AFTER}
    assert sweeps == [1]
    await comm.send_to(text_data=json.dumps({"type": "resync"}))  # the database is back
    assert json.loads(await comm.receive_from(3))["type"] == "board"
    await comm.disconnect()


async def test_a_game_request_that_meets_a_fault_is_answered_unavailable(
    channel_layers: None, user: Any, sweeps: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    game, headers = await game_and_token(user)
    comm = WebsocketCommunicator(application, f"/ws/v1/games/{game}/", headers)
    assert (await comm.connect())[0]
    state = json.loads(await comm.receive_from(3))["state"]
    monkeypatch.setattr(play_move, "apply_move", lost)
    move = {"type": "move", "move": state["legal_moves"][0], "ply": state["ply"]}
    await comm.send_to(text_data=json.dumps(move))
    answer = json.loads(await comm.receive_from(3))
    assert (answer["type"], answer["cause"], answer["error"]["code"]) == (
        "error",
        "move",
        "unavailable",
    )
    assert sweeps == [1]
    await comm.disconnect()


# -- Redis away and back -------------------------------------------------------------------


async def until(condition: Any, seconds: float = 30.0) -> None:
    """Wait for ``condition()`` to hold (a state of the server's, not a speed)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "the condition never held"
        await asyncio.sleep(0.05)


async def shown_status(comm: WebsocketCommunicator, status: str) -> dict[str, Any]:
    """The first state frame showing ``status`` (earlier frames are skipped)."""
    while True:
        frame = json.loads(await comm.receive_from(30))
        if frame["type"] == "state" and frame["state"]["status"] == status:
            return frame


async def test_open_sockets_show_games_resigned_while_redis_was_away(
    own_redis: RedisServer, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket_faults, "WATCH_INTERVAL", 0.1)
    monkeypatch.setattr(socket_faults, "RESYNC_SPREAD", 0.2)
    games, sockets = [], []
    for _ in range(3):
        game, headers = await game_and_token(user)
        games.append(game)
        for _tab in range(2):  # two tabs on each game
            comm = WebsocketCommunicator(application, f"/ws/v1/games/{game}/", headers)
            assert (await comm.connect())[0]
            assert json.loads(await comm.receive_from(5))["state"]["status"] == "playing"
            sockets.append(comm)
    watch = socket_faults.LayerWatch.current
    assert watch is not None and len(watch.sockets) == 6
    own_redis.kill()
    await until(lambda: watch.away)
    for game in games:  # their events are lost: Redis is away
        await database_sync_to_async(finish.resign)(game_id=game, user=user)
    own_redis.start()
    try:
        for comm in sockets:
            frame = await shown_status(comm, "resigned")
            assert frame["cause"] == "changed"
    finally:
        for comm in sockets:
            await comm.disconnect()
        await database_sync_to_async(connections.close_all)()
    assert socket_faults.LayerWatch.current is None  # the last socket stopped the watch


async def test_the_layer_watch_ends_when_stopped_as_its_echo_comes_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stopped at any point of its round trip, the watch ends. A wait that swallowed the
    cancel (``asyncio.wait_for`` of Python 3.11 does, when what it waits for has just
    ended) would leave it looping, and an event loop's close waiting for it for good."""
    monkeypatch.setattr(socket_faults, "WATCH_INTERVAL", 0)
    for turn in range(300):
        watch = socket_faults.LayerWatch()
        for _ in range(turn % 11):
            await asyncio.sleep(0)
        watch.stop()
        done, _ = await asyncio.wait({watch.task}, timeout=2)
        assert done, f"the watch ran on after it was stopped (turn {turn})"


async def test_the_layer_watch_ends_when_a_send_swallowed_its_cancel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cancel swallowed by some await inside the watch (a layer's send, here) still
    ends it: the loop looks whether its task was asked to stop."""
    layer = get_channel_layer()
    assert layer is not None
    send = layer.send

    async def swallowing(channel: str, message: dict[str, Any]) -> None:
        try:
            await send(channel, message)
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            return

    monkeypatch.setattr(layer, "send", swallowing)
    monkeypatch.setattr(socket_faults, "WATCH_INTERVAL", 0)
    watch = socket_faults.LayerWatch()
    await asyncio.sleep(0.02)  # the watch waits in its send
    watch.stop()
    done, _ = await asyncio.wait({watch.task}, timeout=2)
    assert done, "the watch ran on after its cancel was swallowed"
