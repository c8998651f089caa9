"""A bot that plays one deal by itself over the REST API, with plain httpx.

Usage (a token from the "API tokens" page, or from ``POST /api/v1/auth/token/``):

    export PATIENCE_TOKEN=pt_...
    python examples/bot.py --variant bristol --seed 7      # a practice game
    python examples/bot.py --variant bristol --daily       # today's daily (ranked once)

How it plays: it sends cards home first (``-f`` in the Bristol family, ``-a``
in the Gallery family); otherwise it tries the other moves, each at most once
from a given position, and deals when it has tried them all, until the game is
over or it has spent its move budget (then it resigns). It does not see the
stock, and neither does it ask for hints (``POST games/<id>/hint/``, practice
games only, which marks a game assisted).

Every request carries the ply the bot has seen, so a request whose answer was
lost can be sent again as it was: the server answers ``"duplicate": true``
instead of applying it twice. Errors come as ``{"error": {"code", "message",
"details"}}``; ``stale_ply``/``bad_ply`` carry the game's ply in ``details.ply``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import httpx

#: Moves a game may take before the bot gives up and resigns.
BUDGET = 400


class ApiError(Exception):
    """An error answer of the API: its status and ``error`` envelope."""

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        super().__init__(f"{status} {error.get('code')}: {error.get('message')}")
        self.status, self.code = status, error.get("code")


def call(http: httpx.Client, method: str, path: str, body: Any = None) -> Any:
    """One request; the JSON answer, or ApiError for an error answer."""
    response = http.request(method, "/api/v1/" + path, json=body)
    if response.is_error:
        raise ApiError(response.status_code, response.json()["error"])
    return response.json()


def start_practice(http: httpx.Client, variant: str, seed: int | None = None) -> dict[str, Any]:
    body = {"variant": variant} if seed is None else {"variant": variant, "seed": seed}
    return call(http, "POST", "games/", body)


def start_daily(http: httpx.Client, variant: str) -> dict[str, Any]:
    """Today's daily: the first game of it is ranked; asking again resumes it."""
    return call(http, "POST", f"daily/{variant}/today/play/")


def choose(game: dict[str, Any], tried: set[str]) -> str:
    """The next move: home first, then one not tried from here, else a deal."""
    moves = game["legal_moves"]
    home = [m for m in moves if m.endswith(("-f", "-a"))]
    others = [m for m in moves if not m.startswith("deal") and m not in tried]
    deals = [m for m in moves if m.startswith("deal")]
    return (home or others or deals or [m for m in moves if m in tried])[0]


def play(http: httpx.Client, game: dict[str, Any]) -> dict[str, Any]:
    """Play a started game until it is over; returns its final state."""
    tried: dict[str, set[str]] = {}  # position -> moves already made from it
    while game["status"] == "playing":
        if game["ply"] >= BUDGET:
            return call(http, "POST", f"games/{game['id']}/resign/")
        seen = tried.setdefault(json.dumps(game["position"], sort_keys=True), set())
        move = choose(game, seen)
        seen.add(move)
        game = call(http, "POST", f"games/{game['id']}/moves/", {"move": move, "ply": game["ply"]})
    return game


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("PATIENCE_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("PATIENCE_TOKEN"))
    parser.add_argument("--variant", default="bristol")
    parser.add_argument("--seed", type=int, help="practice deal number (random if absent)")
    parser.add_argument("--daily", action="store_true", help="play today's daily")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("give --token or set PATIENCE_TOKEN")
    headers = {"Authorization": f"Token {args.token}"}
    with httpx.Client(base_url=args.url, headers=headers, timeout=30) as http:
        if args.daily:
            game = start_daily(http, args.variant)
        else:
            game = start_practice(http, args.variant, args.seed)
        game = play(http, game)
    print(f"game {game['id']}: {game['status']}, {game['score']}/{game['max_score']} cards home")
    print(f"in {game['ply']} moves and {game['elapsed_ms'] / 1000:.1f} s")
    return 0 if game["status"] == "won" else 1


if __name__ == "__main__":
    sys.exit(main())
