"""The game page fits the window, stays readable and never jumps.

Every pile, with its top card, is on screen without scrolling at the common desktop
sizes and on a phone held upright, also when the whole stock is dealt (the reserves
at their fullest); no card covers the corner index (rank and suit) of another one;
Picture Gallery cards are at least 70 px wide at 1280x720; and selecting a card moves
nothing. Screenshots of what the window shows go to test-artifacts/layout-*.png.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.layout import INDEX_SHOWN, SIZES, VARIANTS

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def player(
    browser: Any,
    live_server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    api_post: Any,
    sign_up: Any,
) -> Any:
    """A logged-in session (its storage state) with a dealt-out game of each variant."""
    ctx = browser.new_context(base_url=live_server_url)
    page = ctx.new_page()
    sign_up(page, "layout")
    games = {}
    for variant, seed in VARIANTS:
        game = api_post(page, "/api/v1/games/", {"variant": variant, "seed": seed})
        while "deal" in game["legal_moves"]:
            game = api_post(
                page, f"/api/v1/games/{game['id']}/moves/", {"move": "deal", "ply": game["ply"]}
            )
        assert game["position"]["stock"] == 0
        games[variant] = game["id"]
    state = tmp_path_factory.mktemp("layout") / "state.json"
    ctx.storage_state(path=str(state))
    ctx.close()
    return {"state": str(state), "games": games}


@pytest.fixture
def sized(browser: Any, live_server_url: str, player: Any) -> Iterator[Any]:
    """A function giving a page of a window size, logged in as the player."""
    contexts: list[Any] = []

    def make(width: int, height: int) -> Any:
        phone = width < 600
        ctx = browser.new_context(
            viewport={"width": width, "height": height},
            base_url=live_server_url,
            storage_state=player["state"],
            is_mobile=phone,
            has_touch=phone,
            device_scale_factor=2 if phone else 1,
        )
        contexts.append(ctx)
        return ctx.new_page()

    yield make
    for ctx in contexts:
        ctx.close()


def outside(box: dict, width: int, height: int) -> bool:
    return (
        box["x"] < 0
        or box["y"] < 0
        or box["x"] + box["width"] > width + 0.5
        or box["y"] + box["height"] > height + 0.5
    )


PILE_BOXES = """() => [...document.querySelectorAll('#board [data-pile]')].map(p => {
  const r = p.getBoundingClientRect();
  const h = p.querySelector('.handle') || p.querySelector('.card:last-of-type');
  const t = h.getBoundingClientRect();
  return {pile: p.dataset.pile, box: {x: r.x, y: r.y, width: r.width, height: r.height},
          top: {x: t.x, y: t.y, width: t.width, height: t.height}};
})"""


@pytest.mark.parametrize("variant", [v for v, _ in VARIANTS])
def test_every_pile_is_on_screen_at_common_sizes(
    sized: Any, player: Any, variant: str, artifacts: Path
) -> None:
    widths = {}
    for width, height in SIZES:
        page = sized(width, height)
        page.goto(f"/play/{player['games'][variant]}/")
        expect(page.locator('#board [data-pile="r1"] .card').first).to_be_visible()
        page.screenshot(path=str(artifacts / f"layout-{variant}-{width}x{height}.png"))
        boxes = page.evaluate(PILE_BOXES)
        assert len(boxes) == (16 if variant in ("bristol", "belvedere") else 34)
        off = [b["pile"] for b in boxes if outside(b["box"], width, height)]
        off += [b["pile"] + " top" for b in boxes if outside(b["top"], width, height)]
        assert not off, f"{variant} at {width}x{height}: off screen: {off}"
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if variant not in ("bristol", "belvedere"):  # each row's start cards, phone included
            for row in range(3):
                expect(page.locator(".gallery-row .row-label").nth(row)).to_be_visible()
        shown = page.evaluate(INDEX_SHOWN)
        least, worst = shown["least"], shown["worst"]
        assert least > 0.99, f"{variant} at {width}x{height}: the index of {worst} is covered"
        widths[(width, height)] = page.locator("#board .card[data-card]").first.bounding_box()[
            "width"
        ]
    # The cards grow with the window, and stay big enough to read and tap on a phone.
    assert widths[(1920, 1080)] > widths[(1366, 768)] > widths[(1280, 720)] * 0.99
    assert widths[(1280, 720)] >= 70
    assert widths[(390, 844)] >= (36 if variant in ("bristol", "belvedere") else 32)


@pytest.mark.parametrize("width,height", [(1366, 768), (390, 844)])
def test_selecting_a_card_moves_nothing(
    sized: Any, width: int, height: int, artifacts: Path, api_post: Any
) -> None:
    page = sized(width, height)
    game = api_post(page, "/api/v1/games/", {"variant": "bristol", "seed": 7})
    page.goto(f"/play/{game['id']}/")
    expect(page.locator("#conn")).to_have_text("Live")
    page.wait_for_function("document.getAnimations().length === 0")  # the deal has landed
    source = next(m for m in game["legal_moves"] if not m.startswith("deal")).split("-")[0]
    layout = "() => [...document.querySelectorAll('#board, #board [data-pile], .game-aside')]" + (
        ".map(n => { const r = n.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })"
    )
    before = page.evaluate(layout)
    handle = page.locator(f'[data-pile="{source}"] .handle')
    handle.tap() if width < 600 else handle.click()
    expect(page.locator(f'[data-pile="{source}"]')).to_have_class(re.compile(r"\bselected\b"))
    expect(page.locator("#status-line")).to_contain_text("selected")
    assert page.evaluate(layout) == before
    page.screenshot(path=str(artifacts / f"layout-selected-{width}x{height}.png"))
    page.keyboard.press("Escape")
    expect(page.locator("#status-line")).to_have_text("")
    assert page.evaluate(layout) == before
    if width < 640:
        # A phone keeps no blank band for the status line: the board starts right under the
        # buttons, and a message floats at the bottom of the screen, in view.
        controls = page.locator(".game-controls").bounding_box()
        board = page.locator("#board").bounding_box()
        assert board["y"] - (controls["y"] + controls["height"]) < 16
        handle.tap()
        line = page.locator("#status-line")
        expect(line).to_contain_text("selected")
        box = line.bounding_box()
        assert box["y"] > board["y"] and box["y"] + box["height"] <= height
