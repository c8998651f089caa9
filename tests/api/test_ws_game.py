"""ws/v1/games/<id>/: live play over a WebSocket, through the same services as REST."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client
from pytest_django import Settings
from rest_framework.test import APIClient

from accounts import services as account_services
from api import consumers
from api.consumers import game as game_consumers
from core import events as core_events
from games.models import Game
from games.play import move as play_move
from games.selectors import games as game_selectors
from games.services import games as game_services
from patience_site.asgi import application
from tests.helpers import token_headers

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("channel_layers"),
]

SEED = 1  # a Bristol deal whose opening has legal moves and a deal


# -- fixtures -------------------------------------------------------------------------------


@pytest.fixture
def player(make_user: Callable[..., Any]) -> Any:
    return make_user("ann")


@pytest.fixture
def rival(make_user: Callable[..., Any]) -> Any:
    return make_user("bob")


@pytest.fixture
def key(player: Any) -> str:
    return account_services.token_create(user=player, name="ws")[1]


@pytest.fixture
def game(player: Any) -> Game:
    return game_services.practice_game_start(user=player, variant="bristol", seed=SEED)


def session_headers(user: Any) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    name = django_settings.SESSION_COOKIE_NAME
    return [(b"cookie", f"{name}={cookie}".encode()), (b"origin", b"http://testserver")]


def illegal_move(state: dict[str, Any]) -> str:
    """A well-written tableau move that is not legal in this state."""
    legal = set(state["legal_moves"])
    for a in range(1, 9):
        for b in range(1, 9):
            if a != b and f"t{a}-t{b}" not in legal:
                return f"t{a}-t{b}"
    raise AssertionError("every tableau move is legal?")


class Socket:
    """A WebsocketCommunicator that speaks JSON and remembers the last state."""

    first: dict[str, Any]  # the frame it opened with, when a fixture keeps it

    def __init__(self, path: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        self.comm = WebsocketCommunicator(application, path, headers=headers or [])

    async def open(self) -> dict[str, Any]:
        connected, _ = await self.comm.connect()
        assert connected
        return await self.recv()

    async def recv(self, timeout: float = 3) -> dict[str, Any]:
        return json.loads(await self.comm.receive_from(timeout))

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        await self.comm.send_to(text_data=json.dumps(message))
        return await self.recv()

    async def close_code(self) -> int:
        """The code the server closed with (after accepting)."""
        connected, _ = await self.comm.connect()
        assert connected
        out = await self.comm.receive_output(3)
        assert out["type"] == "websocket.close", out
        return out["code"]

    async def quiet(self, timeout: float = 0.3) -> bool:
        return await self.comm.receive_nothing(timeout)

    async def close(self) -> None:
        await self.comm.disconnect()


def path(game: Game | int) -> str:
    return f"/ws/v1/games/{getattr(game, 'pk', game)}/"


@pytest_asyncio.fixture
async def sock(game: Game, key: str) -> Any:
    s = Socket(path(game), token_headers(key))
    first = await s.open()
    s.first = first
    yield s
    await s.close()


def rest_state(user: Any, game_id: int) -> dict[str, Any]:
    client = APIClient()
    client.force_authenticate(user)
    return client.get(f"/api/v1/games/{game_id}/").json()


def fresh(game_id: int) -> Game:
    return Game.objects.select_related("deal").get(pk=game_id)


def without_clock(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "elapsed_ms"}


# -- connecting -----------------------------------------------------------------------------


async def test_connect_sends_the_full_public_state_as_rest_renders_it(
    sock: Any, game: Game, player: Any
) -> None:
    first = sock.first
    assert first["type"] == "state"
    assert first["cause"] == "connect"
    assert first["ply"] == 0 == first["state"]["ply"]
    rest = await database_sync_to_async(rest_state)(player, game.pk)
    assert without_clock(first["state"]) == without_clock(rest)
    assert first["state"]["position"]["stock"] > 0  # a count, never the cards
    assert first["state"]["deal"] is None


async def test_session_cookie_authenticates(game: Game, player: Any) -> None:
    headers = await database_sync_to_async(session_headers)(player)
    s = Socket(path(game), headers)
    first = await s.open()
    assert first["type"] == "state" and first["state"]["id"] == game.pk
    await s.close()


async def test_token_header_authenticates_and_bearer_works_too(game: Game, key: str) -> None:
    for keyword in ("Token", "Bearer"):
        s = Socket(path(game), [(b"authorization", f"{keyword} {key}".encode())])
        assert (await s.open())["state"]["id"] == game.pk
        await s.close()


async def test_token_in_the_query_string_authenticates(game: Game, key: str) -> None:
    s = Socket(f"{path(game)}?token={key}")
    assert (await s.open())["state"]["id"] == game.pk
    await s.close()


async def test_token_use_is_recorded(game: Game, key: str) -> None:
    s = Socket(path(game), token_headers(key))
    await s.open()
    await s.close()
    token = await database_sync_to_async(lambda: game.player.api_tokens.get())()
    assert token.last_used_at is not None


async def test_no_credentials_closes_with_4401(game: Game) -> None:
    assert await Socket(path(game)).close_code() == consumers.CLOSE_UNAUTHENTICATED == 4401


@pytest.mark.parametrize("key_text", ["pt_not-a-real-token", ""])
async def test_unknown_token_closes_with_4401(game: Game, key_text: str) -> None:
    s = Socket(f"{path(game)}?token={key_text}")
    assert await s.close_code() == 4401


async def test_malformed_authorization_header_closes_with_4401(game: Game, key: str) -> None:
    s = Socket(path(game), [(b"authorization", f"Token {key} extra".encode())])
    assert await s.close_code() == 4401


async def test_revoked_token_closes_with_4401(game: Game, player: Any, key: str) -> None:
    def revoke() -> None:
        token = player.api_tokens.get()
        account_services.token_revoke(user=player, token_id=token.pk)

    await database_sync_to_async(revoke)()
    assert await Socket(path(game), token_headers(key)).close_code() == 4401


async def test_token_of_an_inactive_account_closes_with_4401(
    game: Game, player: Any, key: str
) -> None:
    await database_sync_to_async(
        lambda: get_user_model().objects.filter(pk=player.pk).update(is_active=False)
    )()
    assert await Socket(path(game), token_headers(key)).close_code() == 4401


async def test_a_bad_token_wins_over_a_good_session(game: Game, player: Any) -> None:
    headers = await database_sync_to_async(session_headers)(player)
    s = Socket(path(game), [*headers, (b"authorization", b"Token pt_wrong")])
    assert await s.close_code() == 4401


async def test_another_players_game_closes_with_4404_like_an_unknown_one(
    game: Game, rival: Any
) -> None:
    rival_key = await database_sync_to_async(
        lambda: account_services.token_create(user=rival, name="x")
    )()
    assert await Socket(path(game), token_headers(rival_key[1])).close_code() == 4404
    assert await Socket(path(game.pk + 1000), token_headers(rival_key[1])).close_code() == 4404


async def test_unknown_path_closes_with_4404(key: str) -> None:
    assert await Socket("/ws/v1/nothing/", token_headers(key)).close_code() == 4404


async def test_a_player_holds_a_bounded_number_of_game_sockets(
    game: Game, key: str, settings: Settings
) -> None:
    settings.WS_GAME_SOCKETS_PER_PLAYER = 2
    first, second = Socket(path(game), token_headers(key)), Socket(path(game), token_headers(key))
    await first.open()
    await second.open()
    assert await Socket(path(game), token_headers(key)).close_code() == 4429
    await first.close()
    # A closed socket frees its place, and refused ones took none.
    third = Socket(path(game), token_headers(key))
    assert (await third.open())["type"] == "state"
    assert await Socket(path(game), token_headers(key)).close_code() == 4429
    await second.close()
    await third.close()
    assert game_consumers._open_game_sockets[game.player_id] == 0


async def test_foreign_browser_origin_is_refused(game: Game, player: Any) -> None:
    headers = await database_sync_to_async(session_headers)(player)
    headers = [h for h in headers if h[0] != b"origin"] + [(b"origin", b"http://evil.example")]
    connected, _ = await WebsocketCommunicator(application, path(game), headers=headers).connect()
    assert not connected


# -- moves, undo, resign, resync -------------------------------------------------------------


async def test_move_answers_the_new_state_and_is_stored(sock: Any, game: Game, player: Any) -> None:
    move = sock.first["state"]["legal_moves"][0]
    answer = await sock.ask({"type": "move", "move": move, "ply": 0})
    assert answer["type"] == "state" and answer["cause"] == "move"
    assert answer["ply"] == 1 == answer["state"]["ply"]
    assert answer["duplicate"] is False
    g = await database_sync_to_async(fresh)(game.pk)
    assert g.ply == 1
    assert await database_sync_to_async(game_selectors.game_log)(g) == [move]
    assert await database_sync_to_async(game_selectors.game_verify)(g) is None
    rest = await database_sync_to_async(rest_state)(player, game.pk)
    assert without_clock(answer["state"]) == without_clock(rest)


async def test_resending_the_applied_move_is_a_duplicate_that_applies_nothing(
    sock: Any, game: Game
) -> None:
    move = sock.first["state"]["legal_moves"][0]
    await sock.ask({"type": "move", "move": move, "ply": 0})
    again = await sock.ask({"type": "move", "move": move, "ply": 0})
    assert again["type"] == "state"
    assert again["duplicate"] is True
    assert again["ply"] == 1
    assert (await database_sync_to_async(fresh)(game.pk)).ply == 1


async def test_undo_takes_back_a_move_and_counts_in_the_log(sock: Any, game: Game) -> None:
    move = sock.first["state"]["legal_moves"][0]
    await sock.ask({"type": "move", "move": move, "ply": 0})
    answer = await sock.ask({"type": "undo", "ply": 1})
    assert answer["type"] == "state" and answer["cause"] == "undo"
    assert answer["ply"] == 2
    assert answer["state"]["moves_on_board"] == 0
    assert answer["duplicate"] is False
    assert answer["state"]["position"] == sock.first["state"]["position"]
    g = await database_sync_to_async(fresh)(game.pk)
    assert await database_sync_to_async(game_selectors.game_log)(g) == [move, "undo"]
    assert await database_sync_to_async(game_selectors.game_verify)(g) is None


async def test_resign_ends_the_game_and_reveals_the_deal(sock: Any, game: Game) -> None:
    answer = await sock.ask({"type": "resign"})
    assert answer["type"] == "state" and answer["cause"] == "resign"
    assert answer["ply"] == 0
    assert answer["state"]["status"] == "resigned"
    assert answer["state"]["legal_moves"] == []
    assert answer["state"]["deal"]["seed"] == str(SEED)
    assert "duplicate" not in answer


async def test_resync_sends_the_current_state(sock: Any, game: Game, player: Any) -> None:
    move = sock.first["state"]["legal_moves"][0]
    await database_sync_to_async(play_move.apply_move)(
        game_id=game.pk, user=player, move=move, ply=0
    )
    # The push of that change may come first; a resync answers in any case.
    answer = await sock.ask({"type": "resync"})
    if answer["cause"] == "changed":
        answer = await sock.recv()
    assert answer["type"] == "state" and answer["cause"] == "resync"
    assert answer["ply"] == 1


# -- errors: the REST codes ----------------------------------------------------------------


async def test_a_ply_ahead_gives_bad_ply_and_the_current_ply(sock: Any) -> None:
    move = sock.first["state"]["legal_moves"][0]
    answer = await sock.ask({"type": "move", "move": move, "ply": 5})
    assert answer["type"] == "error" and answer["cause"] == "move"
    assert answer["error"]["code"] == "bad_ply"
    assert answer["ply"] == 0 == answer["error"]["details"]["ply"]
    assert set(answer["error"]) == {"code", "message", "details"}


async def test_a_ply_ahead_on_undo(sock: Any) -> None:
    answer = await sock.ask({"type": "undo", "ply": 3})
    assert answer["error"]["code"] == "bad_ply" and answer["cause"] == "undo"


async def test_a_stale_ply_gives_stale_ply_and_the_current_ply(sock: Any) -> None:
    move = sock.first["state"]["legal_moves"][0]
    assert (await sock.ask({"type": "move", "move": move, "ply": 0}))["type"] == "state"
    state = await sock.ask({"type": "resync"})
    other = next(m for m in state["state"]["legal_moves"] if m != move)
    answer = await sock.ask({"type": "move", "move": other, "ply": 0})
    assert answer["error"]["code"] == "stale_ply"
    assert answer["ply"] == 1 == answer["error"]["details"]["ply"]


async def test_illegal_move_is_refused_with_the_engines_code(sock: Any, game: Game) -> None:
    answer = await sock.ask({"type": "move", "move": illegal_move(sock.first["state"]), "ply": 0})
    assert answer["type"] == "error"
    assert answer["error"]["code"] == "illegal_move"
    assert answer["ply"] == 0
    assert (await database_sync_to_async(fresh)(game.pk)).ply == 0


async def test_bad_notation(sock: Any) -> None:
    answer = await sock.ask({"type": "move", "move": "zz-99", "ply": 0})
    assert answer["error"]["code"] == "bad_notation"
    assert answer["ply"] == 0


async def test_undo_with_nothing_to_undo(sock: Any) -> None:
    answer = await sock.ask({"type": "undo", "ply": 0})
    assert answer["error"]["code"] == "undo_not_allowed"


async def test_moves_undo_and_resign_of_a_finished_game(sock: Any) -> None:
    move = sock.first["state"]["legal_moves"][0]
    await sock.ask({"type": "resign"})
    for request in (
        {"type": "move", "move": move, "ply": 0},
        {"type": "undo", "ply": 0},
        {"type": "resign"},
    ):
        answer = await sock.ask(request)
        assert answer["type"] == "error", request
        assert answer["error"]["code"] == "game_finished", request
        assert answer["ply"] == 0


async def test_errors_carry_the_same_code_and_message_as_rest(
    sock: Any, game: Game, player: Any
) -> None:
    move = illegal_move(sock.first["state"])
    answer = await sock.ask({"type": "move", "move": move, "ply": 0})

    def post() -> Any:
        client = APIClient()
        client.force_authenticate(player)
        return client.post(f"/api/v1/games/{game.pk}/moves/", {"move": move, "ply": 0}, "json")

    response = await database_sync_to_async(post)()
    assert response.status_code == 400
    assert response.json() == {"error": answer["error"]}


async def test_a_game_deleted_meanwhile_answers_not_found(sock: Any, game: Game) -> None:
    await database_sync_to_async(lambda: Game.objects.filter(pk=game.pk).delete())()
    answer = await sock.ask({"type": "resync"})
    assert answer["type"] == "error" and answer["error"]["code"] == "not_found"


BAD_MESSAGES = [
    "not json",
    "[1, 2]",
    "42",
    json.dumps({"move": "t1-t2", "ply": 0}),  # no type
    json.dumps({"type": "teleport"}),
    json.dumps({"type": 3}),
    json.dumps({"type": "move", "ply": 0}),
    json.dumps({"type": "move", "move": 12, "ply": 0}),
    json.dumps({"type": "move", "move": "", "ply": 0}),
    json.dumps({"type": "move", "move": "t" * 21, "ply": 0}),
    json.dumps({"type": "move", "move": "t1-t2"}),
    json.dumps({"type": "move", "move": "t1-t2", "ply": "0"}),
    json.dumps({"type": "move", "move": "t1-t2", "ply": -1}),
    json.dumps({"type": "move", "move": "t1-t2", "ply": True}),
    json.dumps({"type": "move", "move": "t1-t2", "ply": 1.0}),
    json.dumps({"type": "undo"}),
    json.dumps({"type": "undo", "ply": None}),
    "x" * (consumers.MAX_FRAME + 1),
]


async def test_bad_messages_get_bad_message_and_the_socket_stays_open(
    sock: Any, game: Game
) -> None:
    for text in BAD_MESSAGES:
        await sock.comm.send_to(text_data=text)
        answer = await sock.recv()
        assert answer["type"] == "error", text
        assert answer["error"]["code"] == "bad_message", text
        assert answer["ply"] == 0
        assert set(answer["error"]) == {"code", "message", "details"}
        # Still open and usable.
        again = await sock.ask({"type": "resync"})
        assert again["type"] == "state"
    assert (await database_sync_to_async(fresh)(game.pk)).ply == 0


async def test_binary_frames_get_bad_message(sock: Any) -> None:
    await sock.comm.send_to(bytes_data=b'{"type": "resync"}')
    answer = await sock.recv()
    assert answer["error"]["code"] == "bad_message"


# -- changes from elsewhere -----------------------------------------------------------------


async def test_a_move_in_another_tab_is_pushed(game: Game, key: str, player: Any) -> None:
    one, two = Socket(path(game), token_headers(key)), Socket(path(game), token_headers(key))
    first = await one.open()
    await two.open()
    move = first["state"]["legal_moves"][0]
    answer = await one.ask({"type": "move", "move": move, "ply": 0})
    assert answer["cause"] == "move"
    pushed = await two.recv()
    assert pushed["type"] == "state" and pushed["cause"] == "changed"
    assert pushed["ply"] == 1
    assert without_clock(pushed["state"]) == without_clock(answer["state"])
    # The mover is not told twice about its own move.
    assert await one.quiet()
    await one.close()
    await two.close()


async def test_a_move_in_the_tab_opened_later_reaches_the_first(game: Game, key: str) -> None:
    one, two = Socket(path(game), token_headers(key)), Socket(path(game), token_headers(key))
    first = await one.open()
    await two.open()
    move = first["state"]["legal_moves"][0]
    answer = await two.ask({"type": "move", "move": move, "ply": 0})
    assert (answer["cause"], answer["ply"]) == ("move", 1)
    pushed = await one.recv()
    assert (pushed["cause"], pushed["ply"]) == ("changed", 1)
    assert await two.quiet()
    await one.close()
    await two.close()


@pytest.fixture
def sent_events(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(group, type) of every event the services send from now on."""

    sent: list[tuple[str, str]] = []
    send = core_events.send

    def spy(group: str, message: dict[str, Any]) -> None:
        sent.append((group, message["type"]))
        send(group, message)

    monkeypatch.setattr(core_events, "send", spy)
    return sent


