"""A first visit in a real browser: the landing page shows today's practice deal, a visitor
with no account plays it, registers, and still has the game.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.accounts import PASSWORD
from tests.browser.test_browser_play import deal_until_a_card_moves, play_by_click, shoot, state

pytestmark = pytest.mark.browser


def test_a_visitor_plays_without_an_account_then_registers_and_keeps_the_game(
    live_server_url: str, page: Any, username: str, artifacts: Path
) -> None:
    base = live_server_url
    page.goto(base + "/")
    board = page.locator("#first-board")
    expect(board.locator('[data-pile="t1"] .card').first).to_be_visible()
    expect(board.locator(".card[data-card]")).to_have_count(8 * 3 + 3)  # no card of the stock
    expect(page.locator(".site-nav")).to_contain_text("Register")
    shoot(page, artifacts / "first-visit-landing.png")

    page.click("#first-play")
    page.wait_for_url(re.compile(r"/play/\d+/$"))
    game_id = int(page.url.rstrip("/").split("/")[-1])
    expect(page.locator("#game-title")).to_contain_text("Practice game")
    expect(page.locator(".site-nav .username")).to_have_text("Guest")
    expect(page.locator(".guest-note")).to_be_visible()

    play_by_click(page, deal_until_a_card_moves(page)[0])
    played = state(page)
    assert played["ply"] >= 1 and not played["ranked"]

    page.click(".guest-note a")
    page.wait_for_url(re.compile(r"/register/"))
    expect(page.locator("#main")).to_contain_text("played as a guest")
    page.fill("#register-form input[name=username]", username)
    page.fill("#register-form input[name=password]", PASSWORD)
    page.click("#register-form button[type=submit]")
    page.wait_for_url(f"{base}/play/{game_id}/")
    expect(page.locator(".site-nav .username")).to_have_text(username)
    expect(page.locator(".guest-note")).to_have_count(0)
    expect(page.locator("#moves")).to_have_text(str(played["ply"]))
    kept = state(page)
    assert kept["position"] == played["position"] and kept["status"] == "playing"
    mine = page.request.get("/api/v1/games/").json()["results"]
    assert [g["id"] for g in mine] == [game_id]


def test_a_click_on_the_landing_preview_is_the_guests_first_move(
    live_server_url: str, page: Any
) -> None:
    page.goto(live_server_url + "/")
    board = page.locator("#first-board")
    source = board.locator(".pile.source").first
    expect(source).to_be_visible()
    source_id = source.get_attribute("data-pile")
    card = source.locator(".card[data-card]").last.get_attribute("data-card")
    source.locator(".handle").click()
    expect(source).to_have_class(re.compile(r"\bselected\b"))
    target = board.locator(".pile.target").first
    target_id = target.get_attribute("data-pile")
    target.locator(".handle").click()
    page.wait_for_url(re.compile(r"/play/\d+/$"))
    first = state(page)
    assert first["ply"] == 1
    assert card not in first["position"]["piles"][source_id]
    assert first["position"]["piles"][target_id][-1] == card
    # After a few moves, a guest is offered to keep the game, next to the game's bar.
    keep = page.locator("#keep-game")
    expect(keep).to_be_hidden()
    while state(page)["ply"] < 3:
        play_by_click(page, deal_until_a_card_moves(page)[0])
    expect(keep).to_be_visible()
    expect(keep).to_have_attribute("href", re.compile(r"^/register/\?next="))
