"""Hidden information: no stock card, seed or deck reaches a player before it may.

tests/api/test_api_stock_secrecy.py follows a practice game through the REST
endpoints. Here a ranked daily of Bristol (52 distinct cards, so any code of a
card still in the stock that shows up is a leak) is played through the game
socket and REST at once, by its player on two sockets (the second one gets the
``changed`` pushes) while a rival plays the same deal and a board socket
listens: every message type (state on connect, move, undo, resign, resync,
hint), every kind of error (stale ply, illegal moves from every pile and from
the stock, bad notation, bad messages, undo and hint refused, throttled,
finished game), every push, and the pages that show a game. Every payload is
recorded and checked right after the step that caused it against the stock of
that moment, read from the full snapshot in the database.

After the player's own game has ended the day is still on: the deal stays
hidden (no seed, deck, par line or stock card) until midnight, when the clock
(``core.clock.now``) is moved on and everything is published.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client
from pytest_django import Settings
from rest_framework.test import APIClient

from accounts import services as account_services
from devtools.accounts import PASSWORD
from games.engine import deck_order
from games.engine.record import position_from_bytes
from games.models import Deal, Game
from games.services import games as game_services
from tests.daily_fixtures import DAY, FakeClock
from tests.helpers import card_pattern, token_headers, walk
from tests.security.helpers import Socket

pytest_plugins = ["tests.daily_fixtures"]
pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("channel_layers", "no_rate_limits", "daily_secret", "isolated_boards"),
]

DAY_TEXT = DAY.isoformat()
GAME_PATH = "/ws/v1/games/{}/"
BOARD_PATH = f"/ws/v1/daily/bristol/{DAY_TEXT}/"
CARD = re.compile(r"(?<![A-Za-z0-9])[A2-9TJQK][CDHS](?![A-Za-z0-9])")
#: Keys that carry the deal, published only once it may be.
SECRET_KEYS = ("seed", "deck", "par", "par_line")


@pytest.fixture(autouse=True)
def _roomy_socket_limits(settings: Any) -> None:
    settings.WS_MESSAGE_BURST = 100_000
    settings.HINT_SOLVER_NODES = 500


def stock_of(game_id: int) -> list[str]:
    game = Game.objects.get(pk=game_id)
    return position_from_bytes(game.position).to_json()["piles"]["s"]


class Watch:
    """Every payload one player received, checked against that player's stock."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.texts: list[str] = []
        self.checked = 0
        self.game_id: int | None = None
        self.seed = ""
        self.count = 0

    def check_now(self, *, day_over: bool = False) -> None:
        """Check what arrived since the last check (call right after each step).

        Once the day is over the deal is public: the payloads are only counted.
        """
        if day_over:
            self.count += len(self.texts) - self.checked
            self.checked = len(self.texts)
            return
        stock = stock_of(self.game_id) if self.game_id else []
        pattern = card_pattern(stock) if stock else None
        for text in self.texts[self.checked :]:
            self.count += 1
            where = f"{self.name}: {text[:300]}"
            if self.seed:
                assert self.seed not in text, f"the seed in {where}"
            if pattern is not None:
                leak = pattern.search(text)
                assert leak is None, f"stock card {leak.group(0)} in {where}"
            if text.lstrip().startswith(("{", "[")):
                check_shape(json.loads(text), where)
        self.checked = len(self.texts)


def check_shape(body: Any, where: str) -> None:
    for _, key, value in walk(body):
        if key == "piles":
            assert "s" not in value, f"the stock's cards in {where}"
        if key == "deal":
            assert value is None, f"the deal in {where}"
        if key in SECRET_KEYS:
            assert value in (None, ""), f"{key} in {where}"


class Rest:
    """A token client whose every answer is recorded for a watch."""

    def __init__(self, key: str, watch: Watch) -> None:
        self.client = APIClient()
        self.client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        self.watch = watch

    async def __call__(self, method: str, path: str, data: Any = None, **extra: Any) -> Any:
        def call() -> Any:
            return getattr(self.client, method)(path, data, format="json", **extra)

        response = await database_sync_to_async(call)()
        self.watch.texts.append(response.content.decode())
        return response


def make_player(name: str) -> tuple[Any, str]:
    user = get_user_model().objects.create_user(username=name, password=PASSWORD)
    return user, account_services.token_create(user=user, name="play")[1]


async def checked(*watches: Watch, day_over: bool = False) -> None:
    for w in watches:
        await database_sync_to_async(w.check_now)(day_over=day_over)