async def test_a_move_emits_one_event_that_skips_its_own_socket(
    sock: Any, game: Game, sent_events: list[tuple[str, str]]
) -> None:
    """The mover's socket has the answer: the event of its move names it as its origin
    and goes to the others only; another socket forwards it, with no read of the game."""
    move = sock.first["state"]["legal_moves"][0]
    answer = await sock.ask({"type": "move", "move": move, "ply": 0})
    assert (answer["type"], answer["cause"], answer["ply"]) == ("state", "move", 1)
    assert await sock.quiet()
    assert sent_events == [(f"game.{game.pk}", "game.moved")]
    other = Socket(path(game), sock.comm.scope["headers"])
    await other.open()
    for ply in (1, 2):
        sent_events.clear()
        move = answer["state"]["legal_moves"][0]
        answer = await sock.ask({"type": "move", "move": move, "ply": ply})
        assert answer["ply"] == ply + 1
        pushed = await other.recv()
        assert (pushed["cause"], pushed["ply"]) == ("changed", ply + 1)
        assert without_clock(pushed["state"]) == without_clock(answer["state"])
        assert sent_events == [(f"game.{game.pk}", "game.moved")]
    assert await sock.quiet() and await other.quiet()
    await other.close()


def moved_message(game_id: int, ply: int, state: dict[str, Any]) -> dict[str, Any]:
    """A ``game.moved`` as the channel layer carries it (``api.events``' wire form)."""
    return {
        "type": "game.moved",
        "game_id": game_id,
        "ply": ply,
        "status": "playing",
        "state": state,
        "race": None,
        "progress": None,
    }


