"""Shared pytest fixtures for the patience test suite."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import time_machine

from core import events as core_events
from devtools.accounts import PASSWORD
from devtools.servers import deal_dailies, migrate, start_daphne, stop, wait_until_up
from games.play import finish, store
from games.play import move as play_move
from tests.pinned_clock import PINNED_NOW, pinned_clock_env

REPO_ROOT = Path(__file__).resolve().parent.parent


#: The suite by cost, by folder (``scripts/test.sh fast`` runs ``unit`` and ``api``).
COST_MARKERS = {
    "engine": "unit",
    "core": "api",
    "games": "api",
    "api": "api",
    "accounts": "api",
    "web": "api",
    "security": "fuzz",
    "browser": "browser",
    "e2e": "multiprocess",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its cost, from its folder (top-level files are ``unit``)."""
    root = Path(__file__).resolve().parent
    for item in items:
        parts = item.path.resolve().relative_to(root).parts
        marker = COST_MARKERS.get(parts[0], "unit") if len(parts) > 1 else "unit"
        item.add_marker(marker)


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist each worker has its own test database, so ids repeat across
    workers: give each its own Redis namespace too (board mirrors, token cache, socket
    groups), or one worker's events would reach the other's sockets."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        from django.conf import settings

        settings.REDIS_PREFIX = f"{settings.REDIS_PREFIX}:{worker}"
        layers: dict[str, dict[str, Any]] = settings.CHANNEL_LAYERS
        for layer in layers.values():
            if "prefix" in layer.get("CONFIG", {}):
                layer["CONFIG"]["prefix"] = f"{settings.REDIS_PREFIX}:asgi"


@pytest.fixture(autouse=True)
def _pinned_clock() -> Iterator[None]:
    """Every test starts at the same instant (a noon, ticking on), so no result depends on
    the date the suite runs on, and no test straddles a midnight. Tests that move time
    themselves patch ``core.clock.now`` on top (``daily_fixtures.daily_clock``)."""
    with time_machine.travel(PINNED_NOW, tick=True):
        yield


@pytest.fixture(autouse=True)
def _process_clock_for_the_day(request: pytest.FixtureRequest, settings: Any) -> None:
    """The day's clock is the (pinned) process clock, not PostgreSQL's ``now()``, which no
    test can pin; tests of the database clock itself are marked ``database_clock``."""
    if request.node.get_closest_marker("database_clock") is None:
        settings.SHARED_CLOCK = "process"


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(autouse=True)
def _isolated_cache(settings: Any) -> None:
    """A fresh cache namespace per test, so rate-limit counters never leak between tests.

    A new key prefix (rather than clearing the cache) also keeps a shared Redis
    untouched when the suite runs with REDIS_URL.
    """
    caches = {name: dict(conf) for name, conf in settings.CACHES.items()}
    for conf in caches.values():
        conf["KEY_PREFIX"] = f"test-{uuid.uuid4().hex}"
    settings.CACHES = caches


@pytest.fixture(autouse=True)
def _redis_trusted_again() -> None:
    """Each test starts with Redis trusted: no open circuit, stale mirror or per-process
    stand-in counters of an earlier test (with SQLite, ids and so keys repeat across tests)."""
    from core import redis_guard
    from games import boards

    redis_guard._breaker.cache_clear()
    redis_guard._down.clear()
    redis_guard.process_cache().clear()
    boards._stale.clear()


@pytest.fixture(autouse=True)
def _no_games_held() -> None:
    """Each test starts with no game held by the move command's process cache: with SQLite
    a test's emptied database hands out the same game ids again."""

    store._held.clear()


