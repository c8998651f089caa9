"""Scouting the daily through the real servers (issue 32): one account deals its ranked
game's whole stock and so learns the deck, a second account plays the solver's line on
it, and the second's result is flagged ``linked_account`` for the review queue.

Both accounts play from this machine, as one person with two accounts at home would;
the scout on server A, the main account on server B. The test does what such a person
would do: rebuild the deck from what the scout was shown, solve it with the shipped
solver, and play the line.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests

from devtools.servers import subprocess_json
from games.engine import Position
from games.engine.solver import Verdict, solve
from tests.pinned_clock import PINNED_DAY

pytestmark = pytest.mark.e2e

TIMEOUT = 30

_FLAGS = """
import json
from games.models import Result
result = Result.objects.get(player__username={player!r}, deal__date={day!r})
flags = {{f.reason: f.detail for f in result.flags.all()}}
print(json.dumps({{"review": result.review, "won": result.won, "flags": flags}}))
"""


def session(key: str) -> requests.Session:
    s = requests.Session()
    s.trust_env = False
    s.headers["Authorization"] = f"Token {key}"
    s.headers["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"
    return s


def move(s: requests.Session, base: str, state: dict[str, Any], notation: str) -> dict[str, Any]:
    url = f"{base}/api/v1/games/{state['id']}/moves/"
    answer = s.post(url, json={"move": notation, "ply": state["ply"]}, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    return answer.json()


def scout_the_deck(s: requests.Session, base: str) -> Position:
    """Deal the ranked game's whole stock and rebuild the deal's start from what was shown:
    each deal puts the stock's top cards on the reserves, one each, in order."""
    play = s.post(f"{base}/api/v1/daily/bristol/{PINNED_DAY}/play/", timeout=TIMEOUT)
    assert play.status_code == 201, play.text
    state = play.json()
    assert state["ranked"]
    start = state["position"]["piles"]
    dealt: list[str] = []
    while "deal" in state["legal_moves"]:
        before = state["position"]["piles"]
        state = move(s, base, state, "deal")
        after = state["position"]["piles"]
        for pile in sorted(p for p in after if p.startswith("r")):
            dealt += after[pile][len(before[pile]) :]
    assert state["position"]["stock"] == 0
    stock = list(reversed(dealt))  # the first card dealt was the stock's top (its end)
    return Position.from_json({"variant": "bristol", "ply": 0, "piles": {**start, "s": stock}})


def test_a_result_on_a_deck_scouted_by_another_account_is_flagged(
    servers: list[str], e2e_env: dict[str, str], e2e_player: Any
) -> None:
    (scout_name, scout_key), (main_name, main_key) = e2e_player(), e2e_player()
    deck = scout_the_deck(session(scout_key), servers[0])
    found = solve(deck, max_nodes=500_000)
    assert found.verdict is Verdict.WON, "the pinned day's Bristol daily is winnable"

    main = session(main_key)
    state = main.post(f"{servers[1]}/api/v1/daily/bristol/{PINNED_DAY}/play/", timeout=TIMEOUT)
    assert state.status_code == 201, state.text
    game = state.json()
    assert game["position"]["piles"] == deck.public_json()["piles"]  # the scouted deal
    for notation in found.line:
        game = move(main, servers[1], game, str(notation))
    assert game["status"] == "won"

    code = _FLAGS.format(player=main_name, day=PINNED_DAY.isoformat())
    seen = subprocess_json("manage.py", "shell", "-c", code, env=e2e_env)
    assert seen["won"] and seen["review"] == "pending"
    assert "linked_account" in seen["flags"]
    assert scout_name in seen["flags"]["linked_account"]
    assert "same browser" in seen["flags"]["linked_account"]