async def test_a_pushed_state_is_the_events_own(sock: Any, game: Game) -> None:
    """The socket forwards the event's state as it is: it reads nothing to show it."""
    from channels.layers import get_channel_layer

    from games.events import game_group

    layer = get_channel_layer()
    assert layer is not None
    state = {**sock.first["state"], "ply": 5, "score": 9}
    await layer.group_send(game_group(game.pk), moved_message(game.pk, 5, state))
    pushed = await sock.recv()
    assert pushed == {"type": "state", "cause": "changed", "ply": 5, "state": state}


async def test_a_move_and_a_resignation_through_rest_are_pushed(
    sock: Any, game: Game, player: Any
) -> None:
    move = sock.first["state"]["legal_moves"][0]

    def rest(url: str, data: dict[str, Any] | None = None) -> int:
        client = APIClient()
        client.force_authenticate(player)
        return client.post(url, data or {}, "json").status_code

    assert (
        await database_sync_to_async(rest)(
            f"/api/v1/games/{game.pk}/moves/", {"move": move, "ply": 0}
        )
        == 200
    )
    pushed = await sock.recv()
    assert (pushed["cause"], pushed["ply"]) == ("changed", 1)
    # A resignation keeps the ply but changes the status: pushed too.
    assert await database_sync_to_async(rest)(f"/api/v1/games/{game.pk}/resign/") == 200
    pushed = await sock.recv()
    assert pushed["cause"] == "changed"
    assert (pushed["ply"], pushed["state"]["status"]) == (1, "resigned")
    assert await sock.quiet()