@pytest.fixture(autouse=True)
def _hint_budget(settings: Any) -> Iterator[None]:
    """Tests ask for hints much faster than players do: the server-wide hint budget
    (``games.hints.hint_admit``) is out of their way unless a test sets it. The bucket
    starts full and is emptied after each test: one counted on a test's own clock must
    not meet the process's monotonic clock (on a machine up for less time than that
    clock read, the next test found the bucket minutes in debt)."""
    from games import hints

    settings.HINT_RATE = 1_000_000.0
    hints._budget[:] = [0.0, 0.0]
    yield
    hints._budget[:] = [0.0, 0.0]


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    """Hash passwords cheaply: the default PBKDF2 costs half a second per user."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _daily_certification(request: pytest.FixtureRequest, settings: Any) -> None:
    """Daily deals skip the solver's certification unless a test is marked ``certified``.

    Certifying runs the solver over seed candidates (up to seconds per deal); tests
    of everything else about dailies need only a deterministic seed.
    """
    if request.node.get_closest_marker("certified") is None:
        settings.DAILY_SOLVER_NODES = 0


@pytest.fixture(autouse=True)
def _dailies_dealt(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stand in for the ``create_dailies`` job: a daily a test asks for is dealt then.

    The service answers a missing daily with ``daily_not_ready`` (today's) or not
    found and leaves dealing to the job (``games.selectors.dailies.daily_missing``); tests of
    everything else about dailies run as if the job had dealt every day already.
    Tests marked ``daily_job`` get the service's own behaviour.
    """
    if request.node.get_closest_marker("daily_job") is None:
        from games.selectors import dailies as daily_selectors
        from games.services import dailies as daily_services

        monkeypatch.setattr(daily_selectors, "daily_missing", daily_services.daily_create)


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def channel_layers(settings: Any, transactional_db: None) -> Iterator[None]:
    """Sockets in a test: channel layers of its own, database connections closed after.

    A Redis layer gets a prefix of this test alone, so a shared Redis never mixes
    runs' events. Consumers reach the database through ``database_sync_to_async``,
    in asgiref's one thread for thread-sensitive code outside any request: the
    connections they opened there are closed in that thread, so none outlives the test.
    """
    from asgiref.sync import sync_to_async
    from django.db import connections

    layers = {}
    for name, conf in settings.CHANNEL_LAYERS.items():
        conf = {**conf, "CONFIG": dict(conf.get("CONFIG", {}))}
        if "redis" in conf["BACKEND"].lower() or conf["CONFIG"].get("url"):
            conf["CONFIG"]["prefix"] = f"test-{uuid.uuid4().hex[:12]}"
        layers[name] = conf
    settings.CHANNEL_LAYERS = layers
    yield
    asyncio.run(sync_to_async(connections.close_all)())  # in that same thread


@pytest.fixture
def make_user(db: None) -> Callable[..., Any]:
    """Create users: ``make_user("ann")``; every one has the password ``PASSWORD``."""
    from django.contrib.auth import get_user_model

    def make(username: str | None = None, **extra: Any) -> Any:
        name = username or f"player-{uuid.uuid4().hex[:8]}"
        return get_user_model().objects.create_user(username=name, password=PASSWORD, **extra)

    return make


@pytest.fixture
def user(make_user: Callable[..., Any]) -> Any:
    return make_user("ann")


@pytest.fixture
def other_user(make_user: Callable[..., Any]) -> Any:
    return make_user("bob")


@pytest.fixture
def token_client(db: None) -> Callable[..., Any]:
    """An APIClient that authenticates as ``user`` with a fresh personal token."""
    from rest_framework.test import APIClient

    from accounts.services import token_create

    def make(user: Any, *, keyword: str = "Token", **client_kwargs: Any) -> Any:
        _, key = token_create(user=user, name="tests")
        client: Any = APIClient(**client_kwargs)  # plus the token's key, for the tests
        client.credentials(HTTP_AUTHORIZATION=f"{keyword} {key}")
        client.token_key = key
        return client

    return make


@pytest.fixture
def api(token_client: Callable[..., Any], user: Any) -> Any:
    """A token-authenticated client of ``user``."""
    return token_client(user)


@pytest.fixture
def assert_consistent() -> Callable[[Any], None]:
    """Check that a game's stored snapshot and counters equal the replay of its log."""
    from games.engine.record import position_bytes
    from games.models import Game
    from games.selectors.games import game_log, game_position, game_replay, game_verify

    def check(game: Any) -> None:
        fresh = Game.objects.select_related("deal").get(pk=game.pk)
        assert game_verify(fresh) is None
        replay = game_replay(fresh)
        assert replay.position == game_position(fresh)
        assert position_bytes(replay.position) == bytes(fresh.position)
        assert fresh.ply == len(game_log(fresh))
        assert fresh.score == replay.position.score

    return check


@pytest.fixture(autouse=True)
def race_pool_jobs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Stand in for starting ``manage.py races`` when the race pool runs low: a test
    process never starts the job (it would deal into the development database);
    the list counts the starts asked for."""
    from core import jobs

    started: list[int] = []
    monkeypatch.setattr(jobs, "race_pool_job_start", lambda: started.append(1))
    return started


def fresh_server_env(tmp: Path, **extra: str) -> dict[str, str]:
    """Environment of a server process as ``scripts/serve.sh`` runs on a fresh machine: a new
    SQLite file in ``tmp`` (migrated, the dailies dealt), no Redis (one process), default
    settings (``extra`` adds some), and the clock pinned (today's deals differ by day)."""
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "DATABASE_URL"}}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp / 'db.sqlite3'}",
        DEBUG="True",
        DJANGO_SETTINGS_MODULE="patience_site.settings",
        PYTHONUNBUFFERED="1",
        PATIENCE_TEST_TMP=str(tmp),
        **pinned_clock_env(),
        **extra,
    )
    migrate(env, timeout=180)
    deal_dailies(env, timeout=180)  # by the job, as in production (requests never deal them)
    return env


@contextmanager
def serving(env: dict[str, str]) -> Iterator[str]:
    """Base URL of a daphne process on ``env`` (``fresh_server_env``) while in the block."""
    with open(Path(env["PATIENCE_TEST_TMP"]) / "daphne.log", "w") as log:
        proc, base = start_daphne(env, log)
        try:
            wait_until_up(proc, base)
            yield base
        finally:
            stop([proc])


