"""axe-core finds no accessibility violation on any page of the site.

Every page a visitor, a guest and a player reach: the landing page, log-in and register, the
rules, the boards, a daily's play page, the play page of each family, the calendar, my games,
API tokens, the race lobby, a race, its replay and a daily's replay, a player's statistics.
The API's own documentation pages (Swagger UI, Redoc) are a package's pages, not checked.
axe-core comes from npm (``axe_script``); the counts per page go to test-artifacts/axe.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.layout import GAME_AT, near_win
from tests.pinned_clock import PINNED_DAY

pytestmark = pytest.mark.browser

#: A finished private Bristol race of the player against a second account: its code.
FINISHED_RACE = """
from datetime import timedelta
from unittest import mock

from django.conf import settings
from django.contrib.auth import get_user_model

from devtools.accounts import PASSWORD
from core import clock
from games.models import Game
from games.play import finish
from games.services import race_pool
from games.services import races as race_services

settings.RACE_SOLVER_NODES = 0
settings.RACE_POOL_SIZE = settings.RACE_POOL_SIZE + 1
race_pool.race_pool_fill(variants=["bristol"])
users = get_user_model().objects
ada = users.get(username={username!r})
grace = users.create_user(username={username!r} + "g", password=PASSWORD)
race = race_services.race_create(user=ada, variant="bristol")
race_services.race_join(user=grace, code=race.code)
race = race_services.race_start(user=ada, code=race.code)
later = race.starts_at + timedelta(seconds=2)
with mock.patch("core.clock.now", lambda: later):
    for player in (ada, grace):
        game = Game.objects.get(player=player, race_entry__race=race)
        finish.resign(game_id=game.pk, user=player)
    race_services.race_finish(race_id=race.pk)
print(race.code)
"""


#: A private Bristol race of the player against a third account, counting down: its code.
RACE_IN_COUNTDOWN = """
from django.contrib.auth import get_user_model

from devtools.accounts import PASSWORD
from games.services import races as race_services
from games.play import finish
from games.services import race_pool

users = get_user_model().objects
ada = users.get(username={username!r})
rival = users.create_user(username={username!r} + "r", password=PASSWORD)
race = race_services.race_create(user=ada, variant="bristol")
race_services.race_join(user=rival, code=race.code)
print(race_services.race_start(user=ada, code=race.code).code)
"""


def violations(page: Any, axe_script: Path) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now: rule, impact, and the nodes."""
    page.add_script_tag(path=str(axe_script))
    return page.evaluate(
        """async () => {
          const result = await axe.run(document, { resultTypes: ["violations"] });
          return result.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map((n) => n.target.join(" ")),
          }));
        }"""
    )


def check(
    page: Any, url: str, ready: str, axe_script: Path, found: dict[str, Any], name: str | None
) -> None:
    """Open a page, wait until its script has drawn ``ready``, and record axe's findings
    under ``name`` (the URL when None)."""
    page.goto(url)
    expect(page.locator(ready).first).to_be_visible()
    page.wait_for_load_state("networkidle")
    found[name or url] = violations(page, axe_script)