async def test_an_event_already_shown_is_not_sent_again(sock: Any, game: Game) -> None:
    from channels.layers import get_channel_layer

    from games.events import game_group

    layer = get_channel_layer()
    assert layer is not None
    state = sock.first["state"]
    await layer.group_send(game_group(game.pk), moved_message(game.pk, 0, state))
    # Another game's event (a race's group carries the rivals' games): not this socket's.
    await layer.group_send(game_group(game.pk), moved_message(game.pk + 1, 3, state))
    assert await sock.quiet()


async def test_a_rolled_back_move_sends_no_event(sock: Any, game: Game, player: Any) -> None:
    from django.db import transaction

    move = sock.first["state"]["legal_moves"][0]

    def move_then_fail() -> None:
        with transaction.atomic():
            play_move.apply_move(game_id=game.pk, user=player, move=move, ply=0)
            raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        await database_sync_to_async(move_then_fail)()
    assert await sock.quiet(0.5)
    assert (await database_sync_to_async(fresh)(game.pk)).ply == 0


async def test_a_whole_game_over_the_socket_stays_consistent(sock: Any, game: Game) -> None:
    """Random legal moves and undos to the end (or 150 entries), then the log replays."""
    import random

    rng = random.Random(7)
    state = sock.first["state"]
    ply = 0
    while state["status"] == "playing" and ply < 150:
        if state["can_undo"] and rng.random() < 0.1:
            answer = await sock.ask({"type": "undo", "ply": ply})
        else:
            answer = await sock.ask(
                {"type": "move", "move": rng.choice(state["legal_moves"]), "ply": ply}
            )
        assert answer["type"] == "state", answer
        assert answer["ply"] == ply + 1
        state, ply = answer["state"], answer["ply"]
    g = await database_sync_to_async(fresh)(game.pk)
    assert g.ply == ply
    assert await database_sync_to_async(game_selectors.game_verify)(g) is None


