"""Every page fits a phone in both languages, and no page jumps while it loads.

At 360 and 390 px, in English and German, no page scrolls sideways: the play page (with
Finish in Deal's place, and with the longest fans), the landing page, a day's board, a
replay, the races and the rules; on the play pages the nav folds into a menu. As they load
at 1280x720, the play page, the replay and the German landing page and day board shift
their layout by at most 0.05 (CLS). Screenshots go to test-artifacts/fit-*.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.layout import CLS, GAME_AT, long_fans, near_win
from tests.pinned_clock import PINNED_DAY

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def pages(
    browser: Any,
    live_server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    sign_up: Any,
    django_shell: Any,
) -> Any:
    """A player's session (storage state) and the pages to check."""
    from tests.browser.conftest import PAST_RESULT

    ctx = browser.new_context(base_url=live_server_url)
    page = ctx.new_page()
    sign_up(page, "fit")
    fans = django_shell(GAME_AT.format(position=long_fans(), username="fit")).split()[-1]
    near = django_shell(GAME_AT.format(position=near_win(), username="fit")).split()[-1]
    day, _, _ = django_shell(PAST_RESULT.format(username="fit")).split()[-3:]
    result = page.request.get(f"/api/v1/daily/bristol/{day}/board/").json()["results"][0]
    state = tmp_path_factory.mktemp("fit") / "state.json"
    ctx.storage_state(path=str(state))
    ctx.close()
    return {
        "state": str(state),
        "urls": {
            "play-finish": f"/play/{near}/",
            "play-fans": f"/play/{fans}/",
            "home": "/",
            "day": f"/leaderboards/bristol/{PINNED_DAY.isoformat()}/",
            "replay": f"/leaderboards/bristol/{day}/replay/{result['result_id']}/",
            "races": "/races/",
            "rules": "/rules/picture-gallery/",
        },
    }


def open_page(browser: Any, base: str, state: str, lang: str, width: int, height: int) -> Any:
    phone = width < 600
    ctx = browser.new_context(
        viewport={"width": width, "height": height},
        base_url=base,
        storage_state=state,
        is_mobile=phone,
        has_touch=phone,
        locale="de-DE" if lang == "de" else "en-US",
    )
    ctx.add_cookies([{"name": "django_language", "value": lang, "url": base}])
    return ctx


def overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@pytest.mark.parametrize("lang", ["en", "de"])
def test_no_page_scrolls_sideways_on_a_phone(
    browser: Any, live_server_url: str, pages: Any, lang: str, artifacts: Path
) -> None:
    for width in (360, 390):
        ctx = open_page(browser, live_server_url, pages["state"], lang, width, 780)
        page = ctx.new_page()
        for name, url in pages["urls"].items():
            page.goto(url)
            page.wait_for_load_state("networkidle")
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, f"{name} ({lang}, {width} px) is {wide} px wide"
            if name.startswith("play"):
                # The nav is a menu; the toolbar's buttons are all on screen, side by side.
                expect(page.locator(".site-nav")).to_be_hidden()
                buttons = page.locator(".game-controls .button:visible")
                boxes = [buttons.nth(i).bounding_box() for i in range(buttons.count())]
                assert all(b["x"] + b["width"] <= width for b in boxes), (name, lang, boxes)
                assert len({round(b["y"]) for b in boxes}) == 1, (name, lang, boxes)
                head = [page.locator(s).bounding_box() for s in (".brand", ".nav-toggle")]
                assert not overlap(*head), (name, lang, head)
                page.screenshot(path=str(artifacts / f"fit-{name}-{lang}-{width}.png"))
        # The menu opens the nav (and the language switch) and closes it again.
        page.goto(pages["urls"]["play-finish"])
        page.click(".nav-toggle")
        expect(page.locator(".site-nav")).to_be_visible()
        expect(page.locator(".lang-switch")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.click(".nav-toggle")
        expect(page.locator(".site-nav")).to_be_hidden()
        ctx.close()


def test_pages_do_not_jump_while_they_load(browser: Any, live_server_url: str, pages: Any) -> None:
    shifts = {}
    for lang, names in (("en", ["play-fans", "play-finish", "replay"]), ("de", ["home", "day"])):
        ctx = open_page(browser, live_server_url, pages["state"], lang, 1280, 720)
        page = ctx.new_page()
        for name in names:
            page.goto(pages["urls"][name])
            shifts[f"{name} ({lang})"] = page.evaluate(CLS, 1000)
        ctx.close()
    assert all(cls <= 0.05 for cls in shifts.values()), shifts