def refused_moves(state: dict[str, Any], rng: random.Random) -> list[str]:
    """Moves that are not legal now, from every kind of pile and from the stock."""
    piles = list(state["position"]["piles"])
    out = []
    for src in [*rng.sample(piles, 3), "s"]:
        for dst in [*rng.sample(piles, 2), "s", "f"]:
            move = f"{src}-{dst}"
            if move not in state["legal_moves"] and src != dst:
                out.append(move)
    return out


async def play_step(
    one: Socket,
    two: Socket,
    rest: Rest,
    watch: Watch,
    state: dict[str, Any],
    rng: random.Random,
    step: int,
) -> dict[str, Any]:
    """One round: refusals of every kind, then a move over the socket or REST."""
    ply = state["ply"]
    for move in refused_moves(state, rng)[:4]:
        answer = await one.ask({"type": "move", "move": move, "ply": ply})
        assert answer["type"] == "error", answer
        assert answer["error"]["code"] in ("illegal_move", "bad_notation"), answer
    assert (await one.ask({"type": "move", "move": "zz-99", "ply": ply}))["type"] == "error"
    stale = await one.ask({"type": "move", "move": "deal", "ply": ply + 5})
    assert stale["error"]["code"] == "bad_ply"
    assert (await one.ask({"type": "move", "move": 7}))["error"]["code"] == "bad_message"
    assert (await one.ask({"type": "hint"}))["error"]["code"] == "hint_not_allowed"
    undo = await one.ask({"type": "undo", "ply": ply})
    if undo["type"] == "state":  # a move that revealed nothing can be taken back
        assert (await two.recv())["cause"] == "changed"
        state, ply = undo["state"], undo["ply"]
    else:
        assert undo["error"]["code"] == "undo_not_allowed"
    await rest("post", f"/api/v1/games/{watch.game_id}/undo/", {"ply": ply + 1})  # stale
    legal = state["legal_moves"]
    others = [m for m in legal if m != "deal"]
    move = "deal" if "deal" in legal and (step % 3 == 0 or not others) else rng.choice(others)
    if step % 2:
        answer = await one.ask({"type": "move", "move": move, "ply": ply})
        assert answer["type"] == "state" and answer["ply"] == ply + 1, answer
        again = await one.ask({"type": "move", "move": move, "ply": ply})
        assert again["duplicate"] is True
        pushed = await two.recv()
    else:
        response = await rest(
            "post", f"/api/v1/games/{watch.game_id}/moves/", {"move": move, "ply": ply}
        )
        assert response.status_code == 200, response.content
        answer = {"state": response.json(), "ply": ply + 1}
        assert (await one.recv())["cause"] == "changed"
        pushed = await two.recv()
    assert pushed["cause"] == "changed" and pushed["ply"] == ply + 1
    resync = await two.ask({"type": "resync"})
    assert resync["cause"] == "resync"
    await rest("get", f"/api/v1/games/{watch.game_id}/")
    await rest("get", f"/api/v1/games/{watch.game_id}/moves/")
    return answer["state"]


