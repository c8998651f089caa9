"""Real server processes for the end-to-end tests, on PostgreSQL or SQLite, with Redis.

The servers need a real (not pytest-django's) database that they all see: the
PostgreSQL server that ``DATABASE_URL`` names, or else a SQLite file (several
processes share one file as ``scripts/serve.sh`` and its jobs do; the properties
tested here hold there too: one write at a time, nothing acknowledged lost).
Once per session a template database is created and migrated in a subprocess,
with ``PLAYERS`` accounts that each have a personal API token (created by
``games.services``, so tests need not pay the server's deliberately slow password
hashing to register them). Every database the tests use is a copy of it
(``CREATE DATABASE ... TEMPLATE``, or a copy of the file: a fraction of a second);
all are dropped at the end.

Events between processes go through Redis: ``REDIS_URL``, else a redis-server of
the session's own on a free port when one is installed (the machine's shared Redis
is never touched). A test that needs something the run lacks is skipped with a
reason that says how to turn it on: ``postgres_url`` (PostgreSQL's own tools or
pool), ``e2e_redis_url`` (events that cross processes).

Fixtures: ``e2e_env`` (environment of servers on the session's shared copy),
``servers`` (two daphne processes A and B on it), ``fresh_database`` (another
copy, for a test that needs the database to itself), ``daphne`` (start, kill and
restart daphne processes of one's own), ``e2e_player`` (a pre-made account and
its token, a different one on every call); ``database_rows`` reads a database of
the run, either kind.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from devtools.servers import Daphne, RedisServer, pg_admin, subprocess_json, with_database
from tests.pinned_clock import pinned_clock_env

#: Accounts with tokens made in the template database (every copy has them).
PLAYERS = 128

_PREPARE = """
import io, json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from accounts.services import token_create
call_command("migrate", interactive=False, verbosity=0)
call_command("create_dailies", days=2, stdout=io.StringIO())  # as the compose migrate job
players = []
for i in range(int(sys.argv[1])):
    user = get_user_model().objects.create_user(username=f"e2e-player-{i:03d}", password=None)
    players.append([user.username, token_create(user=user, name="e2e")[1]])
from django.db import connection
if connection.vendor == "sqlite":  # the whole database in the file, ready to copy
    connection.cursor().execute("PRAGMA wal_checkpoint(TRUNCATE)")
print(json.dumps(players))
"""

#: How to turn on what a skipped test needs, as the README says.
POSTGRES_HOW = (
    "set DATABASE_URL to a PostgreSQL server, e.g. "
    "DATABASE_URL=postgres://postgres@127.0.0.1:5432/patience bash scripts/test.sh tests/e2e"
)
REDIS_HOW = "install redis-server (the tests start their own) or set REDIS_URL"


@dataclass
class Template:
    """The migrated template database and its pre-made players ``(username, token)``."""

    name: str
    players: list[tuple[str, str]]
    taken: int = field(default=0)


def _postgres(url: str) -> bool:
    return url.startswith(("postgres://", "postgresql://"))


def sqlite_path(url: str) -> Path:
    """The file of a ``sqlite:///`` URL."""
    return Path(url.removeprefix("sqlite:///"))


def redis_prefix(database_url: str) -> str:
    """The servers' Redis key prefix on a database (``settings.REDIS_PREFIX``)."""
    return f"patience:{Path(database_url.rsplit('/', 1)[1]).stem}"


@pytest.fixture(scope="session")
def e2e_redis() -> Iterator[str | None]:
    """``REDIS_URL``, else a redis-server of the session's own if one is installed, else None."""
    if url := os.environ.get("REDIS_URL"):
        yield url
        return
    if shutil.which("redis-server") is None:
        yield None
        return
    server = RedisServer()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def e2e_urls(
    e2e_redis: str | None, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str | None]:
    """``(database base URL, Redis URL or None)`` of the run: PostgreSQL when
    ``DATABASE_URL`` names it, else a folder of SQLite files (``sqlite:///<folder>``)."""
    base = os.environ.get("DATABASE_URL", "")
    if not _postgres(base):
        base = f"sqlite:///{tmp_path_factory.mktemp('e2e-databases')}"
    return base, e2e_redis


@pytest.fixture(scope="session")
def postgres_url(e2e_urls: tuple[str, str | None]) -> str:
    """The PostgreSQL server of the run; skips a test that needs it on SQLite."""
    if not _postgres(e2e_urls[0]):
        pytest.skip(f"needs PostgreSQL: {POSTGRES_HOW}")
    return e2e_urls[0]


@pytest.fixture(scope="session")
def e2e_redis_url(e2e_urls: tuple[str, str | None]) -> str:
    """The run's Redis; skips a test whose events must cross processes without it."""
    if e2e_urls[1] is None:
        pytest.skip(f"needs Redis to carry events between processes: {REDIS_HOW}")
    return e2e_urls[1]


def _database_url(base: str, name: str) -> str:
    return with_database(base, name) if _postgres(base) else f"{base}/{name}.sqlite3"


def _create(base: str, name: str, template: str | None = None) -> str:
    if _postgres(base):
        copy = f' TEMPLATE "{template}"' if template else ""
        pg_admin(base, f'CREATE DATABASE "{name}"{copy}')
    elif template:
        shutil.copyfile(
            sqlite_path(_database_url(base, template)), sqlite_path(_database_url(base, name))
        )
    return _database_url(base, name)


