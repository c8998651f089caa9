"""ws/v1/daily/<variant>/<date>/: a day's board, live, with events only after commit."""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.db import transaction
from pytest_django import Settings

from accounts import services as account_services
from api import consumers
from core import clock
from devtools.accounts import PASSWORD
from games import boards
from games.models import Game
from games.play import finish
from games.services import dailies as daily_services
from games.services import games as game_services
from patience_site.asgi import application
from tests.helpers import token_headers

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _today_boards(channel_layers: None) -> None:
    # The Redis mirror of a board is keyed by deal id, which other test databases (earlier
    # runs) share: start today's boards from mirrors rebuilt from this database.
    _today[:] = [clock.today()]  # read here: the clock is the database's, out of async code
    for deal in daily_services.dailies_create(first=_today[0], days=1):
        boards.board_drop(deal.pk)


def make_player(name: str) -> Any:
    return get_user_model().objects.create_user(username=name, password=PASSWORD)


_today: list[date] = []


def today() -> str:
    """Today (on the shared clock), as the fixture read it."""
    return _today[0].isoformat()


def board_path(variant: str = "bristol", day: str | None = None, query: str = "") -> str:
    return f"/ws/v1/daily/{variant}/{day or today()}/{query}"


@database_sync_to_async
def finish_ranked(name: str, variant: str = "bristol") -> Game:
    """A new player plays today's daily (ranked) and resigns it: one result."""
    user = make_player(name)
    game, created = daily_services.daily_game_start(user=user, variant=variant, day=clock.today())
    assert created and game.ranked
    return finish.resign(game_id=game.pk, user=user).game


async def open_board(path: str, headers: list | None = None) -> tuple[WebsocketCommunicator, dict]:
    comm = WebsocketCommunicator(application, path, headers=headers or [])
    connected, _ = await comm.connect()
    assert connected
    return comm, json.loads(await comm.receive_from(3))


async def close_code(path: str) -> int:
    comm = WebsocketCommunicator(application, path)
    connected, _ = await comm.connect()
    assert connected
    out = await comm.receive_output(3)
    assert out["type"] == "websocket.close"
    return out["code"]


async def recv(comm: WebsocketCommunicator) -> dict[str, Any]:
    return json.loads(await comm.receive_from(3))


async def test_anyone_gets_the_top_of_the_board_on_connect() -> None:
    await finish_ranked("early")
    comm, first = await open_board(board_path())
    assert first["type"] == "board"
    assert (first["variant"], first["date"]) == ("bristol", today())
    board = first["board"]
    assert board["total"] == 1
    assert [r["player"] for r in board["results"]] == ["early"]
    assert board["results"][0]["rank"] == 1
    assert board["me"] is None
    await comm.disconnect()


async def test_the_board_is_cut_at_the_limit() -> None:
    for name in ("a1", "a2", "a3"):
        await finish_ranked(name)
    comm, first = await open_board(board_path(query="?limit=2"))
    assert first["board"]["total"] == 3
    assert len(first["board"]["results"]) == 2
    # The top only, without page links: a client pages over REST.
    assert first["board"]["next"] is None and first["board"]["previous"] is None
    await comm.disconnect()


async def test_a_ranked_result_is_sent_after_commit_with_its_rank() -> None:
    comm, first = await open_board(board_path())
    assert first["board"]["results"] == []
    game = await finish_ranked("carol")
    event = await recv(comm)
    assert event["type"] == "board.result"
    assert (event["variant"], event["date"]) == ("bristol", today())
    result = event["result"]
    assert set(result) == {
        "rank",
        "result_id",
        "player",
        "won",
        "cards_home",
        "moves",
        "time_ms",
        "finished_at",
    }
    assert result["player"] == "carol"
    assert result["rank"] == 1
    assert result["won"] is False
    assert result["cards_home"] == game.score
    assert result["moves"] == 0
    second = await finish_ranked("dave")
    event = await recv(comm)
    assert event["result"]["player"] == "dave"
    # Same cards home and moves: the earlier finish ranks first (or the quicker player).
    assert event["result"]["rank"] in (1, 2)
    assert event["result"]["result_id"] == await database_sync_to_async(lambda: second.result.pk)()
    assert await comm.receive_nothing(0.3)
    await comm.disconnect()