@pytest.fixture(scope="session")
def server_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment of the browser tests' server process (``fresh_server_env``)."""
    return fresh_server_env(tmp_path_factory.mktemp("browser-server"))


@pytest.fixture(scope="session")
def live_server_url(server_env: dict[str, str]) -> Iterator[str]:
    """Base URL of daphne serving the project against that database: a real server in a
    subprocess, so WebSockets work exactly as in production (one process, in-memory
    channel layer). For the browser tests."""
    with serving(server_env) as base:
        yield base


@pytest.fixture(autouse=True)
def socket_frames_seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every frame and close code a test's WebsocketCommunicator receives is checked against
    the AsyncAPI document (``api/asyncapi.yaml``); the (channel, message or code) seen."""
    from channels.testing import WebsocketCommunicator

    from tests.schemas import socket_frames

    seen: list[tuple[str, str]] = []
    accepted: set[int] = set()
    receive = WebsocketCommunicator.receive_output

    async def checked(self: WebsocketCommunicator, timeout: float = 1) -> dict[str, Any]:
        out = await receive(self, timeout)
        path = self.scope["path"]
        if out["type"] == "websocket.accept":
            accepted.add(id(self))
        elif out["type"] == "websocket.send" and out.get("text") is not None:
            seen.append(socket_frames().check_frame(path, out["text"]))
        elif out["type"] == "websocket.close" and id(self) in accepted:
            seen.append(socket_frames().check_close(path, out.get("code", 1000)))
        elif out["type"] == "websocket.close":  # before the accept: the handshake is refused
            seen.append((socket_frames().channel(path), "refused"))
        return out

    monkeypatch.setattr(WebsocketCommunicator, "receive_output", checked)
    return seen


@pytest.fixture
def every_race_rated(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fair-play rules of ratings off (tests/games/test_race_ratings.py tests them): any
    quick race of two players with games is rated, for tests of how ratings are shown."""
    from games.services import race_ratings

    monkeypatch.setattr(race_ratings, "CONTESTED_MIN_MOVES", 0)
    monkeypatch.setattr(race_ratings, "CONTESTED_MIN_SECONDS", 0)
    monkeypatch.setattr(race_ratings, "RATED_AFTER_RACES", 0)


@pytest.fixture
def emitted(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every event emitted from now on (rendered, nothing sent)."""
    seen: list[Any] = []
    monkeypatch.setattr(core_events, "send", lambda group, message: None)
    real = core_events.emit

    def spy(event: Any, group: str) -> None:
        seen.append(event)
        real(event, group)

    monkeypatch.setattr(core_events, "emit", spy)
    return seen


@pytest.fixture
def event_examples(user: Any, emitted: list[Any]) -> list[Any]:
    """One event of each type (``games.event_types``), the game's from a real move and a
    resignation as the move command emits them, the other as its race would be."""
    from dataclasses import replace
    from datetime import UTC, date, datetime, timedelta

    from accounts.events import AuthRevoked
    from games.event_types import AnalysisReady, BoardResult, RaceChanged, RaceRematch
    from games.play import state
    from games.selectors.games import game_position
    from games.selectors.race_state import RaceState
    from games.services import games as game_services

    game = game_services.practice_game_start(user=user, variant="bristol", seed=1)
    move = str(game_position(game).legal_moves[0])
    play_move.apply_move(game_id=game.pk, user=user, move=move, ply=0)
    ended = finish.resign(game_id=game.pk, user=user).game
    moved, resigned = emitted
    start = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
    progress = state.progress(user, ended)
    line = {
        "rank": 1,
        "result_id": 7,
        "player_name": "ann",
        "won": False,
        "cards_home": 3,
        "moves": 12,
        "time_ms": 4_000,
        "finished_at": datetime(2026, 12, 1, 6, 37, tzinfo=UTC),
    }
    return [
        moved,
        # as a race's game's: its player's progress too
        replace(resigned, race_id=1, race="k2m9x0qa7b", progress=progress),
        RaceChanged(
            RaceState(
                code="k2m9x0qa7b",
                variant="bristol",
                kind="quick",
                status="countdown",
                creator=user.username,
                max_players=8,
                min_players=2,
                time_limit_seconds=300,
                starts_at=start,
                ends_at=start + timedelta(minutes=5),
                server_time=start,
                rematch=None,
                players=(state.progress(user, None),),
                standings=None,
                unrated=None,
                games=((user.pk, None),),
            )
        ),
        RaceRematch(code="k2m9x0qa7b", rematch="p3n8w1rb6c"),
        BoardResult(variant="bristol", day=date(2026, 12, 1), line=line),
        AuthRevoked(reason="token revoked"),
        AnalysisReady(game_id=game.pk),
    ]
