"""Every corner index stays readable on the longest piles, with a card picked up too.

A Bristol game set to a 14-card and a 13-card fan (``devtools.layout.long_fans``) and a
Picture Gallery game with its whole stock dealt (the reserves at their fullest), at the
common sizes and at 360 px: no card covers any part of another card's index, picking a
card up moves nothing and marks it (and its targets) inside their own cards, and the page
never scrolls sideways. Screenshots go to test-artifacts/fans-*.png.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.layout import GAME_AT, INDEX_SHOWN, SIZES, long_fans

pytestmark = pytest.mark.browser

#: The common sizes and a small phone.
ALL_SIZES = [*SIZES, (360, 740)]

#: Where each card is laid out, and whether anything of a mark reaches outside it.
MARKS = """() => [...document.querySelectorAll('#board .card')].map((c) => {
  const s = getComputedStyle(c);
  const after = getComputedStyle(c, '::after');
  const r = c.getBoundingClientRect();
  const out = (st) => st.outlineStyle !== 'none'
    && parseFloat(st.outlineOffset) + parseFloat(st.outlineWidth) > 0;
  return {card: c.dataset.card || '', box: [r.x, r.y, r.width, r.height], transform: s.transform,
          outside: out(s) || (after.content !== 'none' && (after.inset !== '0px' || out(after)))};
})"""

#: Resolves after two frames: the board has fitted the new window size.
FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))"


@pytest.fixture(scope="module")
def games(
    browser: Any,
    live_server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    api_post: Any,
    sign_up: Any,
    django_shell: Any,
) -> Any:
    """A logged-in session (its storage state), a Bristol game with the longest fans and a
    Picture Gallery game with its whole stock dealt."""
    ctx = browser.new_context(base_url=live_server_url)
    page = ctx.new_page()
    sign_up(page, "fans")
    bristol = django_shell(GAME_AT.format(position=long_fans(), username="fans")).split()[-1]
    gallery = api_post(page, "/api/v1/games/", {"variant": "picture-gallery", "seed": 9})
    while "deal" in gallery["legal_moves"]:
        url = f"/api/v1/games/{gallery['id']}/moves/"
        gallery = api_post(page, url, {"move": "deal", "ply": gallery["ply"]})
    state = tmp_path_factory.mktemp("fans") / "state.json"
    ctx.storage_state(path=str(state))
    ctx.close()
    return {"state": str(state), "bristol": bristol, "gallery": gallery["id"]}


@pytest.fixture
def phone_or_desktop(browser: Any, live_server_url: str, games: Any) -> Iterator[Any]:
    """A page logged in as the player: ``make(phone)`` (touch and a small screen, or not)."""
    contexts: list[Any] = []

    def make(phone: bool) -> Any:
        ctx = browser.new_context(
            viewport={"width": 390, "height": 844} if phone else {"width": 1280, "height": 720},
            base_url=live_server_url,
            storage_state=games["state"],
            is_mobile=phone,
            has_touch=phone,
            device_scale_factor=2 if phone else 1,
            reduced_motion="reduce",
        )
        contexts.append(ctx)
        return ctx.new_page()

    yield make
    for ctx in contexts:
        ctx.close()


def fit(page: Any, width: int, height: int) -> None:
    """Resize the window and wait for the board to fit it again."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_function(FRAMES)


def check_indexes(page: Any, where: str) -> None:
    """No index is covered (to the pixel: on a small card the font's box is rounded), and
    the page does not scroll sideways."""
    shown = page.evaluate(INDEX_SHOWN)
    assert shown["cut"] < 0.5, f"{where}: the index of {shown['worst']} is covered: {shown}"
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_long_bristol_fans_show_every_index(
    phone_or_desktop: Any, games: Any, phone: bool, artifacts: Path
) -> None:
    page = phone_or_desktop(phone)
    page.goto(f"/play/{games['bristol']}/")
    expect(page.locator('#board [data-pile="t1"] .card[data-card]')).to_have_count(14)
    expect(page.locator('#board [data-pile="t2"] .card[data-card]')).to_have_count(13)
    sizes = [s for s in ALL_SIZES if (s[0] < 600) == phone]
    for width, height in sizes:
        fit(page, width, height)
        where = f"{width}x{height}"
        check_indexes(page, where)
        for pile in ("t1", "t2"):
            full = page.evaluate(INDEX_SHOWN, pile)
            assert full["cards"] == {"t1": 14, "t2": 13}[pile] and full["cut"] < 0.5, full
        # Every pile's top card is on screen: no scrolling to reach the longest fan.
        bottom = page.evaluate(
            "Math.max(...[...document.querySelectorAll('#board .pile')]"
            ".map((p) => p.getBoundingClientRect().bottom))"
        )
        assert bottom <= height + 0.5, f"{where}: a pile ends at {bottom}"
        # Picked up: marked in place, its target too; still no index covered.
        before = page.evaluate(MARKS)
        handle = page.locator('[data-pile="t1"] .handle')
        handle.tap() if phone else handle.click()
        expect(page.locator('[data-pile="t1"]')).to_have_class(re.compile(r"\bselected\b"))
        expect(page.locator("#board .pile.target")).not_to_have_count(0)
        after = page.evaluate(MARKS)
        assert [c["box"] for c in after] == [c["box"] for c in before], where
        assert all(c["transform"] == "none" for c in after), where
        assert not [c["card"] for c in after if c["outside"]], f"{where}: a mark reaches out"
        check_indexes(page, where + " picked up")
        page.screenshot(path=str(artifacts / f"fans-bristol-{where}-picked.png"))
        page.keyboard.press("Escape")
        expect(page.locator('[data-pile="t1"]')).not_to_have_class(re.compile(r"\bselected\b"))


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_full_gallery_reserves_show_every_index(
    phone_or_desktop: Any, games: Any, phone: bool, artifacts: Path
) -> None:
    page = phone_or_desktop(phone)
    page.goto(f"/play/{games['gallery']}/")
    expect(page.locator('#board [data-pile="r1"] .card').first).to_be_visible()
    state = page.evaluate("window.patienceGame.state")
    source = next(m for m in state["legal_moves"] if not m.startswith("deal")).split("-")[0]
    for width, height in [s for s in ALL_SIZES if (s[0] < 600) == phone]:
        fit(page, width, height)
        where = f"{width}x{height}"
        check_indexes(page, where)
        handle = page.locator(f'[data-pile="{source}"] .handle')
        handle.tap() if phone else handle.click()
        expect(page.locator(f'[data-pile="{source}"]')).to_have_class(re.compile(r"\bselected\b"))
        marks = page.evaluate(MARKS)
        assert not [c["card"] for c in marks if c["outside"] or c["transform"] != "none"], where
        check_indexes(page, where + " picked up")
        page.screenshot(path=str(artifacts / f"fans-gallery-{where}-picked.png"))
        page.keyboard.press("Escape")
    assert json.dumps(state)  # the state the page was given is the server's JSON
