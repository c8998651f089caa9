"""A real server (daphne, fresh SQLite database) and Debian's Chromium for the browser tests.

The server runs in a subprocess so WebSockets work exactly as in production (one
process, in-memory channel layer). Chromium comes from Debian (``.ci/run`` installs
it with apt); when it is missing or cannot start, the tests are skipped with the reason.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pinned_clock import pinned_clock_env

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(url: str, proc: subprocess.Popen, timeout: float = 40.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer at {url}")


@pytest.fixture(scope="session")
def server_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment of the server process: a fresh SQLite file, no Redis (one process), and
    the clock pinned (today's deals differ from day to day)."""
    tmp = tmp_path_factory.mktemp("browser-server")
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL"}}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp / 'db.sqlite3'}",
        DEBUG="True",
        DJANGO_SETTINGS_MODULE="patience_site.settings",
        PYTHONUNBUFFERED="1",
        PATIENCE_TEST_TMP=str(tmp),
        **pinned_clock_env(),
    )
    for command in (["migrate", "--noinput"], ["create_dailies", "--days", "2"]):
        # Dailies are dealt by the job, as in production (requests never deal them).
        subprocess.run(
            [sys.executable, "manage.py", *command, "-v", "0"],
            cwd=REPO,
            env=env,
            check=True,
            timeout=180,
            stdout=subprocess.DEVNULL,
        )
    return env


@pytest.fixture(scope="session")
def live_server_url(server_env: dict[str, str]) -> Iterator[str]:
    """Base URL of daphne serving the project against that database."""
    env = server_env
    tmp = Path(env["PATIENCE_TEST_TMP"])
    port = _free_port()
    log = open(tmp / "daphne.log", "w")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
        + ["patience_site.asgi:application"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base + "/api/v1/health/", proc)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
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
