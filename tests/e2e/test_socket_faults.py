"""Socket connects while PostgreSQL ends the backends: each is answered (its first state, or
a close with 4503 ``unavailable``), never a close with 1011 or an HTTP 500 at the handshake,
and the daphne process never holds more connections than its bound.

Game sockets connect, read their first frame and close, over and over, from several
clients at once, while every backend of the test's database is ended ten times a second.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import psycopg
import requests
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from devtools.servers import with_database
from tests.e2e.helpers import backends_by_process, kill_backends

CLIENTS = 6
KILL_SECONDS = 5.0
#: The daphne process's bound: its worker threads and Channels' one thread.
ASGI_THREADS = 3


def _connects(url: str, token: str, stop: threading.Event, seen: Counter[Any]) -> None:
    """Open the socket, read its first frame, close; until ``stop``. Counts each outcome:
    ``state``, a close code, or ``http <status>`` for a handshake refused."""
    while not stop.is_set():
        try:
            with connect(url, additional_headers={"Authorization": f"Token {token}"}) as ws:
                ws.recv(timeout=30)
                seen["state"] += 1
        except InvalidStatus as exc:
            seen[f"http {exc.response.status_code}"] += 1
        except ConnectionClosed as exc:
            seen[exc.rcvd.code if exc.rcvd is not None else "no close frame"] += 1


def test_socket_connects_under_backend_kills_answer_unavailable_at_worst(
    e2e_urls, fresh_database, e2e_env, e2e_player, daphne
) -> None:
    base_url, _ = e2e_urls
    database_url = fresh_database("sockets")
    database = database_url.rsplit("/", 1)[1]
    env = {**e2e_env, "DATABASE_URL": database_url, "DEBUG": "False", "SECRET_KEY": "x" * 50}
    env |= {"DAILY_SECRET": "socket-test", "SECURE_SSL_REDIRECT": "False"}
    env |= {"ASGI_THREADS": str(ASGI_THREADS), "DB_POOL_MAX_SIZE": str(ASGI_THREADS + 1)}
    server = daphne(env).start()
    assert server.proc is not None
    sockets = []
    for seed in range(1, CLIENTS + 1):
        token = e2e_player()[1]
        game = requests.post(
            f"{server.url}/api/v1/games/",
            json={"variant": "bristol", "seed": seed},
            headers={"Authorization": f"Token {token}"},
            timeout=30,
        )
        assert game.status_code == 201, game.text
        sockets.append((f"ws://127.0.0.1:{server.port}/ws/v1/games/{game.json()['id']}/", token))
    seen: Counter[Any] = Counter()
    kills: list[int] = []
    most = 0
    stop_clients, stop_kills = threading.Event(), threading.Event()
    admin = with_database(base_url, "postgres")
    with (
        psycopg.connect(admin, autocommit=True) as killer,
        psycopg.connect(admin, autocommit=True) as watcher,
    ):
        threads = [
            threading.Thread(target=_connects, args=(url, token, stop_clients, seen))
            for url, token in sockets
        ]
        threads.append(
            threading.Thread(target=kill_backends, args=(killer, database, stop_kills, kills, 0.1))
        )
        for thread in threads:
            thread.start()
        try:
            ends = time.monotonic() + KILL_SECONDS
            while time.monotonic() < ends:
                held = backends_by_process(watcher, database, [server.proc.pid])
                most = max(most, held[server.proc.pid])
                time.sleep(0.02)
        finally:
            stop_kills.set()
            stop_clients.set()
            for thread in threads:
                thread.join()
    print(f"connects: {dict(seen)}; backends ended {sum(kills)} in {len(kills)} rounds;")
    print(f"daphne's backends at most {most}")
    assert sum(kills) >= len(kills), kills  # the kills met backends
    assert set(seen) <= {"state", 4503}, seen  # never 1011, never an HTTP 500
    assert seen["state"] > 0, seen
    assert most <= ASGI_THREADS + 1
