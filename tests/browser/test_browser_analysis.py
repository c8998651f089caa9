"""A finished game's analysis on its play page (web/static/web/analysis.js): while it is
pending the page waits for the game socket's ``analysis.ready``, not for polls, and polls
only while that socket is refused.

The analysis answers 202 to the page until the test lets it through (the server's own
worker runs it meanwhile); the test sends ``analysis.ready`` on the page's sockets itself:
the browser tests' server has no shared channel layer for the worker's message.

Screenshot: test-artifacts/analysis-strip.png.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

#: A resigned Bristol practice game of the player: five moves.
RESIGNED = """
from django.contrib.auth import get_user_model
from api import shapes
from games.play import finish
from games.play import move as play_move
from games.services import games as game_services

user = get_user_model().objects.get(username={username!r})
game = game_services.practice_game_start(user=user, variant="bristol", seed=7)
for _ in range(5):
    moves = shapes.game_state(game)["legal_moves"]
    cards = [m for m in moves if m != "deal"]
    move = cards[0] if cards else moves[0]
    game = play_move.apply_move(game_id=game.id, user=user, move=move, ply=game.ply).game
finish.resign(game_id=game.id, user=user)
print(game.id)
"""

PENDING = {"state": "running", "analysis": None}


def _held_analysis(page: Any) -> tuple[list[float], dict[str, bool]]:
    """Route the page's analysis requests: 202 while ``hold["on"]``; the times asked."""
    asked: list[float] = []
    hold = {"on": True}

    def route(route: Any) -> None:
        asked.append(time.monotonic())
        response = route.fetch()  # the server queues and runs it as usual
        if hold["on"]:
            route.fulfill(status=202, json=PENDING, headers={"Retry-After": "3"})
        else:
            route.fulfill(response=response)

    page.route(re.compile(r"/api/v1/games/\d+/analysis/$"), route)
    return asked, hold


def _done(page: Any, game_id: str) -> None:
    """Wait until the server has the analysis (asked outside the page's routes)."""
    deadline = time.monotonic() + 60
    while page.request.get(f"/api/v1/games/{game_id}/analysis/").json()["state"] != "done":
        assert time.monotonic() < deadline, "the analysis worker did not finish"
        time.sleep(0.5)


def test_a_pending_analysis_comes_with_the_socket_not_polls(
    page: Any, sign_up: Any, django_shell: Any, username: str, artifacts: Path
) -> None:
    sign_up(page, username)
    game_id = django_shell(RESIGNED.format(username=username)).split()[-1]
    asked, hold = _held_analysis(page)
    sockets: list[Any] = []

    def through(ws: Any) -> None:
        ws.connect_to_server()
        sockets.append(ws)

    page.route_web_socket(re.compile(r"/ws/v1/games/"), through)
    page.goto(f"/play/{game_id}/")
    summary = page.locator(".analysis .analysis-summary")
    expect(summary).to_have_text("The solver is analysing this game…")
    # Asked once, and once more when the analysis socket first answered; then no polls.
    page.wait_for_timeout(7_000)
    assert len(asked) == 2, asked
    _done(page, game_id)
    hold["on"] = False
    for ws in sockets:  # the play page's own socket ignores it
        ws.send(json.dumps({"type": "analysis.ready", "game_id": int(game_id)}))
    expect(page.locator(".analysis-strip")).to_be_visible()
    expect(summary).not_to_have_text("The solver is analysing this game…")
    assert len(asked) == 3
    page.locator(".analysis").screenshot(path=str(artifacts / "analysis-strip.png"))


def test_the_page_polls_while_the_socket_is_refused(
    page: Any, sign_up: Any, django_shell: Any, username: str
) -> None:
    sign_up(page, username)
    game_id = django_shell(RESIGNED.format(username=username)).split()[-1]
    asked, hold = _held_analysis(page)
    page.route_web_socket(re.compile(r"/ws/v1/games/"), lambda ws: ws.close(code=4404))
    page.goto(f"/play/{game_id}/")
    expect(page.locator(".analysis .analysis-summary")).to_have_text(
        "The solver is analysing this game…"
    )
    page.wait_for_timeout(7_000)
    assert len(asked) >= 3, asked  # every 3 s
    _done(page, game_id)
    hold["on"] = False
    expect(page.locator(".analysis-strip")).to_be_visible(timeout=10_000)