def test_every_page_has_no_accessibility_violation(
    browser: Any,
    live_server_url: str,
    page: Any,
    sign_up: Any,
    api_post: Any,
    past_result: Any,
    django_shell: Any,
    username: str,
    axe_script: Path,
    artifacts: Path,
) -> None:
    found: dict[str, Any] = {}
    today = PINNED_DAY.isoformat()

    # A visitor, then a guest playing today's practice deal.
    for url, ready in [
        ("/", "#first-board .card"),
        ("/login/", "#login-form"),
        ("/register/", "#register-form"),
        ("/rules/", "main h1"),
        ("/rules/bristol/", "main h1"),
        ("/rules/picture-gallery/", "main h1"),
        ("/leaderboards/", "main h1"),
        ("/leaderboards/bristol/", "main h1"),
        (f"/leaderboards/bristol/{today}/", "#board-total"),
        ("/races/", "#races"),
        ("/races/leaderboards/bristol/", "main h1"),
    ]:
        check(page, url, ready, axe_script, found, None)
    page.goto("/")
    page.click("#first-play")
    page.wait_for_url("**/play/*/")
    guest_game = page.url.replace(live_server_url, "")
    check(page, guest_game, "#board .card", axe_script, found, "/play/<guest's practice>/")

    # A player: the calendar, the games, a daily, each family, tokens, races and replays.
    page.context.clear_cookies()
    sign_up(page, username)
    day, _, _ = past_result(username)
    code = django_shell(FINISHED_RACE.format(username=username)).split()[-1]
    daily = api_post(page, f"/api/v1/daily/bristol/{today}/play/", {})
    bristol = api_post(page, "/api/v1/games/", {"variant": "bristol", "seed": 7})
    gallery = api_post(page, "/api/v1/games/", {"variant": "picture-gallery", "seed": 7})
    result_id = page.request.get(f"/api/v1/daily/bristol/{day}/board/").json()["results"][0]
    for url, ready, name in [
        ("/", "#calendar", "/ (calendar)"),
        ("/games/", "main h1", None),
        ("/account/tokens/", "main h1", None),
        (f"/play/{daily['id']}/", "#board .card", "/play/<ranked daily>/"),
        (f"/play/{bristol['id']}/", "#board .card", "/play/<Bristol practice>/"),
        (f"/play/{gallery['id']}/", "#board .card", "/play/<Picture Gallery practice>/"),
        (f"/players/{username}/", "main h1", "/players/<name>/"),
        (f"/races/{code}/", "#race-players li", "/races/<finished race>/"),
        (f"/races/{code}/replay/{username}/", "#board .card", "/races/<code>/replay/<name>/"),
        (
            f"/leaderboards/bristol/{day}/replay/{result_id['result_id']}/",
            "#board .card",
            "/leaderboards/bristol/<day>/replay/<id>/",
        ),
    ]:
        check(page, url, ready, axe_script, found, name)

    # German: a finished race's standings (their replay links), and a game won by Finish
    # with its result beside the board.
    page.context.add_cookies([{"name": "django_language", "value": "de", "url": live_server_url}])
    check(page, f"/races/{code}/", "#standings-rows a", axe_script, found, "/races/<finished> (de)")
    near = django_shell(GAME_AT.format(position=near_win(), username=username)).split()[-1]
    check(page, f"/play/{near}/", "#btn-finish", axe_script, found, "/play/<Finish> (de)")
    page.click("#btn-finish")
    expect(page.locator("#end-dialog")).to_be_visible(timeout=20_000)
    page.wait_for_function("document.getAnimations().every((a) => a.playState !== 'running')")
    found["/play/<won> (de)"] = violations(page, axe_script)
    page.context.add_cookies([{"name": "django_language", "value": "en", "url": live_server_url}])

    # A race of the player's: its countdown over the held board, then the board in play.
    code = django_shell(RACE_IN_COUNTDOWN.format(username=username)).split()[-1]
    check(page, f"/races/{code}/", "#race-players li", axe_script, found, "/races/<countdown>/")
    expect(page.locator("#race")).to_have_attribute("data-phase", "running", timeout=12_000)
    expect(page.locator("#game #board [data-pile='t1'] .card-face").first).to_be_visible()
    found["/races/<running, my board>/"] = violations(page, axe_script)

    # Per page: the rules violated, and the elements that violate them.
    counts = {url: [len(found[url]), sum(len(v["nodes"]) for v in found[url])] for url in found}
    (artifacts / "axe.json").write_text(json.dumps({"counts": counts, "found": found}, indent=1))
    assert not any(rules for rules, _ in counts.values()), json.dumps(
        {url: found[url] for url in found if found[url]}, indent=1
    )


def test_the_play_page_in_its_states_in_german_and_on_a_phone_has_no_violation(
    browser: Any, live_server_url: str, axe_script: Path, artifacts: Path
) -> None:
    """A guest's practice game: a card picked up, the settings and keys open, the resign
    question, the result; in German, at a phone's size."""
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844},
        locale="de-DE",
        base_url=live_server_url,
        is_mobile=True,
        has_touch=True,
    )
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    found: dict[str, Any] = {}
    check(page, "/", "#first-board .card", axe_script, found, "/ (de, phone)")
    page.click("#first-play")
    page.wait_for_url("**/play/*/")
    expect(page.locator("#board .card").first).to_be_visible()
    found["/play/ (de, phone)"] = violations(page, axe_script)

    source = page.evaluate(
        "window.patienceGame.state.legal_moves.find((m) => !m.startsWith('deal')) || ''"
    )
    if source:
        page.locator(f'[data-pile="{source.split("-")[0]}"] .handle').click()
        expect(page.locator(".pile.selected")).to_have_count(1)
        found["/play/ card picked up"] = violations(page, axe_script)
    page.click(".nav-toggle")  # the menu of a play page on a phone, open
    expect(page.locator(".site-nav")).to_be_visible()
    found["/play/ menu open"] = violations(page, axe_script)
    page.click(".nav-toggle")
    page.evaluate("document.querySelectorAll('#game details').forEach((d) => (d.open = true))")
    found["/play/ settings and keys open"] = violations(page, axe_script)
    page.click("#btn-resign")
    expect(page.locator("#resign-dialog")).to_be_visible()
    found["/play/ resign question"] = violations(page, axe_script)
    page.click("#confirm-resign")
    expect(page.locator("#end-dialog")).to_be_visible()
    # Once it has stopped moving: halfway through its fade the colours are not yet its own.
    page.wait_for_function("document.getAnimations().every((a) => a.playState !== 'running')")
    found["/play/ result"] = violations(page, axe_script)
    ctx.close()

    counts = {name: [len(v), sum(len(x["nodes"]) for x in v)] for name, v in found.items()}
    (artifacts / "axe-states.json").write_text(json.dumps({"counts": counts, "found": found}))
    assert not any(rules for rules, _ in counts.values()), json.dumps(found, indent=1)
