"""Socket connects while PostgreSQL ends the backends: each is answered (its first state, or
a close with 4503 ``unavailable``), never a close with 1011 or an HTTP 500 at the handshake,
and the daphne process never holds more connections than its bound.

Game sockets connect, read their first frame and close, over and over, from several
clients at once, while every backend of the test's database is ended ten times a second.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from devtools.servers import Daphne
from tests.e2e.helpers import new_games, production_env, under_kills

CLIENTS = 6
KILL_SECONDS = 5.0
#: The daphne process's bound: its worker threads and Channels' one thread.
ASGI_THREADS = 3


def _connects(url: str, token: str, stop: threading.Event, *, seen: Counter[Any]) -> None:
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
    postgres_url: str,
    fresh_database: Callable[[str], str],
    e2e_env: dict[str, str],
    e2e_player: Callable[[], tuple[str, str]],
    daphne: Callable[..., Daphne],
) -> None:
    base_url = postgres_url  # PostgreSQL's backends are the subject
    database_url = fresh_database("sockets")
    bound = {"ASGI_THREADS": str(ASGI_THREADS), "DB_POOL_MAX_SIZE": str(ASGI_THREADS + 1)}
    server = daphne(production_env(e2e_env, database_url, **bound)).start()
    assert server.proc is not None
    seen: Counter[Any] = Counter()
    clients = [
        partial(_connects, f"ws://127.0.0.1:{server.port}/ws/v1/games/{game}/", token, seen=seen)
        for token, game in new_games(server.url, e2e_player, CLIENTS)
    ]
    database = database_url.rsplit("/", 1)[1]
    most, kills = under_kills(
        base_url, database, [server.proc.pid], clients, every=0.1, seconds=KILL_SECONDS
    )
    print(f"connects: {dict(seen)}; backends ended {sum(kills)} in {len(kills)} rounds;")
    print(f"daphne's backends at most {most[server.proc.pid]}")
    assert sum(kills) >= len(kills), kills  # the kills met backends
    assert set(seen) <= {"state", 4503}, seen  # never 1011, never an HTTP 500
    assert seen["state"] > 0, seen
    assert most[server.proc.pid] <= ASGI_THREADS + 1
