"""Small things a player trips over: phone tables, double clicks, undo at the start,
keys after a setting, the status after the end, one foundation lit, Hint after the end,
a revoked token's key, the username error, and Strg on German pages."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_the_play_page_details(page: Any, username: str, api_post: Any, sign_up: Any) -> None:
    sign_up(page, username)
    # Bristol seed 0 starts with an Ace free on fan 7 ("t7-f").
    game = api_post(page, "/api/v1/games/", {"variant": "bristol", "seed": 0})
    page.goto(f"/play/{game['id']}/")
    expect(page.locator("#conn")).to_have_text("Live")
    status = page.locator("#status-line")

    page.locator("body").focus()
    page.keyboard.press("Backspace")
    expect(status).to_have_text("Nothing to undo.")

    # One foundation lights up for the Ace, not all four.
    page.locator('[data-pile="t7"] .handle').click()
    expect(page.locator(".foundations .pile.target")).to_have_count(1)
    page.keyboard.press("Escape")

    # After ticking a setting the game's keys still work.
    page.click("#settings summary")
    page.click("#set-key-hints")
    page.keyboard.press("7")
    expect(page.locator('[data-pile="t7"]')).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("Escape")

    # A click on the pile just played to is a click, not a double click (which would send
    # its top card home).
    page.locator('[data-pile="t1"] .handle').click()
    page.locator('[data-pile="t8"] .handle').click()
    page.locator('[data-pile="t8"] .handle').click()
    page.wait_for_function("() => window.patienceGame.state.ply === 1 && !window.patienceGame.busy")
    page.wait_for_timeout(500)
    moves = page.request.get(f"/api/v1/games/{game['id']}/moves/?limit=1000").json()["results"]
    assert [m["move"] for m in moves] == ["t1-t8"]

    # The end: the status line forgets the game in play, and Hint is off.
    page.locator('[data-pile="t2"] .handle').click()
    expect(status).not_to_have_text("")
    page.click("#btn-resign")
    page.click("#confirm-resign")
    expect(page.locator("#end-dialog")).to_be_visible()
    expect(status).to_have_text("")
    expect(page.locator("#btn-hint")).to_be_disabled()

    # German keyboard help says Strg.
    page.click("#end-close")
    page.click('.lang-switch button[value="de"]')
    page.wait_for_url(re.compile(r"/play/\d+/$"))
    expect(page.locator("#keys-help")).to_contain_text("Strg")
    expect(page.locator("#keys-help")).not_to_contain_text("Ctrl")


def test_tokens_and_register_messages(
    page: Any, username: str, password: str, sign_up: Any
) -> None:
    page.goto("/register/")
    page.fill("#register-form input[name=username]", "two words")
    page.fill("#register-form input[name=password]", password)
    page.click("#register-form button[type=submit]")
    expect(page.locator('#register-form [data-error-for="username"]')).to_have_text(
        "A username has 1 to 150 letters, digits and @ . + - _ (no spaces)."
    )
    sign_up(page, username)
    page.goto("/account/tokens/")
    page.fill("#token-name", "soon gone")
    page.click("#token-form button[type=submit]")
    key = page.locator("#new-token-key")
    expect(key).to_have_text(re.compile(r"^pt_\S{20,}$"))
    shown = key.inner_text()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke soon gone").click()
    expect(page.locator("#token-table tbody tr")).to_have_count(0)
    expect(page.locator("#new-token")).to_be_hidden()
    assert shown not in page.locator("main").inner_text()


def test_phone_pages_do_not_scroll_sideways(
    browser: Any, live_server_url: str, username: str, api_post: Any, sign_up: Any
) -> None:
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, base_url=live_server_url, is_mobile=True
    )
    try:
        page = ctx.new_page()
        sign_up(page, username)
        day = api_post(page, "/api/v1/daily/bristol/2026-03-10/play/", {})
        api_post(page, f"/api/v1/games/{day['id']}/resign/", {})
        for variant in ["bristol", "picture-gallery"]:
            api_post(page, "/api/v1/games/", {"variant": variant})
        for path in ["/games/", "/leaderboards/bristol/2026-03-10/", "/"]:
            page.goto(path)
            page.wait_for_load_state("networkidle")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
    finally:
        ctx.close()
