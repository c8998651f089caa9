"""Real server processes for the end-to-end tests, on PostgreSQL and Redis.

The servers need a real (not pytest-django's) database that they all see. Once
per session a template database named after this process is created and
migrated in a subprocess, with ``PLAYERS`` accounts that each have a personal
API token (created by ``games.services``, so tests need not pay the server's
deliberately slow password hashing to register them). Every database the tests
use is a copy of it (``CREATE DATABASE ... TEMPLATE``: a fraction of a second);
all are dropped at the end. Without PostgreSQL (``DATABASE_URL``) and Redis
(``REDIS_URL``) the tests are skipped: several processes share state only
through them.

Fixtures: ``e2e_env`` (environment of servers on the session's shared copy),
``servers`` (two daphne processes A and B on it), ``fresh_database`` (another
copy, for a test that needs the database to itself), ``daphne`` (start, kill and
restart daphne processes of one's own), ``e2e_player`` (a pre-made account and
its token, a different one on every call).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from devtools.servers import Daphne, pg_admin, subprocess_json, with_database
from tests.pinned_clock import pinned_clock_env

#: Accounts with tokens made in the template database (every copy has them).
PLAYERS = 48

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
print(json.dumps(players))
"""


@dataclass
class Template:
    """The migrated template database and its pre-made players ``(username, token)``."""

    name: str
    players: list[tuple[str, str]]
    taken: int = field(default=0)


@pytest.fixture(scope="session")
def e2e_urls() -> tuple[str, str]:
    """``(DATABASE_URL, REDIS_URL)`` of the run; skips without PostgreSQL and Redis."""
    base = os.environ.get("DATABASE_URL", "")
    redis_url = os.environ.get("REDIS_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        pytest.skip("end-to-end tests need DATABASE_URL to name a PostgreSQL server (CI sets it)")
    if not redis_url:
        pytest.skip("end-to-end tests need REDIS_URL: processes share events through Redis")
    return base, redis_url


@pytest.fixture(scope="session")
def e2e_template(e2e_urls: tuple[str, str], pinned_clock: dict[str, str]) -> Iterator[Template]:
    base, _ = e2e_urls
    name = f"patience_e2e_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    pg_admin(base, f'CREATE DATABASE "{name}"')
    env = {
        **os.environ,
        **pinned_clock,  # it deals the pinned day's dailies
        "DATABASE_URL": with_database(base, name),
        "LOG_LEVEL": "WARNING",
    }
    env["DAILY_SOLVER_NODES"] = "0"  # dailies dealt uncertified: quick, and enough here
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env["DJANGO_SETTINGS_MODULE"] = "patience_site.settings"
    try:
        players = subprocess_json("-c", _PREPARE, str(PLAYERS), env=env, timeout=300)
        yield Template(name, [tuple(p) for p in players])
    finally:
        pg_admin(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def fresh_database(
    e2e_urls: tuple[str, str], e2e_template: Template
) -> Iterator[Callable[[str], str]]:
    """``fresh_database(label)``: the URL of a new copy of the template; dropped at the end."""
    base, _ = e2e_urls
    made: list[str] = []

    def make(label: str) -> str:
        name = f"{e2e_template.name}_{label}"
        pg_admin(base, f'CREATE DATABASE "{name}" TEMPLATE "{e2e_template.name}"')
        made.append(name)
        return with_database(base, name)

    try:
        yield make
    finally:
        for name in made:
            pg_admin(base, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pinned_clock() -> dict[str, str]:
    """One pinned clock (``pinned_clock.PINNED_NOW``) for every server of the session, so
    that what the tests play does not depend on the date they run on."""
    return pinned_clock_env()


@pytest.fixture(scope="session")
def e2e_env(
    e2e_urls: tuple[str, str],
    fresh_database: Callable[[str], str],
    pinned_clock: dict[str, str],
) -> dict[str, str]:
    """Environment of the shared server processes, on a fresh migrated PostgreSQL database."""
    _, redis_url = e2e_urls
    env = {
        **os.environ,
        **pinned_clock,
        "DATABASE_URL": fresh_database("shared"),
        "REDIS_URL": redis_url,
        "DEBUG": "True",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "THROTTLE_RATE_USER": "100000/min",
        "THROTTLE_RATE_IP": "100000/min",
        "THROTTLE_RATE_AUTH": "100000/min",
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
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
