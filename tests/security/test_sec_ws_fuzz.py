"""Hostile frames on both sockets: a clear error with a code, and the socket stays usable.

Every field of every request type gets every JSON type; then frames that are not
JSON, not objects, nested too deep, too large, binary, of unknown types; then
floods. Each frame gets exactly one answer (``state``, ``hint`` or an error
envelope with a code), nothing in the game changes unless the request was a
valid one, and afterwards a legal move still works. A flood is answered
``throttled`` with a retry hint; a socket that ignores that is closed with 4429.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from pytest_django import Settings

from accounts import services as account_services
from api import consumers
from core import clock
from devtools.accounts import PASSWORD
from games.models import Game
from games.selectors import games as game_selectors
from games.services import dailies as daily_services
from games.services import games as game_services
from patience_site.asgi import application
from tests.helpers import token_headers
from tests.security.helpers import Socket, assert_envelope

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("channel_layers"),
]

SEED = 1  # a Bristol deal with legal moves and a deal at the start

#: A value of every JSON type, and some edge cases of each.
VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    10**30,
    "",
    "t1-t2",
    "x" * 30,
    "\u0000",
    [],
    ["deal"],
    {},
    {"move": "deal"},
]
#: Codes a bad request may get (bad_message for its shape, the services' codes for the rest).
REFUSALS = {
    "bad_message",
    "bad_notation",
    "illegal_move",
    "stale_ply",
    "bad_ply",
    "undo_not_allowed",
    "game_finished",
}


@pytest.fixture(autouse=True)
def _roomy_limits(settings: Any) -> None:
    """These tests send hundreds of frames quickly; the flood tests set their own limits."""
    settings.WS_MESSAGE_BURST = 100_000
    settings.HINT_SOLVER_NODES = 500  # a hint is a (short) solver run


@pytest.fixture
def player() -> Any:
    return get_user_model().objects.create_user(username="ann", password=PASSWORD)


@pytest.fixture
def key(player: Any) -> str:
    return account_services.token_create(user=player, name="ws")[1]


@pytest.fixture
def game(player: Any) -> Game:
    return game_services.practice_game_start(user=player, variant="bristol", seed=SEED)


@pytest_asyncio.fixture
async def sock(game: Game, key: str) -> Any:
    s = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    s.first = await s.open()
    yield s
    await s.close()


@database_sync_to_async
def stored(game_id: int) -> tuple[int, str, list[str]]:
    g = Game.objects.select_related("deal").get(pk=game_id)
    assert game_selectors.game_verify(g) is None
    return g.ply, g.status, game_selectors.game_log(g)


def check_answer(answer: dict[str, Any], sent: Any) -> None:
    """One answer of the game socket: a state, a hint or an error envelope with a code."""
    assert answer["type"] in ("state", "hint", "error"), (sent, answer)
    if answer["type"] == "error":
        assert set(answer) == {"type", "cause", "ply", "error"}, (sent, answer)
        error = assert_envelope({"error": answer["error"]})
        assert error["code"] in REFUSALS, (sent, answer)
        assert answer["cause"] in ("message", *consumers.GameConsumer.REQUESTS), answer


async def still_usable(sock: Socket, game_id: int) -> None:
    """A resync answers the current state, and a legal move is applied."""
    state = await sock.ask({"type": "resync"})
    assert state["type"] == "state" and state["cause"] == "resync", state
    ply = state["ply"]
    move = state["state"]["legal_moves"][0]
    answer = await sock.ask({"type": "move", "move": move, "ply": ply})
    assert answer["type"] == "state" and answer["ply"] == ply + 1, answer
    assert (await stored(game_id))[0] == ply + 1


# -- wrong types for every field ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["move", "undo", "resync", "hint"])
async def test_every_field_with_every_type_gets_one_clear_answer(
    sock: Any, game: Game, kind: str
) -> None:
    valids: dict[str, dict[str, Any]] = {
        "move": {"type": "move", "move": "deal", "ply": 0},
        "undo": {"type": "undo", "ply": 0},
        "resync": {"type": "resync"},
        "hint": {"type": "hint"},
    }
    valid = valids[kind]
    sent = 0
    for field in ("type", "move", "ply"):
        for value in VALUES:
            ply = (await stored(game.pk))[0]
            message = {**valid, "ply": ply} if "ply" in valid else dict(valid)
            message[field] = value
            answer = await sock.ask(message)
            sent += 1
            check_answer(answer, message)
            if field == "type" or (field in valid and answer["type"] == "error"):
                assert answer["type"] == "error", (message, answer)
            if answer["type"] == "error":
                assert (await stored(game.pk))[0] == ply, message  # nothing applied
    assert sent == 3 * len(VALUES)
    assert (await stored(game.pk))[1] == "playing"
    await still_usable(sock, game.pk)


async def test_the_answers_to_bad_fields_name_the_field(sock: Any) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"type": "move", "move": 12, "ply": 0}, "'move'"),
        ({"type": "move", "move": "deal", "ply": "0"}, "'ply'"),
        ({"type": "move", "move": "deal", "ply": -1}, "'ply'"),
        ({"type": "undo", "ply": None}, "'ply'"),
        ({"type": ["move"]}, "'type'"),
    ]
    for message, named in cases:
        answer = await sock.ask(message)
        assert answer["error"]["code"] == "bad_message", message
        assert named in answer["error"]["message"], (message, answer)
        assert answer["cause"] in ("message", message["type"]) or named == "'type'"


# -- frames that are not requests ----------------------------------------------------------------


def garbage() -> dict[str, str]:
    return {
        "not json": "not json",
        "truncated": '{"type": "move", ',
        "array": '["move", "deal", 0]',
        "number": "42",
        "string": '"resync"',
        "null": "null",
        "nested arrays": "[" * (consumers.MAX_FRAME - 1),
        "nested objects": '{"a":' * 800,
        "long number": '{"type": "undo", "ply": 1' + "0" * 4300 + "}",
        "nan": '{"type": "undo", "ply": NaN}',
        "lone surrogate": '{"type": "move", "move": "\\ud800", "ply": 0}',
        "duplicate keys": '{"type": "resync", "type": "teleport"}',
        "no type": '{"move": "deal", "ply": 0}',
        "unknown type": '{"type": "teleport"}',
        "type case": '{"type": "MOVE", "move": "deal", "ply": 0}',
        "just over the limit": "x" * (consumers.MAX_FRAME + 1),
        "a megabyte": '{"type": "resync", "pad": "' + "x" * 1_000_000 + '"}',
    }


GARBAGE = garbage()


async def test_frames_that_are_not_requests_get_bad_message_and_change_nothing(
    sock: Any, game: Game
) -> None:
    for name, text in GARBAGE.items():
        await sock.send_text(text)
        answer = await sock.recv()
        assert answer["type"] == "error", name
        assert answer["error"]["code"] == "bad_message", (name, answer)
        assert answer["ply"] == 0, (name, answer)
        assert answer["cause"] in ("message", "undo", "move"), (name, answer)
        assert_envelope({"error": answer["error"]})
    assert await sock.quiet()
    assert (await stored(game.pk))[0] == 0
    await still_usable(sock, game.pk)


async def test_binary_frames_get_bad_message_and_the_socket_stays_usable(
    sock: Any, game: Game
) -> None:
    for data in (b'{"type": "resync"}', b"\x00\xff" * 100, b"x" * 100_000):
        await sock.comm.send_to(bytes_data=data)
        answer = await sock.recv()
        assert answer["error"]["code"] == "bad_message"
        assert "text" in answer["error"]["message"]
    await still_usable(sock, game.pk)


async def test_oversized_frames_are_refused_unread(sock: Any, game: Game) -> None:
    """A frame over MAX_FRAME characters is not parsed, even if it is a valid request."""
    move = sock.first["state"]["legal_moves"][0]
    padded = json.dumps({"type": "move", "move": move, "ply": 0, "pad": "x" * consumers.MAX_FRAME})
    await sock.send_text(padded)
    answer = await sock.recv()
    assert answer["error"]["code"] == "bad_message"
    assert str(consumers.MAX_FRAME) in answer["error"]["message"]
    assert (await stored(game.pk))[0] == 0
    await still_usable(sock, game.pk)


async def test_a_frame_at_the_limit_is_read(sock: Any, game: Game) -> None:
    move = sock.first["state"]["legal_moves"][0]
    message = {"type": "move", "move": move, "ply": 0, "pad": ""}
    message["pad"] = "x" * (consumers.MAX_FRAME - len(json.dumps(message)))
    text = json.dumps(message)
    assert len(text) == consumers.MAX_FRAME
    await sock.send_text(text)
    answer = await sock.recv()
    assert answer["type"] == "state" and answer["ply"] == 1


async def test_unknown_extra_fields_are_ignored(sock: Any, game: Game) -> None:
    move = sock.first["state"]["legal_moves"][0]
    answer = await sock.ask({"type": "move", "move": move, "ply": 0, "admin": True, "ply2": 9})
    assert answer["type"] == "state" and answer["ply"] == 1


async def test_frames_sent_before_the_first_answer_are_all_answered_in_order(
    game: Game, key: str
) -> None:
    """Pipelined requests: one answer each, in the order sent."""
    s = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    first = await s.open()
    move = first["state"]["legal_moves"][0]
    texts = ['{"type": "resync"}', "nope", json.dumps({"type": "move", "move": move, "ply": 0})]
    for text in texts * 3:
        await s.send_text(text)
    answers = [await s.recv() for _ in range(9)]
    await s.close()
    kinds = [(a["type"], a["cause"]) for a in answers]
    assert kinds[:3] == [("state", "resync"), ("error", "message"), ("state", "move")]
    assert kinds[3:5] == [("state", "resync"), ("error", "message")]
    assert answers[5]["duplicate"] is True  # the same move at ply 0 again: a retry
    assert (await stored(game.pk))[0] == 1


# -- the board socket ----------------------------------------------------------------------------


@pytest.fixture
def today() -> str:
    daily_services.dailies_create(first=clock.today(), days=1)
    return clock.today().isoformat()


async def test_the_board_socket_answers_garbage_with_bad_message_and_stays_usable(
    today: str,
) -> None:
    s = Socket(f"/ws/v1/daily/bristol/{today}/")
    first = await s.open()
    assert first["type"] == "board"
    for name, text in GARBAGE.items():
        await s.send_text(text)
        answer = await s.recv()
        assert answer["type"] == "error", name
        assert answer["error"]["code"] == "bad_message", (name, answer)
    for value in VALUES:
        answer = await s.ask({"type": value})
        assert answer["error"]["code"] == "bad_message", value
    await s.comm.send_to(bytes_data=b"\x00")
    assert (await s.recv())["error"]["code"] == "bad_message"
    again = await s.ask({"type": "resync"})
    assert again["type"] == "board"
    await s.close()


@pytest.mark.parametrize(
    "query",
    [
        "?limit=0",
        "?limit=101",
        "?limit=-1",
        "?limit=abc",
        "?limit=",
        "?limit=1e3",
        "?limit=%31",
        "?limit=" + "9" * 5000,
    ],
)
async def test_bad_board_limits_close_with_4400(today: str, query: str) -> None:
    assert await Socket(f"/ws/v1/daily/bristol/{today}/{query}").close_code() == 4400


@pytest.mark.parametrize("raw", [b"limit=\xb2", b"limit=\xb9", b"limit=\xff", b"limit=\x00"])
async def test_raw_bytes_in_the_board_query_close_with_4400(today: str, raw: bytes) -> None:
    """``"²".isdigit()`` is true but ``int("²")`` fails: the consumer must not crash."""
    comm = WebsocketCommunicator(application, f"/ws/v1/daily/bristol/{today}/")
    comm.scope["query_string"] = raw
    connected, _ = await comm.connect()
    assert connected
    out = await comm.receive_output(5)
    assert out == {"type": "websocket.close", "code": 4400, "reason": out.get("reason", "")}


@pytest.mark.parametrize(
    "path",
    [
        "/ws/v1/daily/bristol/2026-02-30/",
        "/ws/v1/daily/bristol/not-a-day/",
        "/ws/v1/daily/bristol/" + "9" * 300 + "/",
    ],
)
async def test_bad_board_days_close_with_4400(path: str) -> None:
    assert await Socket(path).close_code() == 4400


@pytest.mark.parametrize(
    "path",
    [
        "/ws/v1/daily/klondike/2026-01-01/",
        "/ws/v1/daily/bristol/2999-01-01/",
        "/ws/v1/games/99999999999999999999999/",
        "/ws/v1/games/abc/",
        "/ws/v1/games/1/../../admin/",
        "/ws/",
    ],
)
async def test_unknown_socket_paths_close_with_4404(path: str, player: Any) -> None:
    key = (await database_sync_to_async(account_services.token_create)(user=player, name="x"))[1]
    assert await Socket(path, token_headers(key)).close_code() == 4404


# -- floods ------------------------------------------------------------------------------------


async def test_a_flood_is_throttled_with_a_retry_hint_and_the_socket_recovers(
    settings: Settings, game: Game, key: str
) -> None:
    settings.WS_MESSAGE_BURST = 10
    settings.WS_MESSAGE_RATE = 2.0  # slow refills: a loaded machine gives back few frames
    s = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    await s.open()
    for _ in range(18):  # the burst of 10, then 8 refused (a 9th in a row would hang up)
        await s.send_text('{"type": "resync"}')
    answers = [await s.recv() for _ in range(18)]
    throttled = [a for a in answers if a["type"] == "error"]
    served = [a for a in answers if a["type"] == "state"]
    assert len(served) >= 10 and len(throttled) >= 5, [a["type"] for a in answers]
    for a in throttled:
        assert a["error"]["code"] == "throttled"
        assert a["cause"] == "message" and a["ply"] == 0
        assert 0 < a["error"]["details"]["retry_after"] <= 1 / settings.WS_MESSAGE_RATE + 0.001
        assert "wait" in a["error"]["message"]
    # After the wait it was told, a frame is read again.
    await asyncio.sleep(throttled[-1]["error"]["details"]["retry_after"] + 0.05)
    assert (await s.ask({"type": "resync"}))["type"] == "state"
    settings.WS_MESSAGE_RATE = 100.0
    await asyncio.sleep(0.05)
    await still_usable(s, game.pk)
    await s.close()


async def test_garbage_counts_against_the_budget_too(
    settings: Settings, game: Game, key: str
) -> None:
    settings.WS_MESSAGE_BURST = 5
    settings.WS_MESSAGE_RATE = 0.05
    s = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    await s.open()
    codes = []
    for _ in range(8):
        await s.send_text("x" * 10_000)
        codes.append((await s.recv())["error"]["code"])
    assert codes == ["bad_message"] * 5 + ["throttled"] * 3
    await s.close()


async def test_a_socket_that_ignores_throttling_is_closed_with_4429(
    settings: Settings, game: Game, key: str
) -> None:
    settings.WS_MESSAGE_BURST = 5
    settings.WS_MESSAGE_RATE = 0.05
    s = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    await s.open()
    for _ in range(5 + 5 + 1):  # the burst, then as many refused, then one more
        await s.send_text('{"type": "resync"}')
    outputs = []
    while True:
        out = await s.comm.receive_output(5)
        outputs.append(out)
        if out["type"] == "websocket.close":
            break
    assert outputs[-1]["code"] == consumers.CLOSE_TOO_MANY == 4429
    texts = [json.loads(o["text"]) for o in outputs[:-1]]
    assert [t["type"] for t in texts] == ["state"] * 5 + ["error"] * 5
    assert {t["error"]["code"] for t in texts[5:]} == {"throttled"}


async def test_a_flood_let_through_now_and_then_is_still_closed_with_4429(
    settings: Settings, game: Game, key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Frames processed slowly let the bucket refill a token now and then: the socket that
    keeps flooding must still be hung up (it once got ``throttled`` answers for ever)."""
    settings.WS_MESSAGE_BURST = 5
    settings.WS_MESSAGE_RATE = 1.0

    class Clock:
        t = 0.0

        def monotonic(self) -> float:
            self.t += 0.5  # half a token per frame: one frame in two is let through
            return self.t

    monkeypatch.setattr(consumers.base, "time", Clock())
    s = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    await s.open()
    kinds = []
    for _ in range(40):
        await s.send_text('{"type": "resync"}')
        out = await s.comm.receive_output(5)
        if out["type"] == "websocket.close":
            assert out["code"] == consumers.CLOSE_TOO_MANY
            break
        kinds.append(json.loads(out["text"])["type"])
    else:
        raise AssertionError(f"never closed: {kinds}")
    assert "state" in kinds[5:] and kinds.count("error") == 5