async def test_a_ranked_daily_over_sockets_and_rest_shows_no_stock_card_or_seed(
    daily_clock: FakeClock, settings: Settings
) -> None:
    ann, ann_key = await database_sync_to_async(make_player)("ann")
    bob, bob_key = await database_sync_to_async(make_player)("bob")
    watch, rival_watch, public = Watch("ann"), Watch("bob"), Watch("board")
    rest, rival_rest = Rest(ann_key, watch), Rest(bob_key, rival_watch)

    started = await rest("post", f"/api/v1/daily/bristol/{DAY_TEXT}/play/")
    assert started.status_code == 201
    state = started.json()
    assert state["ranked"] and state["kind"] == "daily"
    watch.game_id = state["id"]
    deal = await database_sync_to_async(lambda: Deal.objects.get(date=DAY, variant="bristol"))()
    seed = str(deal.seed)
    watch.seed = rival_watch.seed = public.seed = seed
    rival = (await rival_rest("post", f"/api/v1/daily/bristol/{DAY_TEXT}/play/")).json()
    rival_watch.game_id = rival["id"]

    one = Socket(GAME_PATH.format(watch.game_id), token_headers(ann_key), log=watch.texts)
    two = Socket(GAME_PATH.format(watch.game_id), token_headers(ann_key), log=watch.texts)
    board = Socket(BOARD_PATH, token_headers(ann_key), log=public.texts)
    theirs = Socket(GAME_PATH.format(rival["id"]), token_headers(bob_key), log=rival_watch.texts)
    assert (await one.open())["cause"] == "connect"
    assert (await two.open())["cause"] == "connect"
    assert (await board.open())["type"] == "board"
    assert (await theirs.open())["cause"] == "connect"
    # Another player's game is refused like an unknown one: no payload at all.
    assert await Socket(GAME_PATH.format(rival["id"]), token_headers(ann_key)).close_code() == 4404
    await checked(watch, rival_watch, public)

    rng = random.Random(8)
    for step in range(24):
        assert state["status"] == "playing" and state["position"]["stock"] > 0
        state = await play_step(one, two, rest, watch, state, rng, step)
        if step % 6 == 0:  # the rival deals too, on the same deal
            r = await theirs.ask({"type": "move", "move": "deal", "ply": step // 6})
            assert r["type"] == "state", r
        await checked(watch, rival_watch, public)
    assert state["position"]["stock"] > 0, "the walk must end with cards still in the stock"

    # Reads of every kind while the game is on.
    for path in (
        "/api/v1/games/",
        "/api/v1/daily/",
        f"/api/v1/daily/bristol/{DAY_TEXT}/",
        f"/api/v1/daily/bristol/{DAY_TEXT}/board/",
        "/api/v1/players/ann/stats/",
        "/api/v1/leaderboards/bristol/",
    ):
        assert (await rest("get", path)).status_code == 200, path
    assert (await rest("post", f"/api/v1/games/{watch.game_id}/hint/")).status_code == 409
    assert (await rest("post", f"/api/v1/daily/bristol/{DAY_TEXT}/play/")).status_code == 200
    await checked(watch, rival_watch, public)

    # Throttled answers carry nothing either.
    settings.WS_MESSAGE_BURST, settings.WS_MESSAGE_RATE = 1, 0.01
    await one.ask({"type": "resync"})
    assert (await one.ask({"type": "resync"}))["error"]["code"] == "throttled"
    settings.WS_MESSAGE_BURST, settings.WS_MESSAGE_RATE = 100_000, 100.0
    await asyncio.sleep(0.05)  # a token back
    await checked(watch)

    # The rival resigns: a result on the board, pushed to the listener.
    assert (await theirs.ask({"type": "resign"}))["state"]["status"] == "resigned"
    assert (await board.recv())["type"] == "board.result"
    # Ann resigns: her game is over, but the day is not, so the deal stays hidden.
    over = await one.ask({"type": "resign"})
    assert over["state"]["status"] == "resigned" and over["state"]["deal"] is None
    assert (await two.recv())["state"]["status"] == "resigned"
    assert (await board.recv())["type"] == "board.result"
    assert (await board.ask({"type": "resync"}))["type"] == "board"
    for request in ({"type": "move", "move": "deal", "ply": state["ply"]}, {"type": "resign"}):
        assert (await one.ask(request))["error"]["code"] == "game_finished"
    replay = await rest("get", f"/api/v1/daily/bristol/{DAY_TEXT}/results/1/replay/")
    assert replay.status_code == 404
    for path in (f"/api/v1/games/{watch.game_id}/", "/api/v1/games/", "/api/v1/daily/"):
        await rest("get", path)
    detail = (await rest("get", f"/api/v1/daily/bristol/{DAY_TEXT}/")).json()
    assert detail["seed"] is None and detail["deck"] is None and detail["par_line"] is None
    # Checked against the stock of her game as it ended: still secret today.
    await checked(watch, rival_watch, public)
    await pages_show_nothing(ann, watch)

    # Midnight: the day is over and the deal is published everywhere.
    daily_clock.next_day()
    detail = (await rest("get", f"/api/v1/daily/bristol/{DAY_TEXT}/")).json()
    assert detail["seed"] == seed and detail["deck"] == deck_order("bristol", int(seed))
    mine = (await rest("get", f"/api/v1/games/{watch.game_id}/")).json()
    assert mine["deal"] == {"seed": seed, "deck": detail["deck"]}
    assert (await one.ask({"type": "resync"}))["state"]["deal"]["seed"] == seed
    await checked(watch, day_over=True)

    for s in (one, two, board, theirs):
        await s.close()
    assert watch.count > 250 and rival_watch.count >= 5 and public.count >= 4
    assert CARD.search("\n".join(public.texts)) is None  # the board never shows a card


async def pages_show_nothing(user: Any, watch: Watch) -> None:
    """The pages that show a game or a daily, checked like the API's answers."""

    def pages() -> None:
        client = Client()
        client.force_login(user)
        for path in (
            f"/play/{watch.game_id}/",
            "/",
            "/games/",
            f"/leaderboards/bristol/{DAY_TEXT}/",
            f"/leaderboards/bristol/{DAY_TEXT}/replay/1/",
        ):
            response = client.get(path)
            assert response.status_code == 200, path
            html = response.content.decode()
            found = re.search(
                r'<script id="initial-state" type="application/json">(.*?)</script>', html
            )
            watch.texts.append(found.group(1) if found else html)

    await database_sync_to_async(pages)()
    await checked(watch)


async def test_a_practice_game_over_the_socket_with_undo_and_hints(
    daily_clock: FakeClock, settings: Settings
) -> None:
    """Practice games undo deals (the cards go back into the stock) and give hints."""
    settings.HINT_PLAYER_INTERVAL_SECONDS = 0  # a solve after every move, off the line
    settings.HINT_DEADLINE_SECONDS = 60  # a loaded machine's queue is not what this tests
    ann, key = await database_sync_to_async(make_player)("ann")
    game = await database_sync_to_async(game_services.practice_game_start)(
        user=ann, variant="bristol", seed=42
    )
    watch = Watch("ann")
    watch.game_id = game.pk
    one = Socket(GAME_PATH.format(game.pk), token_headers(key), log=watch.texts)
    state = (await one.open())["state"]
    rng = random.Random(3)
    for step in range(30):
        ply = state["ply"]
        for move in refused_moves(state, rng)[:3]:
            assert (await one.ask({"type": "move", "move": move, "ply": ply}))["type"] == "error"
        hint = await one.ask({"type": "hint"})
        assert hint["type"] == "hint", hint
        await checked(watch)  # before an undo puts dealt cards (seen) back into the stock
        if state["can_undo"] and step % 4 == 3:
            answer = await one.ask({"type": "undo", "ply": ply})
        else:
            legal = state["legal_moves"]
            move = "deal" if "deal" in legal and step % 3 == 0 else rng.choice(legal)
            answer = await one.ask({"type": "move", "move": move, "ply": ply})
        assert answer["type"] == "state", answer
        state = answer["state"]
        await checked(watch)
        if state["status"] != "playing":
            break
    if state["status"] == "playing":
        assert state["position"]["stock"] > 0
        over = await one.ask({"type": "resign"})
        assert over["state"]["deal"]["seed"] == "42"  # a practice game reveals at its end
    await one.close()
    assert watch.count > 100


async def test_a_seed_never_shows_before_the_day_ends_whatever_the_endpoint(
    daily_clock: FakeClock, settings: Settings
) -> None:
    """Today's dailies of every variant: the seeds appear nowhere until midnight."""
    ann, key = await database_sync_to_async(make_player)("ann")
    watch = Watch("ann")
    rest = Rest(key, watch)

    def seeds() -> list[str]:
        return [str(d.seed) for d in Deal.objects.filter(kind=Deal.Kind.DAILY, date=DAY)]

    overview = (await rest("get", "/api/v1/daily/")).json()
    secrets = await database_sync_to_async(seeds)()
    assert len(secrets) == len(overview) == 6
    for item in overview:
        variant = item["variant"]
        game = (await rest("post", f"/api/v1/daily/{variant}/{DAY_TEXT}/play/")).json()
        await rest("post", f"/api/v1/games/{game['id']}/resign/")
        for path in (
            f"/api/v1/daily/{variant}/{DAY_TEXT}/",
            f"/api/v1/daily/{variant}/{DAY_TEXT}/board/",
            f"/api/v1/games/{game['id']}/",
            f"/api/v1/games/{game['id']}/moves/",
            f"/api/v1/daily/{variant}/{DAY_TEXT}/results/1/replay/",
        ):
            await rest("get", path)
        s = Socket(f"/ws/v1/daily/{variant}/{DAY_TEXT}/", token_headers(key), log=watch.texts)
        await s.open()
        await s.close()
    await rest("get", "/api/v1/daily/")
    await rest("get", "/api/v1/games/")
    text = "\n".join(watch.texts)
    for secret in secrets:
        assert secret not in text
    await checked(watch)  # no deal, deck, seed or par line in any answer

    daily_clock.advance(hours=11, minutes=59, seconds=59)  # 23:59:59, still the day
    assert (await rest("get", f"/api/v1/daily/bristol/{DAY_TEXT}/")).json()["seed"] is None
    daily_clock.advance(seconds=1)  # midnight: the day ended, the reveal waits for the grace
    assert (await rest("get", f"/api/v1/daily/bristol/{DAY_TEXT}/")).json()["seed"] is None
    daily_clock.advance(seconds=settings.DAILY_REVEAL_GRACE_SECONDS)
    published = (await rest("get", "/api/v1/daily/")).json()
    assert all(d["seed"] is None for d in published)  # the new day's dailies
    detail = (await rest("get", f"/api/v1/daily/bristol/{DAY_TEXT}/")).json()
    assert detail["seed"] in secrets and detail["deck"] is not None
