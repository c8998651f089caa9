"""Motion (web/static/web/motion.js): a new deal flies out of the stock card by card, a
move slides its card, a deal's cards fly one after another; with prefers-reduced-motion
nothing moves at all.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

#: Every animation the page starts on a card, logged as it starts (a finished one is gone
#: from document.getAnimations()): its card, delay, duration and number of keyframes.
LOG_ANIMATIONS = """
window.animLog = [];
const animate = Element.prototype.animate;
Element.prototype.animate = function (frames, options) {
  if (this.dataset && this.dataset.card) {
    window.animLog.push({card: this.dataset.card, delay: options.delay || 0,
                         duration: options.duration, frames: frames.length});
  }
  return animate.call(this, frames, options);
};
"""


def logged(page: Any) -> list[dict]:
    """The animations logged since the last call."""
    return page.evaluate("window.animLog.splice(0)")


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_deal_moves_and_deals_are_animated_unless_motion_is_reduced(
    browser: Any, live_server_url: str, sign_up: Any, api_post: Any, username: str, motion: str
) -> None:
    ctx = browser.new_context(
        viewport={"width": 1280, "height": 800}, base_url=live_server_url, reduced_motion=motion
    )
    try:
        ctx.add_init_script(LOG_ANIMATIONS)
        page = ctx.new_page()
        sign_up(page, username)
        game = api_post(page, "/api/v1/games/", {"variant": "bristol", "seed": 7})
        page.goto(f"/play/{game['id']}/")
        # A new game: all 27 cards fly out of the stock, one after another.
        expect(page.locator("#conn")).to_have_text("Live")
        page.wait_for_function("document.getAnimations().length === 0")
        opening = logged(page)

        card_move = next(m for m in game["legal_moves"] if m != "deal")
        page.evaluate("m => window.patienceGame.request({kind: 'move', move: m})", card_move)
        page.wait_for_function("window.patienceGame.state.ply === 1")
        page.wait_for_function("document.getAnimations().length === 0")
        moved = logged(page)

        page.click("#btn-deal")
        page.wait_for_function("window.patienceGame.state.ply === 2")
        dealt = logged(page)
    finally:
        ctx.close()
    if motion == "reduce":
        assert opening == moved == dealt == []
        return
    # (A redraw while they fly, such as the keyboard layout's, lets them fly on.)
    opening = [a for a in opening if a["frames"] == 2][:27]
    assert len(opening) == 27
    assert len({a["delay"] for a in opening}) == 27  # one by one
    src = card_move.split("-")[0]
    assert [a["card"] for a in moved] == [game["position"]["piles"][src][-1]]
    assert all(150 <= a["duration"] <= 250 for a in opening + moved + dealt)
    assert len(dealt) == 3 and sorted(a["delay"] for a in dealt) == [a["delay"] for a in dealt]
    assert dealt[0]["delay"] < dealt[1]["delay"] < dealt[2]["delay"]


def test_a_dragged_card_is_opaque_its_target_glows_and_a_bad_drop_slides_back(
    browser: Any, live_server_url: str, sign_up: Any, api_post: Any, username: str
) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=live_server_url)
    try:
        ctx.add_init_script(LOG_ANIMATIONS)
        page = ctx.new_page()
        sign_up(page, username)
        game = api_post(page, "/api/v1/games/", {"variant": "bristol", "seed": 7})
        page.goto(f"/play/{game['id']}/")
        expect(page.locator("#conn")).to_have_text("Live")
        page.wait_for_function("document.getAnimations().length === 0")
        move = next(m for m in game["legal_moves"] if m != "deal" and not m.endswith("-f"))
        src, dst = move.split("-")
        piles = game["position"]["piles"]
        wrong = next(
            f"t{i}"
            for i in range(1, 9)
            if f"t{i}" not in (src, dst) and f"{src}-t{i}" not in game["legal_moves"]
        )
        logged(page)

        def centre(pile: str) -> tuple[float, float]:
            box = page.locator(f'[data-pile="{pile}"] .handle').bounding_box()
            return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

        start = page.locator(f'[data-pile="{src}"] .card').last.bounding_box()
        page.mouse.move(start["x"] + start["width"] / 2, start["y"] + 10)
        page.mouse.down()
        page.mouse.move(*centre(dst), steps=8)
        assert (
            page.evaluate("getComputedStyle(document.querySelector('.drag-ghost')).opacity") == "1"
        )
        expect(page.locator(f'[data-pile="{dst}"]')).to_have_class(re.compile(r"\bdrop-glow\b"))
        page.mouse.move(*centre(wrong), steps=8)
        expect(page.locator(".pile.drop-glow")).to_have_count(0)
        page.mouse.up()
        expect(page.locator("#status-line")).to_have_text("That move is not allowed.")
        expect(page.locator(".drag-ghost")).to_have_count(0)
        back = [a for a in logged(page) if a["duration"] == 150]
        assert [a["card"] for a in back] == [piles[src][-1]]
        assert page.evaluate("window.patienceGame.state.ply") == 0
    finally:
        ctx.close()