async def test_rest_and_every_socket_of_an_account_share_one_budget(
    settings: Settings, game: Game, key: str, player: Any
) -> None:
    from rest_framework.test import APIClient

    rates = dict(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], user="12/min")
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    get = database_sync_to_async(api.get)
    for _ in range(4):
        assert (await get(f"/api/v1/games/{game.pk}/")).status_code == 200
    one = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    two = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    await one.open()
    await two.open()
    first = [(await one.ask({"type": "resync"}))["type"] for _ in range(5)]
    second = [await two.ask({"type": "resync"}) for _ in range(5)]
    assert first == ["state"] * 5
    assert [a["type"] for a in second] == ["state"] * 3 + ["error"] * 2
    assert second[-1]["error"]["code"] == "throttled"
    assert second[-1]["error"]["details"]["retry_after"] > 0
    assert (await get(f"/api/v1/games/{game.pk}/")).status_code == 429
    await one.close()
    await two.close()


async def test_each_socket_has_its_own_budget(settings: Settings, game: Game, key: str) -> None:
    settings.WS_MESSAGE_BURST = 3
    settings.WS_MESSAGE_RATE = 0.05
    one = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    two = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    await one.open()
    await two.open()
    for _ in range(3):
        assert (await one.ask({"type": "resync"}))["type"] == "state"
    assert (await one.ask({"type": "resync"}))["error"]["code"] == "throttled"
    assert (await two.ask({"type": "resync"}))["type"] == "state"
    await one.close()
    await two.close()


