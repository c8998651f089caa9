"""A bot that plays one deal by itself over the REST API, with plain httpx.

It needs httpx (``pip install httpx``). Usage, with a token from the "API tokens"
page (or from ``POST /api/v1/auth/token/``):

    export PATIENCE_TOKEN=pt_...
    python examples/bot.py --variant bristol --seed 7      # a practice game
    python examples/bot.py --variant bristol --daily       # today's daily (ranked once)

or with a user name and password instead of a token: the bot asks for a token
itself, and registers the account first when the server has none of that name
(a fresh server):

    PATIENCE_USERNAME=robot PATIENCE_PASSWORD=correct-horse-battery-staple-42 \
        python examples/bot.py --variant bristol

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
An answer 429 (too many requests) or 503 (unavailable for now) says in its
``Retry-After`` header how many seconds to wait: the bot waits that long and sends
the request again, as many times as it takes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import httpx

#: Moves a game may take before the bot gives up and resigns.
BUDGET = 400


class ApiError(Exception):
    """An error answer of the API: its status and ``error`` envelope."""

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        super().__init__(f"{status} {error.get('code')}: {error.get('message')}")
        self.status, self.code = status, error.get("code")


#: Answers that say "not now": the request is sent again after their ``Retry-After``.
RETRY_STATUSES = (429, 503)


def send(http: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """One request, sent again after the seconds of ``Retry-After`` while it is 429/503."""
    while True:
        response = http.request(method, "/api/v1/" + path, **kwargs)
        if response.status_code not in RETRY_STATUSES:
            return response
        time.sleep(float(response.headers.get("Retry-After", "1")))


def call(http: httpx.Client, method: str, path: str, body: Any = None) -> Any:
    """One request; the JSON answer, or ApiError for an error answer."""
    response = send(http, method, path, json=body)
    if response.is_error:
        raise ApiError(response.status_code, response.json()["error"])
    return response.json()


def sign_in(http: httpx.Client, username: str, password: str) -> str:
    """A new token for the account, registered first if the server has none of that name.

    Registering opens a browser session, so it wants the CSRF token; the session is
    dropped after it, since the token is the credential from then on.
    """
    login = {"username": username, "password": password}
    answer = send(http, "POST", "auth/token/", json={**login, "name": "bot"})
    if answer.status_code == 401:  # no such account (or a wrong password: register says so)
        csrf = call(http, "GET", "auth/csrf/")["csrf_token"]
        registered = send(http, "POST", "auth/register/", json=login, headers={"X-CSRFToken": csrf})
        if registered.is_error:
            raise ApiError(registered.status_code, registered.json()["error"])
        http.cookies.clear()
        answer = send(http, "POST", "auth/token/", json={**login, "name": "bot"})
    if answer.is_error:
        raise ApiError(answer.status_code, answer.json()["error"])
    return str(answer.json()["token"])


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
    parser.add_argument("--username", default=os.environ.get("PATIENCE_USERNAME"))
    parser.add_argument("--password", default=os.environ.get("PATIENCE_PASSWORD"))
    parser.add_argument("--variant", default="bristol")
    parser.add_argument("--seed", type=int, help="practice deal number (random if absent)")
    parser.add_argument("--daily", action="store_true", help="play today's daily")
    args = parser.parse_args(argv)
    if not args.token and not (args.username and args.password):
        parser.error("give --token (or set PATIENCE_TOKEN), or a --username and --password")
    with httpx.Client(base_url=args.url, timeout=30) as http:
        token = args.token or sign_in(http, args.username, args.password)
        http.headers["Authorization"] = f"Token {token}"
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
