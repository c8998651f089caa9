"""A backend kill costs the requests in flight, not one request per dead pooled connection
(issue 30: writes answered 503 for minutes after PostgreSQL ended its backends).

One gunicorn process (8 threads) fills its psycopg pool under concurrent writes;
PostgreSQL then ends every backend while the server idles, and single writes
follow one after another. Before, each dead connection the pool handed out
failed its write (8 of 15); now the first one has the pool check the others.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests

from bench.faults import write_wave
from devtools.servers import start_gunicorn, stop, wait_until_up

pytestmark = pytest.mark.e2e

PLAYERS = 16
WRITES = 15


def test_dead_pooled_connections_cost_one_write_at_most(
    e2e_urls: tuple[str, str],
    fresh_database: Callable[[str], str],
    e2e_env: dict[str, str],
    e2e_player: Callable[[], tuple[str, str]],
    tmp_path: Path,
) -> None:
    base_url, _ = e2e_urls
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