def _drop(base: str, name: str) -> None:
    if _postgres(base):
        pg_admin(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        file = sqlite_path(_database_url(base, name))
        for suffix in ("", "-wal", "-shm"):
            file.with_name(file.name + suffix).unlink(missing_ok=True)


def logged_moves(url: str, *game_ids: int) -> dict[tuple[int, int], str]:
    """Every stored log entry of the games (all of them if none is named), unpacked:
    ``(game id, ply) -> notation``."""
    from games.engine.record import unpack

    query = "SELECT g.id, d.variant, g.log FROM games_game g JOIN games_deal d ON d.id = g.deal_id"
    if game_ids:
        query += " WHERE g.id IN (" + ", ".join(["%s"] * len(game_ids)) + ")"
    return {
        (game, ply): entry.notation
        for game, variant, log in database_rows(url, query, *game_ids)
        for ply, entry in enumerate(unpack(variant, bytes(log)))
    }


def database_rows(url: str, query: str, *params: Any) -> list[tuple[Any, ...]]:
    """The rows of a query (``%s`` parameters) on a database of the run, either kind, read
    beside the servers."""
    if _postgres(url):
        import psycopg

        with psycopg.connect(url) as conn:
            return conn.execute(query, params).fetchall()
    # SQLite's integers are 64-bit: a larger one (a seed) goes as the text SeedField
    # stores, zero-padded to 20 digits.
    params = tuple(f"{p:020d}" if isinstance(p, int) and p >= 2**63 else p for p in params)
    with sqlite3.connect(sqlite_path(url), timeout=30) as conn:
        return conn.execute(query.replace("%s", "?"), params).fetchall()


@pytest.fixture(scope="session")
def e2e_template(
    e2e_urls: tuple[str, str | None], pinned_clock: dict[str, str]
) -> Iterator[Template]:
    base, _ = e2e_urls
    name = f"patience_e2e_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    env = {
        **os.environ,
        **pinned_clock,  # it deals the pinned day's dailies
        "DATABASE_URL": _create(base, name),
        "LOG_LEVEL": "WARNING",
    }
    env["DAILY_SOLVER_NODES"] = "0"  # dailies dealt uncertified: quick, and enough here
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env["DJANGO_SETTINGS_MODULE"] = "patience_site.settings"
    try:
        players = subprocess_json("-c", _PREPARE, str(PLAYERS), env=env, timeout=300)
        yield Template(name, [tuple(p) for p in players])
    finally:
        _drop(base, name)


@pytest.fixture(scope="session")
def fresh_database(
    e2e_urls: tuple[str, str | None], e2e_template: Template
) -> Iterator[Callable[[str], str]]:
    """``fresh_database(label)``: the URL of a new copy of the template; dropped at the end."""
    base, _ = e2e_urls
    made: list[str] = []

    def make(label: str) -> str:
        name = f"{e2e_template.name}_{label}"
        made.append(name)
        return _create(base, name, template=e2e_template.name)

    try:
        yield make
    finally:
        for name in made:
            _drop(base, name)


@pytest.fixture(scope="session")
def pinned_clock() -> dict[str, str]:
    """One pinned clock (``pinned_clock.PINNED_NOW``) for every server of the session, so
    that what the tests play does not depend on the date they run on."""
    return pinned_clock_env()


@pytest.fixture(scope="session")
def e2e_env(
    e2e_urls: tuple[str, str | None],
    fresh_database: Callable[[str], str],
    pinned_clock: dict[str, str],
) -> dict[str, str]:
    """Environment of the shared server processes, on a fresh migrated database (and the
    run's Redis, if any: without it each process's events reach its own sockets only)."""
    _, redis_url = e2e_urls
    env = {
        **os.environ,
        **pinned_clock,
        "DATABASE_URL": fresh_database("shared"),
        "DEBUG": "True",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "THROTTLE_RATE_USER": "100000/min",
        "THROTTLE_RATE_IP": "100000/min",
        "THROTTLE_RATE_AUTH": "100000/min",
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


@pytest.fixture(scope="session")
def e2e_player(e2e_template: Template) -> Callable[[], tuple[str, str]]:
    """``e2e_player()``: ``(username, token key)`` of a pre-made account not handed out before.

    The accounts exist in every copy of the template, so each test (or server)
    gets players of its own.
    """

    def take() -> tuple[str, str]:
        if e2e_template.taken >= len(e2e_template.players):
            raise RuntimeError(f"more than {PLAYERS} pre-made players used: raise PLAYERS")
        e2e_template.taken += 1
        return e2e_template.players[e2e_template.taken - 1]

    return take


@pytest.fixture
def daphne(tmp_path: Path) -> Iterator[Callable[..., Daphne]]:
    """``daphne(env)``: a daphne process of this test (not started yet); stopped at the end."""
    made: list[Daphne] = []

    def make(env: dict[str, str], port: int | None = None) -> Daphne:
        server = Daphne(env, tmp_path / f"daphne-{len(made)}.log", port)
        made.append(server)
        return server

    try:
        yield make
    finally:
        for server in made:
            server.stop()


@pytest.fixture(scope="session")
def servers(
    e2e_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[str]]:
    """Base URLs of two daphne processes (A, B) sharing the database and Redis."""
    logs = tmp_path_factory.mktemp("daphne")
    procs = [Daphne(e2e_env, logs / f"{label}.log") for label in ("a", "b")]
    try:
        for proc in procs:
            proc.start(wait=False)
        for proc in procs:
            proc.wait()
        yield [proc.url for proc in procs]
    finally:
        for proc in procs:
            proc.stop()
