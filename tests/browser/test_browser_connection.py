"""A lost connection is visible and safe: the server stops and starts again.

While the server cannot be reached the page says so, Deal and Resign are disabled,
clicks are refused rather than queued, and the one move that waits is sent once
the server is back (once: the ply makes the retry safe).
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.servers import free_port, start_daphne, stop, wait_until_up
from tests.pinned_clock import PINNED_NOW, pinned_clock_env

pytestmark = pytest.mark.browser


def test_server_stopped_and_restarted_queues_no_irreversible_action(
    browser: Any,
    server_env: dict[str, str],
    tmp_path: Path,
    artifacts: Path,
    api_post: Any,
    sign_up: Any,
) -> None:
    port = free_port()
    with open(tmp_path / "daphne.log", "w") as log:
        proc, base = start_daphne(server_env, log, port)
        try:
            wait_until_up(proc, base)
            ctx = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base)
            ctx.set_default_timeout(20_000)
            page = ctx.new_page()
            sign_up(page, "outage")
            game = api_post(page, "/api/v1/games/", {"variant": "bristol", "seed": 7})
            assert "t1-t8" in game["legal_moves"]
            stock = game["position"]["stock"]
            page.goto(f"/play/{game['id']}/")
            conn = page.locator("#conn")
            expect(conn).to_have_text("Live")
            expect(page.locator("#btn-deal")).to_be_enabled()
            # Every text of the status line, with the ply the page had then.
            page.evaluate("""() => {
                window.statusLog = [];
                const line = document.getElementById('status-line');
                new MutationObserver(() => window.statusLog.push(
                    [line.textContent, window.patienceGame.state.ply]
                )).observe(line, {childList: true, characterData: true, subtree: true});
            }""")

            stop([proc])
            expect(conn).to_have_text("Reconnecting…")
            expect(page.locator("#status-line")).to_contain_text("cannot be reached")
            expect(page.locator("#btn-deal")).to_be_disabled()
            expect(page.locator("#btn-resign")).to_be_disabled()

            # One card move waits; the page says so.
            page.locator('[data-pile="t1"] .handle').click()
            page.locator('[data-pile="t8"] .handle').click()
            expect(page.locator("#status-line")).to_have_text(
                "The server cannot be reached. Reconnecting; your move is waiting."
            )
            # The card that waits is marked where it was drawn; no other card is picked up.
            expect(page.locator('[data-pile="t8"]')).to_have_class(re.compile(r"\bpending\b"))
            page.locator('[data-pile="t2"] .handle').click()
            expect(page.locator("#board .pile.selected")).to_have_count(0)
            # Deal by button and by key, and another move: refused, never queued.
            page.locator("#btn-deal").click(force=True)
            page.locator("body").focus()
            for _ in range(3):
                page.keyboard.press("Space")
            expect(page.locator("#status-line")).to_have_text(
                "Reconnecting; your move is waiting. That click was not sent."
            )
            expect(page.locator("#btn-deal")).to_be_disabled()
            # Closing the tab now would lose the move: the page asks first.
            asks = page.evaluate("""() => {
                const ev = new Event('beforeunload', {cancelable: true});
                window.dispatchEvent(ev);
                return ev.defaultPrevented;
            }""")
            assert asks
            page.screenshot(path=str(artifacts / "outage.png"))

            proc, _ = start_daphne(server_env, log, port)
            wait_until_up(proc, base)
            expect(conn).to_have_text("Live")
            page.wait_for_function(
                "() => window.patienceGame.state.ply === 1 && !window.patienceGame.busy"
            )
            expect(page.locator("#btn-deal")).to_be_enabled()
            expect(page.locator("#board .pile.pending")).to_have_count(0)
            log_entries = page.request.get(f"/api/v1/games/{game['id']}/moves/").json()["results"]
            assert [e["move"] for e in log_entries] == ["t1-t8"]
            assert page.evaluate("window.patienceGame.state.position.stock") == stock
            expect(page.locator("#status-line")).to_have_text(
                re.compile("Connected again: your move is stored|^$")
            )
            log = page.evaluate("window.statusLog")
            # While the move waited every message said so; "Connected again" only once stored.
            texts = [text for text, ply in log if ply == 0]
            first = next(i for i, text in enumerate(texts) if "your move is waiting" in text)
            assert all("your move is waiting" in text for text in texts[first:]), texts
            assert all(ply == 1 for text, ply in log if "Connected again" in text), log
            assert not page.evaluate("""() => {
                const ev = new Event('beforeunload', {cancelable: true});
                window.dispatchEvent(ev);
                return ev.defaultPrevented;
            }""")
            ctx.close()
        finally:
            stop([proc])


def test_a_ranked_daily_open_at_midnight_is_told_at_once(
    browser: Any,
    server_env: dict[str, str],
    tmp_path: Path,
    artifacts: Path,
    api_post: Any,
    sign_up: Any,
) -> None:
    """A server whose clock is half a minute before the day's end: the page says the
    game no longer counts when the day ends, and the server refuses the next move.

    The clock ticks from the server's start, so the margin must cover the start, the
    sign-up and the game's start on a loaded machine (8 s did not, at load 8)."""
    end = PINNED_NOW.replace(hour=0) + timedelta(days=1)
    env = {**server_env, **pinned_clock_env(end - timedelta(seconds=30))}
    with open(tmp_path / "daphne.log", "w") as log:
        proc, base = start_daphne(env, log)
        try:
            wait_until_up(proc, base)
            ctx = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=base)
            page = ctx.new_page()
            sign_up(page, "owl")
            day = PINNED_NOW.date().isoformat()
            game = api_post(page, f"/api/v1/daily/bristol/{day}/play/", {})
            assert game["ranked"] and game["date"] == day
            page.goto(f"/play/{game['id']}/")
            expect(page.locator("#game-title")).to_contain_text("ranked")
            expect(page.locator("#day-over-banner")).to_be_hidden()

            banner = page.locator("#day-over-banner")
            expect(banner).to_be_visible(timeout=45_000)
            expect(banner).to_contain_text("this game no longer counts")
            expect(page.locator("#game-title")).to_contain_text("no longer counts")
            expect(page.locator("#btn-deal")).to_be_disabled()
            page.screenshot(path=str(artifacts / "midnight.png"))

            token = page.request.get("/api/v1/auth/csrf/").json()["csrf_token"]
            late = page.request.post(
                f"/api/v1/games/{game['id']}/moves/",
                data=json.dumps({"move": "deal", "ply": 0}),
                headers={"X-CSRFToken": token, "Content-Type": "application/json"},
            )
            # The game's socket ended it at the day's end (or, had it not, this move would
            # have): expired, not won, and the end panel says so.
            assert late.status == 409
            assert late.json()["error"]["code"] in {"game_finished", "day_over"}
            expect(page.locator("#end-dialog #end-title")).to_have_text("Expired: the day ended")
            page.click("#end-close")

            # Practice of the same deal, from the banner.
            banner.get_by_role("button", name="Play it as practice").click()
            page.wait_for_url(re.compile(r"/play/\d+/$"))
            expect(page.locator("#game-title")).to_contain_text("not ranked")
            ctx.close()
        finally:
            stop([proc])