async def test_the_board_socket_is_throttled_too(settings: Settings, today: str) -> None:
    settings.WS_MESSAGE_BURST = 3
    settings.WS_MESSAGE_RATE = 0.05
    s = Socket(f"/ws/v1/daily/bristol/{today}/")
    await s.open()
    kinds = [(await s.ask({"type": "resync"}))["type"] for _ in range(5)]
    assert kinds == ["board"] * 3 + ["error"] * 2
    answer = await s.ask({"type": "resync"})
    assert answer["error"]["code"] == "throttled"
    assert answer["error"]["details"]["retry_after"] > 0
    await s.close()


async def test_the_default_budget_lets_a_fast_client_play(
    game: Game, key: str, settings: Settings
) -> None:
    """With the default limits a client that sends each move when the last answer comes is
    not held back for a whole game (the flood limit is for runaway loops, not players)."""
    import patience_site.settings as defaults

    assert (defaults.WS_MESSAGE_BURST, defaults.WS_MESSAGE_RATE) == (200, 100.0)
    settings.WS_MESSAGE_BURST = defaults.WS_MESSAGE_BURST
    settings.WS_MESSAGE_RATE = defaults.WS_MESSAGE_RATE
    s = Socket(f"/ws/v1/games/{game.pk}/", token_headers(key))
    state = (await s.open())["state"]
    moves = 0
    while state["status"] == "playing" and moves < 180:
        move = state["legal_moves"][moves % len(state["legal_moves"])]
        answer = await s.ask({"type": "move", "move": move, "ply": moves})
        assert answer["type"] == "state", answer
        state, moves = answer["state"], moves + 1
    await s.close()
    assert moves >= 100