# -- a ranked daily at its day's end --------------------------------------------------------


async def test_a_ranked_dailys_socket_ends_it_at_the_days_end(
    player: Any, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The socket of a ranked daily wakes at the day's end and stores the game's end
    (expired, with its result), as the hourly job would: no read has to."""
    from core import clock
    from games.models import Result
    from games.services import dailies as daily_services
    from tests.daily_fixtures import DAY, FakeClock

    fake = FakeClock(clock.day_end(DAY) - timedelta(seconds=0.3))
    monkeypatch.setattr(clock, "now", fake)
    monkeypatch.setattr(clock, "shared_now", fake)

    @database_sync_to_async
    def start() -> Game:
        daily_services.dailies_create(first=DAY, days=1)
        game, _ = daily_services.daily_game_start(user=player, variant="bristol", day=DAY)
        return game

    game = await start()
    s = Socket(path(game), token_headers(key))
    assert (await s.open())["state"]["status"] == "playing"
    fake.advance(seconds=1)  # the day is over; the socket's timer is due
    ended = await s.recv(timeout=5)
    assert (ended["cause"], ended["state"]["status"]) == ("changed", "expired")
    stored = await database_sync_to_async(fresh)(game.pk)
    assert stored.status == "expired" and stored.finished_at == clock.day_end(DAY)
    assert await database_sync_to_async(Result.objects.filter(game=stored).exists)()
    await s.close()


async def test_the_games_analysis_ready_is_forwarded(sock: Any, game: Game) -> None:
    from channels.layers import get_channel_layer

    from games.event_types import AnalysisReady
    from games.events import game_group

    layer = get_channel_layer()
    assert layer is not None
    await layer.group_send(game_group(game.pk), AnalysisReady(game_id=game.pk).message)
    assert await sock.recv() == {"type": "analysis.ready", "game_id": game.pk}
    await layer.group_send(game_group(game.pk), AnalysisReady(game_id=game.pk + 1).message)
    assert await sock.quiet()
