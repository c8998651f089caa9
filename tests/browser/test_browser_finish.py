"""Finish plays the whole line at once and the win feels like one.

A Bristol game one Finish from a win (``devtools.layout.near_win``: 11 cards left): one
click draws every card home at once and sends the 11 moves over the socket back to back,
each with its own ply, before the first answer comes; the server stores them as ordinary
moves. "You won!" shows at once. When the server refuses a move of the line, the board
rolls back to the server's state, the moves after it are dropped, and Finish works again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.layout import GAME_AT, near_win

pytestmark = pytest.mark.browser


@pytest.fixture
def near_won(page: Any, username: str, sign_up: Any, django_shell: Any) -> str:
    """The id of a game of the page's (new) player, one Finish from a win."""
    sign_up(page, username)
    return django_shell(GAME_AT.format(position=near_win(), username=username)).split()[-1]


def frames(page: Any) -> list[tuple[str, dict]]:
    """Every frame of the page's game socket, in order: ("sent" or "received", message)."""
    seen: list[tuple[str, dict]] = []

    def opened(ws: Any) -> None:
        if "/ws/v1/games/" in ws.url:
            ws.on("framesent", lambda f: seen.append(("sent", json.loads(f))))
            ws.on("framereceived", lambda f: seen.append(("received", json.loads(f))))

    page.on("websocket", opened)
    return seen


def test_finish_sends_the_line_at_once_and_wins(page: Any, near_won: str, artifacts: Path) -> None:
    seen = frames(page)
    page.goto(f"/play/{near_won}/")
    expect(page.locator("#conn")).to_have_text("Live")
    # The stock is empty: Finish stands where Deal was.
    expect(page.locator("#btn-deal")).to_be_hidden()
    finish = page.locator("#btn-finish")
    expect(finish).to_be_visible()
    assert (
        page.evaluate("document.querySelector('.game-controls > :not([hidden])').id")
        == "btn-finish"
    )
    # With sounds on (made by Web Audio): the line and the win play without an error.
    page.locator("#settings summary").click()
    page.check("#set-sounds")
    assert json.loads(page.evaluate("localStorage.getItem('patience.settings')"))["sounds"]
    start = len(seen)
    finish.click()
    # Drawn at once: every king is on a foundation before the server has answered.
    kings = page.evaluate(
        "[...document.querySelectorAll('.foundations .card[data-card]')].map(c => c.dataset.card)"
    )
    assert sorted(kings) == ["KC", "KD", "KH", "KS"], kings
    expect(page.locator("#game-status")).to_have_text("Won")
    expect(page.locator("#finished-text")).to_have_text("You won!")
    # 11 moves, plies 0 to 10, all sent before the first answer came.
    after = seen[start:]
    sent = [m for way, m in after if way == "sent" and m["type"] == "move"]
    assert [m["ply"] for m in sent] == list(range(11)), sent
    first_answer = next(i for i, (way, _) in enumerate(after) if way == "received")
    assert sum(1 for way, m in after[:first_answer] if way == "sent") == 11
    state = page.evaluate(f"fetch('/api/v1/games/{near_won}/').then(r => r.json())")
    assert (state["status"], state["ply"], state["score"]) == ("won", 11, 52)
    expect(page.locator("#end-dialog")).to_be_visible(timeout=20_000)
    page.screenshot(path=str(artifacts / "finish-won.png"))


def test_a_refused_move_of_the_line_rolls_back(page: Any, near_won: str) -> None:

    # The fifth move of the line reaches the server as one it refuses (illegal there).
    def route(ws: Any) -> None:
        server = ws.connect_to_server()
        count = {"moves": 0}

        def to_server(message: str) -> None:
            data = json.loads(message)
            if data.get("type") == "move":
                count["moves"] += 1
                if count["moves"] == 5:
                    data["move"] = "t3-t1"
            server.send(json.dumps(data))

        ws.on_message(to_server)

    page.route_web_socket(re.compile(r"/ws/v1/games/"), route)
    page.goto(f"/play/{near_won}/")
    expect(page.locator("#conn")).to_have_text("Live")
    page.click("#btn-finish")
    expect(page.locator("#status-line")).to_contain_text("The server did not take that move")
    expect(page.locator("#board")).to_have_class(re.compile(r"\brolled-back\b"))
    # The board shows the game as stored: the first four moves (t1's four cards) home.
    page.wait_for_function("!window.patienceGame.busy")
    assert page.evaluate("window.patienceGame.state.ply") == 4
    expect(page.locator('[data-pile="t1"] .card[data-card]')).to_have_count(0)
    expect(page.locator('[data-pile="t2"] .card[data-card]')).to_have_count(3)
    expect(page.locator("#game-status")).to_have_text("Playing")
    # Finish again plays the rest (the route now lets every move through).
    page.click("#btn-finish")
    expect(page.locator("#game-status")).to_have_text("Won")
    assert page.evaluate("window.patienceGame.state.ply") == 11