async def test_a_rolled_back_result_sends_no_event() -> None:
    comm, _ = await open_board(board_path())

    def resign_then_fail() -> None:
        user = make_player("erin")
        game, _ = daily_services.daily_game_start(user=user, variant="bristol", day=clock.today())
        with transaction.atomic():
            finish.resign(game_id=game.pk, user=user)
            raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        await database_sync_to_async(resign_then_fail)()
    assert await comm.receive_nothing(0.5)
    await comm.send_to(text_data=json.dumps({"type": "resync"}))
    again = await recv(comm)
    assert again["type"] == "board" and again["board"]["total"] == 0
    await comm.disconnect()


async def test_practice_games_and_other_boards_send_nothing() -> None:
    comm, _ = await open_board(board_path("bristol"))

    def practice_and_other_variant() -> None:
        user = make_player("fred")
        game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
        finish.resign(game_id=game.pk, user=user)

    await database_sync_to_async(practice_and_other_variant)()
    await finish_ranked("gina", variant="belvedere")
    assert await comm.receive_nothing(0.5)
    await comm.disconnect()


async def test_a_signed_in_listener_sees_its_own_line() -> None:
    await finish_ranked("hank")

    def token() -> str:
        user = get_user_model().objects.get(username="hank")
        return account_services.token_create(user=user, name="ws")[1]

    key = await database_sync_to_async(token)()
    comm, first = await open_board(board_path(), token_headers(key))
    assert first["board"]["me"]["player"] == "hank"
    await comm.disconnect()


async def test_a_program_follows_todays_board_with_only_a_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``today`` in the path, a token in the header: the board, then each result live."""
    now = clock.now()
    monkeypatch.setattr(clock, "now", lambda: now)  # "today" must not turn over meanwhile
    await finish_ranked("ivy")

    def token() -> str:
        user = get_user_model().objects.get(username="ivy")
        return account_services.token_create(user=user, name="bot")[1]

    key = await database_sync_to_async(token)()
    comm, first = await open_board(board_path(day="today"), token_headers(key))
    assert first["type"] == "board" and first["date"] == today()
    assert first["board"]["me"]["player"] == "ivy" and first["board"]["total"] == 1
    await finish_ranked("jay")
    event = await recv(comm)
    assert event["type"] == "board.result" and event["date"] == today()
    assert event["result"]["player"] == "jay"
    await comm.disconnect()


async def test_resync_and_bad_messages() -> None:
    comm, first = await open_board(board_path())
    await comm.send_to(text_data=json.dumps({"type": "resync"}))
    assert await recv(comm) == first
    for text in ("nope", json.dumps({"type": "move"}), json.dumps([1])):
        await comm.send_to(text_data=text)
        answer = await recv(comm)
        assert answer["type"] == "error"
        assert answer["error"]["code"] == "bad_message"
    await comm.disconnect()


async def test_close_codes_for_bad_boards() -> None:
    tomorrow = (_today[0] + timedelta(days=1)).isoformat()
    assert await close_code(board_path("no-such-variant")) == consumers.CLOSE_NOT_FOUND == 4404
    assert await close_code(board_path(day=tomorrow)) == 4404
    assert await close_code(board_path(day="2024-13-01")) == consumers.CLOSE_BAD_REQUEST == 4400
    assert await close_code(board_path(day="yesterday")) == 4400
    assert await close_code(board_path(query="?limit=0")) == 4400
    assert await close_code(board_path(query="?limit=x")) == 4400


async def test_a_past_days_board_can_be_watched() -> None:
    yesterday = (_today[0] - timedelta(days=1)).isoformat()
    comm, first = await open_board(board_path(day=yesterday))
    assert first["type"] == "board" and first["date"] == yesterday
    await comm.disconnect()


async def test_channel_layer_is_redis_exactly_when_redis_url_is_set(settings: Settings) -> None:
    """Several processes share groups only through Redis; one process may do without."""
    from core.fanout import FanoutChannelLayer

    layer = get_channel_layer()
    assert isinstance(layer, FanoutChannelLayer)
    assert layer.url == (settings.REDIS_URL or None)
