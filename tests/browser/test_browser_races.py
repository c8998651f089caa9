"""Two browsers race on one deal: a private race created in the lobby, joined by its link,
started by its creator; the countdown from the server's clock (months away from the
browser's), moves by keys, each player's progress on the other's page, an opponent's
finish in the live region, the standings with replays, and the rematch.

One player is on a 1366x768 desktop in English, the other on a 390x844 phone in German.
Screenshots go to test-artifacts/races-*.png (not committed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

#: Bristol pile keys (physical keys; the same on QWERTY and QWERTZ for these).
KEYS = {f"t{i}": str(i) for i in range(1, 9)} | {"r1": "q", "r2": "w", "r3": "e", "f": "f"}

#: Race deals dealt as the job would, without the solver (its certificate is not under
#: test here); more than the server's pool size, so no race starts the job.
POOL_FILL = """
from django.conf import settings
from games.services.race_pool import race_pool_fill
settings.RACE_SOLVER_NODES = 0
settings.RACE_POOL_SIZE = settings.RACE_POOL_SIZE + 4
print(race_pool_fill(variants=["bristol"]))
"""


@pytest.fixture
def two_players(
    browser: Any, live_server_url: str, sign_up: Any, username: str, django_shell: Any
) -> Any:
    """Ada on a desktop in English, Grace on a phone in German, both logged in."""
    django_shell(POOL_FILL)
    contexts = [
        browser.new_context(
            viewport={"width": 1366, "height": 768}, locale="en-US", base_url=live_server_url
        ),
        browser.new_context(
            viewport={"width": 390, "height": 844},
            locale="de-DE",
            base_url=live_server_url,
            is_mobile=True,
            has_touch=True,
            device_scale_factor=2,
        ),
    ]
    pages = []
    for ctx, name in zip(contexts, [username + "a", username + "g"], strict=True):
        ctx.set_default_timeout(15_000)
        page = ctx.new_page()
        page.errors = []
        page.on("pageerror", lambda exc, page=page: page.errors.append(str(exc)))
        # Every frame of the race socket, to check that no card ever reaches it.
        page.race_frames = []
        page.on("websocket", lambda ws, page=page: watch(ws, page))
        sign_up(page, name)
        page.username = name
        pages.append(page)
    yield pages
    for page in pages:
        assert not page.errors, f"JavaScript errors on the page: {page.errors}"
    for ctx in contexts:
        ctx.close()


def watch(ws: Any, page: Any) -> None:
    if "/ws/v1/races/" in ws.url:
        ws.on("framereceived", lambda payload: page.race_frames.append(payload))


def racer(page: Any, name: str) -> Any:
    return page.locator(f'#race-players li[data-player="{name}"]')


def game_state(page: Any) -> dict:
    return page.evaluate("window.patienceGame.state")


def no_sideways_scroll(page: Any) -> None:
    width = page.viewport_size["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width, page.url


def play_a_move_by_keys(page: Any) -> None:
    """Press the keys of a legal card move (or deal with Space); waits for the server."""
    st = game_state(page)
    cards = [m for m in st["legal_moves"] if not m.startswith("deal")]
    if cards:
        src, dst = cards[0].split("-")
        page.keyboard.press(KEYS[src])
        page.keyboard.press(KEYS[dst])
    else:
        page.keyboard.press("Space")
    page.wait_for_function(
        "n => window.patienceGame.state.ply === n && !window.patienceGame.busy",
        arg=st["ply"] + 1,
    )


def test_two_browsers_race_on_one_deal(two_players: Any, artifacts: Path) -> None:
    ada, grace = two_players

    # Ada creates a private race in the lobby.
    ada.goto("/races/")
    expect(ada.locator("h1")).to_have_text("Races")
    expect(ada.locator("#open-empty")).to_be_visible()
    ada.screenshot(path=str(artifacts / "races-lobby-1366x768.png"), full_page=True)
    ada.select_option("#create-variant", "bristol")
    ada.click("#create-form button[type=submit]")
    ada.wait_for_url(re.compile(r"/races/[a-z0-9]{10}/$"))
    code = ada.url.rstrip("/").split("/")[-1]
    expect(ada.locator("h1")).to_have_text("Race: Bristol")
    expect(ada.locator("#race-phase")).to_have_text("Waiting for players")
    link = ada.locator("#race-link").input_value()
    assert link.endswith(f"/races/{code}/")
    expect(ada.locator("#btn-race-start")).to_be_disabled()  # one player is too few

    # Grace pastes the link into the lobby (in German), then joins on the race's page.
    grace.goto("/races/")
    expect(grace.locator("h1")).to_have_text("Rennen")
    grace.screenshot(path=str(artifacts / "races-lobby-390x844.png"), full_page=True)
    no_sideways_scroll(grace)
    grace.fill("#join-code", link)
    grace.keyboard.press("Enter")
    grace.wait_for_url(re.compile(rf"/races/{code}/$"))
    grace.click("#btn-race-join")
    expect(racer(grace, grace.username)).to_contain_text("(du)")

    # Ada hears of it in the live region, and may start now.
    news = ada.locator("#race-news")
    expect(news).to_have_attribute("aria-live", "polite")
    expect(news).to_contain_text(f"{grace.username} joined the race.")
    expect(racer(ada, grace.username)).to_be_visible()
    ada.screenshot(path=str(artifacts / "races-waiting-1366x768.png"))
    start = ada.locator("#btn-race-start")
    expect(start).to_be_enabled()
    start.focus()
    ada.keyboard.press("Enter")

    # The countdown deals both games: each page mounts its player's board, held, and
    # without a card of the deal until the start.
    for page in (ada, grace):
        expect(page.locator("#game #board [data-pile='t1']")).to_be_visible()
    assert (
        ada.evaluate("document.getElementById('board').inert")
        and game_state(ada)["position"] is None
    ) or ada.evaluate("document.getElementById('race').dataset.phase") == "running"
    # race.js runs after play.js (modules in order), which may draw the board first.
    ada.wait_for_function("window.patienceRace !== undefined")
    race = ada.evaluate("window.patienceRace.race")
    assert race["status"] in ("countdown", "running")
    assert game_state(ada)["id"] != game_state(grace)["id"]

    # The start comes by the server's clock, months away from the browser's own; then
    # each board shows the deal, the same for both.
    for page in (ada, grace):
        expect(page.locator("#race")).to_have_attribute("data-phase", "running", timeout=12_000)
        assert not page.evaluate("document.getElementById('board').inert")
        expect(page.locator("#game #board [data-pile='t1'] .card-face").first).to_be_visible()
    assert game_state(ada)["position"]["piles"] == game_state(grace)["position"]["piles"]
    expect(ada.locator("#race-news")).to_contain_text("Go!")
    expect(grace.locator("#race-news")).to_contain_text("Los!")
    expect(ada.locator("#race-phase")).to_have_text("Time left")
    # The game's clock starts with the race, not with the countdown before it.
    expect(ada.locator("#timer")).to_have_text(re.compile(r"^0:0\d$"))
    expect(ada.locator("#race-clock")).to_have_text(re.compile(r"^[45]:\d\d$"))

    # Ada plays by keys; Grace sees Ada's moves on her progress bar.
    ada.locator("body").focus()
    play_a_move_by_keys(ada)
    play_a_move_by_keys(ada)
    expect(racer(grace, ada.username)).to_contain_text("2 Züge")
    home = game_state(ada)["score"]
    bar = racer(grace, ada.username).locator("progress")
    expect(bar).to_have_attribute("max", "52")
    expect(bar).to_have_attribute("value", str(home))
    expect(bar).to_have_attribute("aria-valuetext", f"{home} von 52 Karten abgelegt")
    ada.screenshot(path=str(artifacts / "races-running-1366x768.png"))
    grace.screenshot(path=str(artifacts / "races-running-390x844.png"))
    no_sideways_scroll(grace)

    # Ada resigns: Grace's live region says so.
    ada.click("#btn-resign")
    ada.click("#confirm-resign")
    expect(ada.locator("#end-dialog")).to_be_visible()
    ada.click("#end-close")
    expect(grace.locator("#race-news")).to_contain_text(f"{ada.username} hat aufgegeben")
    expect(racer(grace, ada.username)).to_contain_text("Aufgegeben")

    # Grace resigns too: the race is over, both see the standings with replays, below
    # the board (they do not push it down).
    grace.click("#btn-resign")
    grace.click("#confirm-resign")
    grace.click("#end-close")
    for page in (ada, grace):
        expect(page.locator("#race-standings")).to_be_visible()
        expect(page.locator("#standings-rows tr")).to_have_count(2)
        board = page.locator("#board").bounding_box()
        assert page.locator("#race-standings").bounding_box()["y"] >= board["y"] + board["height"]
    expect(ada.locator("#race-phase")).to_have_text("The race is over")
    rows = ada.locator("#standings-rows tr")
    # Ada resigned first with her moves; the order follows cards home, then fewer moves.
    standings = ada.evaluate("window.patienceRace.race.standings")
    assert [s["place"] for s in standings] == [1, 2]
    expect(rows.nth(0)).to_contain_text(standings[0]["username"])
    # The race's end says each player's place in the game's result, beside the board.
    for page in (ada, grace):
        place = next(s["place"] for s in standings if s["username"] == page.username)
        if not page.locator("#end-dialog").is_visible():  # closed after the race ended
            page.click("#btn-show-result")
        expect(page.locator("#end-place")).to_have_text(
            f"{place} of 2" if page is ada else f"{place} von 2"
        )
        page.click("#end-close")
    replay = ada.locator(f'#standings-rows a[href="/races/{code}/replay/{ada.username}/"]')
    expect(replay).to_have_attribute("aria-label", f"Replay the game of {ada.username}")
    ada.screenshot(path=str(artifacts / "races-finished-1366x768.png"), full_page=True)
    grace.screenshot(path=str(artifacts / "races-finished-390x844.png"), full_page=True)
    no_sideways_scroll(grace)

    # No card of any game ever went over the race socket: counts only.
    for page in (ada, grace):
        assert page.race_frames
        for frame in page.race_frames:
            message = json.loads(frame)
            assert "piles" not in frame and "position" not in frame, message

    # The replay of Ada's game steps through her two moves.
    replay.click()
    ada.wait_for_url(re.compile(rf"/races/{code}/replay/{ada.username}/$"))
    expect(ada.locator("#rp-step")).to_contain_text("Deal (0 of 2)")
    ada.keyboard.press("End")
    expect(ada.locator("#rp-step")).to_contain_text("Move 2 of 2")
    ada.go_back()
    expect(ada.locator("#race-standings")).to_be_visible()  # the page as it is now

    # Rematch: Ada asks, Grace is told and joins the same new race.
    ada.click("#btn-race-rematch")
    ada.wait_for_url(re.compile(rf"/races/(?!{code})[a-z0-9]{{10}}/$"))
    rematch = ada.url.rstrip("/").split("/")[-1]
    assert rematch != code
    expect(grace.locator("#race-news")).to_contain_text("Eine Revanche ist offen.")
    expect(grace.locator("#btn-race-rematch")).to_have_text("Der Revanche beitreten")
    grace.click("#btn-race-rematch")
    grace.wait_for_url(re.compile(rf"/races/{rematch}/$"))
    expect(racer(ada, grace.username)).to_be_visible()
    expect(ada.locator("#btn-race-start")).to_be_enabled()


def test_a_quick_race_from_the_lobby_counts_down_over_a_held_board(
    two_players: Any, artifacts: Path
) -> None:
    ada, grace = two_players
    ada.goto("/races/")
    ada.click('[data-quick][data-variant="bristol"]')
    ada.wait_for_url(re.compile(r"/races/[a-z0-9]{10}/$"))
    code = ada.url.rstrip("/").split("/")[-1]
    expect(ada.locator("#race-phase")).to_have_text("Waiting for players")
    expect(ada.locator("#btn-race-leave")).to_be_visible()
    expect(ada.locator("#btn-race-start")).to_be_hidden()  # a quick race starts by itself

    # Grace finds it among the open races of the lobby and joins it from there.
    grace.goto("/races/")
    row = grace.locator(f'#open-rows tr[data-code="{code}"]')
    expect(row).to_contain_text("Bristol")
    expect(row).to_contain_text("1 von 8")
    expect(row).to_contain_text("Wenn ein zweiter Spieler beitritt")
    row.get_by_role("button").click()
    grace.wait_for_url(re.compile(rf"/races/{code}/$"))

    # Two players: the countdown runs; both boards are mounted, covered, held and without
    # a card: the page has none of the deal before the start.
    for page in (ada, grace):
        expect(page.locator("#race")).to_have_attribute("data-phase", "countdown")
        expect(page.locator("#game #board [data-pile='t1']")).to_be_visible()
        expect(page.locator("#game #board .card-face")).to_have_count(0)
        assert game_state(page)["position"] is None
        assert page.evaluate("document.getElementById('board').inert")
        assert page.evaluate("document.querySelector('.game-controls').inert")
        expect(page.locator("#race-overlay")).to_have_text(re.compile(r"^\d+$"))
    expect(ada.locator("#race-phase")).to_have_text("Starts in")
    left = int(ada.locator("#race-clock").inner_text())
    assert 1 <= left <= 20
    ada.screenshot(path=str(artifacts / "races-countdown-1366x768.png"))
    grace.screenshot(path=str(artifacts / "races-countdown-390x844.png"))
    no_sideways_scroll(grace)

    # A key does nothing before the start: no move is sent.
    ada.locator("body").focus()
    ada.keyboard.press("Space")
    ada.wait_for_timeout(300)
    assert ada.evaluate("window.patienceGame.state.ply") == 0
    expect(ada.locator("#status-line")).to_have_text("")

    # Before the start a player may still leave; the other waits for someone new.
    grace.click("#btn-race-leave")
    grace.wait_for_url(re.compile(r"/races/$"))
    expect(ada.locator("#race-phase")).to_have_text("Waiting for players")
    expect(ada.locator("#game")).to_have_count(0)  # the countdown's game is gone again
    expect(racer(ada, grace.username)).to_have_count(0)