async def test_nul_and_surrogates_in_a_retried_move_are_bad_messages(sock: Any, game: Game) -> None:
    """A retry (ply behind the game) looks the move up in the log: such text must not reach
    the database (PostgreSQL refuses NUL in text, psycopg lone surrogates)."""
    move = sock.first["state"]["legal_moves"][0]
    assert (await sock.ask({"type": "move", "move": move, "ply": 0}))["ply"] == 1
    for text in ("\u0000", "t1\u0000-f", "\ud800", "t1-\udfff"):
        await sock.send_text(f'{{"type": "move", "move": "{text}", "ply": 0}}')
        answer = await sock.recv()
        assert answer["type"] == "error", (text, answer)
        assert answer["error"]["code"] == "bad_message", (text, answer)
        assert answer["ply"] == 1
    await still_usable(sock, game.pk)


@pytest.mark.parametrize("cookie", [b"sessionid=abc\x00defghijkl", b"sessionid=" + b"x" * 5000])
async def test_a_forged_session_cookie_on_a_socket_closes_with_4401(
    game: Game, cookie: bytes
) -> None:
    headers = [(b"cookie", cookie), (b"origin", b"http://testserver")]
    assert await Socket(f"/ws/v1/games/{game.pk}/", headers).close_code() == 4401
