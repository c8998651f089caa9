"""No response shows a card of the stock before the game ends.

A game is followed through every endpoint (start, read, list, moves, deals,
refused moves, undo, the log, resign). Bristol has 52 distinct cards, so any
code of a card still in the stock that shows up in a response is a leak. The
stock at each moment is read from the full snapshot in the database.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from games.engine import deck_order
from games.engine.record import position_from_bytes
from games.models import Game
from tests.helpers import card_pattern, walk

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_rate_limits(settings: Any) -> None:
    """These walks send well over a minute's worth of requests of one player."""
    conf = dict(settings.REST_FRAMEWORK)
    conf["DEFAULT_THROTTLE_RATES"] = dict.fromkeys(conf["DEFAULT_THROTTLE_RATES"], "100000/min")
    settings.REST_FRAMEWORK = conf


GAMES = "/api/v1/games/"


def stock_of(game_id: int) -> list[str]:
    """The cards still in the stock, from the full position stored for the game."""
    game = Game.objects.get(pk=game_id)
    piles = position_from_bytes(game.position).to_json()["piles"]
    return piles["s"]


class Recorder:
    """Sends requests and checks every answer for stock cards and hidden deal data."""

    def __init__(self, client: Any, game_id: int | None = None) -> None:
        self.client = client
        self.game_id = game_id
        self.bodies: list[str] = []
        self.distinct_cards = True

    def __call__(self, method: str, path: str, data: Any = None) -> Any:
        response = getattr(self.client, method)(path, data, format="json")
        assert response["Content-Type"] == "application/json", path
        text = response.content.decode()
        self.bodies.append(text)
        body = json.loads(text)
        if self.game_id is None and isinstance(body, dict) and "id" in body:
            self.game_id = body["id"]
        self.check(body, text, path)
        return response

    def check(self, body: Any, text: str, path: str) -> None:
        for where, key, value in walk(body):
            assert key not in ("seed", "deck"), f"{path}: {where}.{key} before the end"
            if key == "piles":
                assert "s" not in value, f"{path}: the stock's cards at {where}"
            if key == "deal":
                assert value is None, f"{path}: the deal at {where} before the end"
        if self.game_id is not None and self.distinct_cards:
            stock = stock_of(self.game_id)
            if stock:
                leak = card_pattern(stock).search(text)
                assert leak is None, f"{path}: stock card {leak.group(0)} in {text[:300]}"


def play_through_every_endpoint(
    client: Any, variant: str, seed: int, steps: int = 40
) -> tuple[Recorder, dict]:
    """Start a game and play ``steps`` steps (moves, deals, undos, retries, refusals).

    At most five deals, so the stock is never empty and the game cannot end.
    """
    rec = Recorder(client)
    rec.distinct_cards = variant in ("bristol", "belvedere")
    state = rec("post", GAMES, {"variant": variant, "seed": seed}).json()
    game = state["id"]
    rec("get", f"{GAMES}{game}/")
    rec("get", GAMES)
    rec("get", GAMES, {"limit": 1})
    rec("get", f"{GAMES}{game}/moves/")
    rng = random.Random(seed)
    ids = list(state["position"]["piles"])
    deals = undos = 0
    for step in range(steps):
        assert state["status"] == "playing"
        ply = state["ply"]
        # Refused moves: their messages must not tell the stock either.
        for src in [*rng.sample(ids, 2), "s"]:
            for dst in rng.sample(["f", "a", "t1", "g1", "r1", "s"], 2):
                if f"{src}-{dst}" not in state["legal_moves"]:
                    refused = {"move": f"{src}-{dst}", "ply": ply}
                    assert rec("post", f"{GAMES}{game}/moves/", refused).status_code == 400
        if "deal-reverse" not in state["legal_moves"]:
            refused = {"move": "deal-reverse", "ply": ply}
            assert rec("post", f"{GAMES}{game}/moves/", refused).status_code == 400
        rec("post", f"{GAMES}{game}/moves/", {"move": "deal", "ply": ply + 3})  # stale
        if state["can_undo"] and step % 5 == 4:
            state = rec("post", f"{GAMES}{game}/undo/", {"ply": ply}).json()
            undos += 1
        else:
            legal = [m for m in state["legal_moves"] if not m.startswith("deal")]
            if (step % 4 == 0 or not legal) and deals < 5:
                choice = "deal"
                deals += 1
            else:
                choice = rng.choice(legal or state["legal_moves"])
            state = rec("post", f"{GAMES}{game}/moves/", {"move": choice, "ply": ply}).json()
            # A retry of the same move is answered from the stored log.
            again = rec("post", f"{GAMES}{game}/moves/", {"move": choice, "ply": ply}).json()
            assert again["duplicate"] is True
        rec("get", f"{GAMES}{game}/")
        rec("get", f"{GAMES}{game}/moves/")
        rec("post", f"{GAMES}{game}/undo/", {"ply": state["ply"] + 1})  # stale
    rec("get", GAMES)
    assert deals >= 3 and undos >= 2
    assert state["status"] == "playing"
    return rec, state


def test_no_stock_card_in_any_response_before_the_end_bristol(api: Any) -> None:
    seed = 42
    rec, state = play_through_every_endpoint(api, "bristol", seed)
    game = rec.game_id
    assert game is not None
    still_hidden = stock_of(game)
    assert state["status"] == "playing" and still_hidden, "the walk should end mid-game"
    seen_text = "\n".join(rec.bodies)
    assert len(rec.bodies) > 300
    assert card_pattern(still_hidden).search(seen_text) is None
    # Sanity: the cards that were dealt did show up.
    shown = set(re.findall(r'"([A2-9TJQK][CDHS])"', seen_text))
    assert len(shown) == 52 - len(still_hidden)

    resigned = api.post(f"{GAMES}{game}/resign/").json()
    deal = Game.objects.get(pk=game).deal
    expected = {"seed": str(int(deal.seed)), "deck": deck_order("bristol", int(deal.seed))}
    assert resigned["deal"] == expected
    assert api.get(f"{GAMES}{game}/").json()["deal"] == expected
    assert api.get(GAMES).json()["results"][0]["deal"] == expected
    assert set(still_hidden) <= set(expected["deck"])


def test_no_stock_card_in_any_response_for_a_random_deal(api: Any) -> None:
    """A random seed: the game starts without one, and it stays hidden too."""
    rec = Recorder(api)
    state = rec("post", GAMES, {"variant": "bristol"}).json()
    for _ in range(4):
        state = rec(
            "post", f"{GAMES}{state['id']}/moves/", {"move": "deal", "ply": state["ply"]}
        ).json()
    assert state["position"]["stock"] == 25 - 12
    assert card_pattern(stock_of(state["id"])).search("\n".join(rec.bodies)) is None


@pytest.mark.parametrize("variant", ["picture-gallery", "mod3"])
def test_gallery_responses_never_carry_the_stock_or_the_deal(api: Any, variant: str) -> None:
    """Two decks make card codes ambiguous: check the shapes (no ``s`` pile, no deal)."""
    rec, state = play_through_every_endpoint(api, variant, 8, steps=15)
    resigned = api.post(f"{GAMES}{rec.game_id}/resign/").json()
    assert resigned["deal"] == {"seed": "8", "deck": deck_order(variant, 8)}
    assert len(resigned["deal"]["deck"]) == 104
