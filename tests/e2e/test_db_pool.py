"""The database pool under backend kills: a kill costs the requests in flight, and no
process ever holds more connections than its bound.

- One gunicorn process (8 threads) fills its psycopg pool under concurrent writes;
  PostgreSQL then ends every backend while the server idles, and single writes
  follow one after another. Each dead connection the pool handed out used to fail
  its write (8 of 15); now the first one has the pool check the others.
- Two gunicorn workers under a steady load of reads while PostgreSQL ends their
  backends five times a second: each worker's backends (``pg_stat_activity``) never
  outnumber ``DB_POOL_MAX_SIZE``, and once the load stops each pool shrinks back.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests

from bench.faults import write_wave
from devtools.servers import start_gunicorn, stop, wait_until_up, with_database
from tests.e2e.helpers import (
    backends_by_process,
    child_pids,
    new_games,
    production_env,
    under_kills,
)

pytestmark = pytest.mark.e2e

PLAYERS = 16
WRITES = 15


def test_dead_pooled_connections_cost_one_write_at_most(
    postgres_url: str,
    fresh_database: Callable[[str], str],
    e2e_env: dict[str, str],
    e2e_player: Callable[[], tuple[str, str]],
    tmp_path: Path,
) -> None:
    base_url = postgres_url  # psycopg's pool and PostgreSQL's backends are the subject
    database_url = fresh_database("pool")
    env = {**e2e_env, "DATABASE_URL": database_url, "DEBUG": "False", "SECRET_KEY": "x" * 50}
    env |= {"DAILY_SECRET": "pool-test", "SECURE_SSL_REDIRECT": "False"}
    with open(tmp_path / "gunicorn.log", "ab") as log:
        server, base = start_gunicorn(env, log)
        try:
            wait_until_up(server, base)
            players: list[dict[str, Any]] = []
            for _ in range(PLAYERS):
                token = e2e_player()[1]
                game = requests.post(
                    f"{base}/api/v1/games/",
                    json={"variant": "bristol", "seed": len(players) + 1},
                    headers={"Authorization": f"Token {token}"},
                    timeout=30,
                )
                assert game.status_code == 201, game.text
                players.append({"token": token, "game": game.json()["id"]})
            for _ in range(3):
                assert asyncio.run(write_wave(base, players))[200] == PLAYERS
            name = database_url.rsplit("/", 1)[1]
            with psycopg.connect(f"{base_url.rsplit('/', 1)[0]}/postgres", autocommit=True) as pg:
                row = pg.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = %s",
                    [name],
                ).fetchone()
            assert row is not None and row[0] >= 4, row  # the pool had grown
            refused = 0
            for i in range(WRITES):
                wave = asyncio.run(write_wave(base, players[i : i + 1]))
                refused += sum(n for status, n in wave.items() if status != 200)
                time.sleep(0.3)
            assert refused <= 1, refused
        finally:
            stop([server])


#: The bound of the test's processes: their threads, so one connection per thread at most.
THREADS = 4
LOADERS = 12
KILL_SECONDS = 6.0


def _load(base: str, token: str, game: int, stop: threading.Event, *, seen: Counter[int]) -> None:
    """Read a game as fast as answered until ``stop``; count the answers by status."""
    with requests.Session() as http:
        http.headers["Authorization"] = f"Token {token}"
        # A connection a request: a kept-alive one stays with the worker that accepted
        # it, and every loader could end up on one worker.
        http.headers["Connection"] = "close"
        while not stop.is_set():
            try:
                seen[http.get(f"{base}/api/v1/games/{game}/", timeout=30).status_code] += 1
            except requests.RequestException:
                seen[0] += 1


def test_backend_kills_under_load_never_take_a_process_past_its_bound(
    postgres_url: str,
    fresh_database: Callable[[str], str],
    e2e_env: dict[str, str],
    e2e_player: Callable[[], tuple[str, str]],
    tmp_path: Path,
) -> None:
    base_url = postgres_url  # PostgreSQL's backends are the subject
    database_url = fresh_database("bound")
    bound = {"DB_POOL_MAX_SIZE": str(THREADS), "DB_POOL_MIN_SIZE": "1", "DB_POOL_MAX_IDLE": "1"}
    env = production_env(e2e_env, database_url, **bound)
    database = database_url.rsplit("/", 1)[1]
    with open(tmp_path / "gunicorn.log", "ab") as log:
        server, base = start_gunicorn(env, log, threads=THREADS, workers=2)
        try:
            wait_until_up(server, base)
            games = new_games(base, e2e_player, LOADERS)
            workers = child_pids(server.pid)
            assert len(workers) == 2, workers
            seen: Counter[int] = Counter()
            clients = [partial(_load, base, token, game, seen=seen) for token, game in games]
            most, kills = under_kills(
                base_url, database, workers, clients, every=0.2, seconds=KILL_SECONDS
            )
            print(f"backends at most per worker: {dict(most)}; answers {dict(seen)};")
            print(f"kills {len(kills)}, backends ended {sum(kills)}")
            assert sum(kills) >= 2 * len(kills), kills  # the kills met backends
            assert set(most) == set(workers), most  # both workers were under load
            assert max(most.values()) <= THREADS, most
            assert set(seen) <= {200, 503}, seen  # a kill costs a 503, never a 500
            assert seen[200] > seen[503], seen
            # Idle again: each pool closes its idle connections down to DB_POOL_MIN_SIZE.
            admin = with_database(base_url, "postgres")
            with psycopg.connect(admin, autocommit=True) as watcher:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    held = backends_by_process(watcher, database, workers)
                    if max(held.values(), default=0) <= 1:
                        break
                    time.sleep(0.5)
            assert max(held.values(), default=0) <= 1, held
        finally:
            stop([server])
