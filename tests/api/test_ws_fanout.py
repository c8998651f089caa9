"""The fan-out of a move's event: every other socket of its game and race gets it, in
order; the mover's own socket gets its answer and nothing else (the event never reaches
its consumer); a REST move reaches every socket, the player's own tab included."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from pytest_django import Settings
from rest_framework.test import APIClient

from accounts import services as account_services
from api.consumers import game as game_consumers
from api.consumers import race as race_consumers
from games.models import Game
from games.services import games as game_services
from patience_site.asgi import application
from tests.api.test_ws_races import _race
from tests.helpers import token_headers
from tests.race_fixtures import at, game_of, quiet_moves, starts

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("channel_layers"),
]

QUIET = 0.3


class Socket:
    def __init__(self, path: str, key: str | None) -> None:
        self.comm = WebsocketCommunicator(
            application, path, headers=token_headers(key) if key else []
        )

    async def open(self) -> dict[str, Any]:
        connected, _ = await self.comm.connect()
        assert connected
        return await self.recv()

    async def recv(self) -> dict[str, Any]:
        return json.loads(await self.comm.receive_from(5))

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        await self.comm.send_to(text_data=json.dumps(message))
        return await self.recv()

    async def quiet(self) -> bool:
        return await self.comm.receive_nothing(QUIET)


@pytest.fixture
def handled(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The ``game.moved`` events each consumer's handler was called with, by channel."""
    calls: Counter[str] = Counter()
    for consumer in (game_consumers.GameConsumer, race_consumers.RaceConsumer):
        original = consumer.game_moved

        async def spy(self: Any, message: dict[str, Any], original: Any = original) -> None:
            calls[self.channel_name] += 1
            await original(self, message)

        monkeypatch.setattr(consumer, "game_moved", spy)
    return calls


def practice(make_user: Callable[..., Any]) -> tuple[Game, str, Any]:
    user = make_user()
    game = game_services.practice_game_start(user=user, variant="bristol", seed=1)
    return game, account_services.token_create(user=user, name="ws")[1], user


async def test_other_tabs_get_every_move_in_order_and_the_mover_only_its_answers(
    make_user: Callable[..., Any], handled: Counter[str]
) -> None:
    game, key, _ = await database_sync_to_async(practice)(make_user)
    path = f"/ws/v1/games/{game.pk}/"
    mover, tab, tab2 = Socket(path, key), Socket(path, key), Socket(path, key)
    state = (await mover.open())["state"]
    await tab.open()
    await tab2.open()
    for ply in range(4):
        answer = await mover.ask({"type": "move", "move": state["legal_moves"][0], "ply": ply})
        assert (answer["cause"], answer["ply"]) == ("move", ply + 1), answer
        state = answer["state"]
    for other in (tab, tab2):
        pushed = [await other.recv() for _ in range(4)]
        assert [(p["cause"], p["ply"]) for p in pushed] == [("changed", n) for n in (1, 2, 3, 4)]
        assert pushed[-1]["state"]["position"] == state["position"]
        assert await other.quiet()
    assert await mover.quiet()
    assert handled[channel_of(0)] == 0  # the event never reached the mover's consumer
    assert handled[channel_of(1)] == handled[channel_of(2)] == 4
    for socket in (mover, tab, tab2):
        await socket.comm.disconnect()


def channel_of(opened: int) -> str:
    """The channel name of the game socket opened ``opened``-th (from 0)."""
    return str(_consumers[opened].channel_name)


_consumers: list[Any] = []


@pytest.fixture(autouse=True)
def remember_consumers(monkeypatch: pytest.MonkeyPatch) -> None:
    original = game_consumers.GameConsumer.connect

    async def connect(self: Any) -> None:
        _consumers.append(self)
        await original(self)

    monkeypatch.setattr(game_consumers.GameConsumer, "connect", connect)
    _consumers.clear()


async def test_a_rest_move_reaches_every_socket_of_the_game(
    make_user: Callable[..., Any],
) -> None:
    game, key, user = await database_sync_to_async(practice)(make_user)
    path = f"/ws/v1/games/{game.pk}/"
    tab, tab2 = Socket(path, key), Socket(path, key)
    state = (await tab.open())["state"]
    await tab2.open()

    def rest_move(ply: int, move: str) -> dict[str, Any]:
        client = APIClient()
        client.force_authenticate(user)
        r = client.post(f"/api/v1/games/{game.pk}/moves/", {"move": move, "ply": ply}, "json")
        assert r.status_code == 200, r.content
        return dict(r.json())

    for ply in range(2):
        state = await database_sync_to_async(rest_move)(ply, state["legal_moves"][0])
        for socket in (tab, tab2):
            pushed = await socket.recv()
            assert (pushed["cause"], pushed["ply"]) == ("changed", ply + 1)
    for socket in (tab, tab2):
        assert await socket.quiet()
        await socket.comm.disconnect()


async def test_a_racers_move_reaches_rivals_spectators_and_its_other_tabs(
    settings: Settings, handled: Counter[str]
) -> None:
    race, users, keys = await database_sync_to_async(_race)(settings)
    games = [await database_sync_to_async(game_of)(race, u) for u in users]
    moves = await database_sync_to_async(lambda: quiet_moves(race.deal, 2))()
    race_path = f"/ws/v1/races/{race.code}/"
    ann_game = Socket(f"/ws/v1/games/{games[0].pk}/", keys[0])
    ann_tab = Socket(f"/ws/v1/games/{games[0].pk}/", keys[0])
    bob_game = Socket(f"/ws/v1/games/{games[1].pk}/", keys[1])
    ann_race, bob_race, spectator = (
        Socket(race_path, keys[0]),
        Socket(race_path, keys[1]),
        Socket(race_path, None),
    )
    with at(starts(race) + timedelta(milliseconds=10)):
        for socket in (ann_game, ann_tab, bob_game, ann_race, bob_race, spectator):
            await socket.open()
        for ply, move in enumerate(moves):
            answer = await ann_game.ask({"type": "move", "move": move, "ply": ply})
            assert (answer["cause"], answer["ply"]) == ("move", ply + 1), answer
        for ply in (1, 2):
            pushed = await ann_tab.recv()
            assert (pushed["cause"], pushed["ply"]) == ("changed", ply)
        for socket in (ann_race, bob_race, spectator):
            progress = [await socket.recv() for _ in moves]
            assert [p["type"] for p in progress] == ["race.progress"] * 2
            assert [p["player"]["moves"] for p in progress] == [1, 2]
            assert {p["player"]["username"] for p in progress} == {"ann"}
        assert await ann_game.quiet()  # its answers only
        assert await bob_game.quiet()  # a rival's game socket shows its own game only
        assert handled[channel_of(0)] == 0  # ann's game socket, opened first
    for socket in (ann_game, ann_tab, bob_game, ann_race, bob_race, spectator):
        await socket.comm.disconnect()
