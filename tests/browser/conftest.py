"""Debian's Chromium for the browser tests, against the live server of tests/conftest.py.

Chromium comes from Debian (``.ci/run`` installs
it with apt); when it is missing or cannot start, the tests are skipped with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from devtools.accounts import PASSWORD

# An assertion waits as long as an action (the contexts' 15 s), not Playwright's 5 s: on a
# loaded two-core CI machine Redoc took longer than 5 s to render the schema.
expect.set_options(timeout=15_000)

REPO = Path(__file__).resolve().parents[2]

ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


#: axe-core's pinned version and lock file: a dev dependency of these tests only.
AXE_PACKAGE = Path(__file__).resolve().parent / "axe"


@pytest.fixture(scope="session")
def axe_script() -> Path:
    """axe-core's script, for ``page.add_script_tag(path=...)``.

    npm installs it from ``axe/package-lock.json`` (exact version and checksum) into a cache
    folder outside the repository, once per lock file; nothing of it is committed.
    """
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("the accessibility tests need npm (apt-get install npm)")
    lock = (AXE_PACKAGE / "package-lock.json").read_bytes()
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = home / "patience-tests" / f"axe-{hashlib.sha256(lock).hexdigest()[:12]}"
    script = folder / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(AXE_PACKAGE / name, folder / name)
        command = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"]
        subprocess.run(command, cwd=folder, check=True, timeout=300, capture_output=True)
    return script


@pytest.fixture(scope="session")
def django_shell(server_env: dict[str, str]) -> Any:
    """Run Python in a Django shell on the server's database; returns its stdout."""

    def run(code: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code],
            cwd=REPO,
            env=server_env,
            check=True,
            timeout=120,
            capture_output=True,
            text=True,
        )
        return done.stdout

    return run


#: A new player's pages send safe cards home by themselves; the tests play every move
#: themselves, so their pages start with that setting off (kept if a test saves another).
MANUAL_PLAY = """if (localStorage.getItem("patience.settings") === null) {
  localStorage.setItem("patience.settings", JSON.stringify({autoHome: false}));
}"""


def manual_contexts(chromium: Any) -> None:
    """Give every context of ``chromium`` the ``MANUAL_PLAY`` settings, unless it is made
    with ``defaults=True`` (a new player's settings as they are)."""
    new_context = chromium.new_context

    def make(*args: Any, defaults: bool = False, **kwargs: Any) -> Any:
        ctx = new_context(*args, **kwargs)
        if not defaults:
            ctx.add_init_script(MANUAL_PLAY)
        return ctx

    chromium.new_context = make


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one test module. Playwright's sync API runs an event loop in this
    thread while it is started, so it stops with the module: later tests (the e2e ones)
    start event loops of their own."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(
            f"browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - playwright is a dev dependency
        pytest.skip(f"playwright is not installed: {exc}")
    pw = sync_playwright().start()
    try:
        try:
            chromium = pw.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
            )
        except Exception as exc:
            pytest.skip(f"chromium at {CHROMIUM} cannot be launched: {exc}")
        manual_contexts(chromium)
        yield chromium
        chromium.close()
    finally:
        pw.stop()


@pytest.fixture
def context(browser: Any, live_server_url: str) -> Iterator[Any]:
    ctx = browser.new_context(
        viewport={"width": 1280, "height": 1000}, locale="en-US", base_url=live_server_url
    )
    ctx.set_default_timeout(15_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def username() -> str:
    return "pw" + uuid.uuid4().hex[:8]


@pytest.fixture(scope="session")
def api_post() -> Callable[[Any, str, dict], Any]:
    """POST JSON with the page's session and CSRF token; returns the answer's JSON."""

    def post(page: Any, url: str, body: dict) -> Any:
        token = page.request.get("/api/v1/auth/csrf/").json()["csrf_token"]
        headers = {"X-CSRFToken": token, "Content-Type": "application/json"}
        response = page.request.post(url, data=json.dumps(body), headers=headers)
        assert response.ok, response.text()
        return response.json()

    return post


@pytest.fixture(scope="session")
def sign_up(api_post: Any) -> Callable[[Any, str], None]:
    """Register an account through the API and log the page's context in with it."""

    def run(page: Any, username: str) -> None:
        api_post(page, "/api/v1/auth/register/", {"username": username, "password": PASSWORD})
        api_post(page, "/api/v1/auth/login/", {"username": username, "password": PASSWORD})

    return run


#: Yesterday's ranked Bristol daily of a player: five moves (card moves first), resigned.
PAST_RESULT = """
from datetime import timedelta
from unittest import mock

from django.contrib.auth import get_user_model

from core import clock
from games.selectors import games as game_selectors
from games.services import dailies as daily_services
from games.services import games as game_services
from api import shapes
from games.play import move as play_move
from games.play import finish

user = get_user_model().objects.get(username={username!r})
yesterday = clock.now() - timedelta(days=1)
with mock.patch("core.clock.now", lambda: yesterday):
    daily_services.daily_create("bristol", clock.today())  # the job dealt yesterday's daily then
    game, _ = daily_services.daily_game_start(user=user, variant="bristol", day=clock.today())
    for _ in range(5):
        moves = shapes.game_state(game)["legal_moves"]
        cards = [m for m in moves if m != "deal"]
        move = cards[0] if cards else moves[0]
        game = play_move.apply_move(
            game_id=game.id, user=user, move=move, ply=game.ply
        ).game
    finish.resign(game_id=game.id, user=user)
print(yesterday.date().isoformat(), game.id, len(game.deal.par_line))
"""


@pytest.fixture
def past_result(django_shell: Any) -> Callable[[str], tuple[str, str, str]]:
    """Give a player a finished ranked daily of yesterday: (day, game id, par)."""

    def run(username: str) -> tuple[str, str, str]:
        day, game_id, par = django_shell(PAST_RESULT.format(username=username)).split()[-3:]
        return day, game_id, par

    return run
