"""A finished daily: the end panel (rank, percentile, streak, par after the day), the
share text, and the win animation that respects prefers-reduced-motion.

Screenshots: test-artifacts/end-*.png.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


#: Today's Bristol daily of a new player, one move short of the solver's win, and a
#: resigned result of another player on the same day's board.
ALMOST_WON = """
from django.contrib.auth import get_user_model
from core import clock
from games.services import dailies as daily_services
from games.services import games as game_services
from games.play import move as play_move
from games.play import finish

User = get_user_model()
other = User.objects.create_user(username={other!r}, password="x" * 20)
game, _ = daily_services.daily_game_start(user=other, variant="bristol", day=clock.today())
finish.resign(game_id=game.id, user=other)
user = User.objects.create_user(username={username!r}, password={password!r})
game, _ = daily_services.daily_game_start(user=user, variant="bristol", day=clock.today())
line = game.deal.par_line
for move in line[:-1]:
    game = play_move.apply_move(game_id=game.id, user=user, move=move, ply=game.ply).game
print(game.id, line[-1], len(line))
"""


def login(page: Any, username: str, password: str) -> None:
    page.goto("/login/?next=/")
    page.fill("#login-form input[name=username]", username)
    page.fill("#login-form input[name=password]", password)
    page.click("#login-form button[type=submit]")
    expect(page.locator(".site-nav .username")).to_have_text(username)


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_a_won_daily_ends_with_rank_streak_share_and_par(
    browser: Any,
    live_server_url: str,
    django_shell: Any,
    past_result: Any,
    username: str,
    password: str,
    artifacts: Path,
    motion: str,
) -> None:
    out = django_shell(
        ALMOST_WON.format(username=username, other=username + "x", password=password)
    )
    game_id, last, par = out.strip().splitlines()[-1].split()
    ctx = browser.new_context(
        viewport={"width": 1280, "height": 800},
        base_url=live_server_url,
        reduced_motion=motion,
        locale="en-US",
    )
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server_url)
    try:
        page = ctx.new_page()
        login(page, username, password)
        page.goto(f"/play/{game_id}/")
        expect(page.locator("#conn")).to_have_text("Live")
        # Count the board's animations while the win plays (none with reduced motion).
        page.evaluate("""() => {
            window.celebrated = 0;
            const animate = Element.prototype.animate;
            Element.prototype.animate = function (frames, options) {
                // The cascade: a card bouncing off the board in many steps.
                if (frames.length > 8) window.celebrated = 1;
                return animate.call(this, frames, options);
            };
        }""")
        page.evaluate("m => window.patienceGame.request({kind: 'move', move: m})", last)

        dialog = page.locator("#end-dialog")
        expect(dialog).to_be_visible()
        expect(dialog.locator("#end-title")).to_have_text("You won!")
        rank = dialog.locator("#end-rank")
        expect(rank).to_have_text(
            re.compile(r"^\d+ of \d+ · better than \d+% of the day's players$")
        )
        expect(dialog.locator("#end-streak")).to_have_text("1 day")
        # The place and streak, and the day's next challenge: the next variant's daily.
        expect(dialog.locator("#btn-next-daily")).to_have_text("Next challenge: Belvedere")
        expect(dialog.locator("#end-par-row")).to_be_hidden()  # the par is public after the day
        share = dialog.locator("#share-text")
        expect(share).to_have_text(
            re.compile(
                rf"^Patience: Bristol, daily of March 10, 2026\s+won in {par} moves · \d+:\d\d"
                r" · rank \d+ of \d+$"
            )
        )
        # The result came beside the board, after the celebration, not over it.
        assert not page.evaluate("document.querySelector('#end-dialog').matches(':modal')")
        assert page.evaluate("window.celebrated") == (0 if motion == "reduce" else 1)
        dialog.locator("#btn-share").click()
        expect(dialog.locator("#share-done")).to_have_text("Copied.")
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied.startswith("Patience: Bristol, daily of March 10, 2026\n")
        assert "won in" in copied and "Q" not in copied.split("\n", 1)[1].replace("rank", "")
        page.screenshot(path=str(artifacts / f"end-won-{motion}.png"))
        if motion == "reduce":
            return

        # The day before, once over: the panel compares the result with the par.
        _, game_id, par = past_result(username)
        page.goto(f"/play/{game_id}/")
        page.click("#btn-show-result")
        expect(dialog.locator("#end-par")).to_have_text(f"{par} moves (you: 5)")
        expect(dialog.locator("#end-title")).to_have_text("You resigned this game.")
        expect(dialog.locator("#share-text")).to_contain_text("cards home in 5 moves")

        # German: the share text in the page's language.
        page.click("#end-close")
        page.click('.lang-switch button[value="de"]')
        page.wait_for_url(re.compile(rf"/play/{game_id}/$"))
        page.click("#btn-show-result")
        expect(dialog.locator("#share-text")).to_contain_text("Tagesaufgabe vom 9. März 2026")
        page.screenshot(path=str(artifacts / "end-yesterday-de.png"))
    finally:
        ctx.close()


def test_the_today_page_shows_the_date_streak_and_a_calendar_of_past_days(
    browser: Any,
    live_server_url: str,
    django_shell: Any,
    past_result: Any,
    username: str,
    password: str,
    artifacts: Path,
) -> None:
    django_shell(
        "from django.contrib.auth import get_user_model\n"
        f"get_user_model().objects.create_user(username={username!r}, password={password!r})"
    )
    _, game_id, _ = past_result(username)
    for width, height in [(390, 844), (1280, 800)]:
        ctx = browser.new_context(
            viewport={"width": width, "height": height}, base_url=live_server_url
        )
        try:
            page = ctx.new_page()
            login(page, username, password)
            expect(page.locator(".today-date")).to_contain_text("March 10, 2026")
            expect(page.locator("#my-streak")).to_have_text("Your Bristol streak: 0 days")
            cell = page.locator('#calendar td[data-date="2026-03-09"]')
            expect(cell).to_have_class(re.compile(r"\bplayed\b"))
            expect(cell.locator(".day-result")).to_have_text(re.compile(r"^\d+/52$"))
            expect(page.locator('#calendar td[data-date="2026-03-08"] .day-result')).to_have_text(
                "–"
            )
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            page.locator("#calendar").scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts / f"calendar-{width}.png"), full_page=True)
        finally:
            if width < 600:
                ctx.close()
    cell.get_by_role("link", name="Board").click()
    page.wait_for_url(re.compile(r"/leaderboards/bristol/2026-03-09/$"))
    page.go_back()
    cell.get_by_role("link", name="Replay").click()
    page.wait_for_url(re.compile(r"/replay/\d+/$"))
    expect(page.locator("#rp-step")).to_have_text("Deal (0 of 5)")
    page.go_back()
    cell.get_by_role("button", name="Practice").click()
    page.wait_for_url(re.compile(r"/play/\d+/$"))
    assert not page.url.endswith(f"/play/{game_id}/")
    expect(page.locator("#game-title")).to_contain_text("not ranked")
    page.context.close()
