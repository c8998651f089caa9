"""CPU per move of the metrics, side by side in one run: instrumented against metrics off.

    python bench/metrics.py                 # a fresh SQLite database, 2,000 moves a side
    python bench/metrics.py --moves 500     # quicker
    python bench/metrics.py --database-url postgres://postgres@127.0.0.1:5432/postgres

Plays random legal moves of practice Bristol games in this process, in rounds that
alternate the two sides (so both see the same machine load), and prints the median CPU
microseconds per move of each side and their difference, for two doors:

- ``service``: ``game_apply_move`` itself, with its move counter and latency histogram
  (``core.metrics.move_observed``) against a no-op in its place;
- ``rest``: ``POST /api/v1/games/<id>/moves/`` through Django's whole stack (test client),
  with the site middleware (request id, HTTP counter, the JSON log line, written to
  /dev/null) and the move metrics, against neither.

The overhead is the median of the rounds' paired differences, with their quartiles: on a
busy machine the database's share of a move varies by more than the metrics cost.

With ``--database-url`` it works in a database of its own on that server (created and
dropped); the default is a SQLite file in a temporary directory.
"""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402

ROUNDS = 40


def _setup(database_url: str | None, workdir: Path) -> Callable[[], None]:
    """Point Django at the bench's own database, migrate it; returns the clean-up."""
    from devtools.servers import pg_admin, with_database

    cleanup: Callable[[], None] = lambda: None  # noqa: E731
    if database_url:
        name = f"patience_metrics_{uuid.uuid4().hex[:8]}"
        pg_admin(database_url, f"CREATE DATABASE {name}")
        os.environ["DATABASE_URL"] = with_database(database_url, name)

        def cleanup() -> None:
            from django.db import connections

            connections.close_all()
            pg_admin(database_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    _cli.django_setup(
        {
            "LOG_FORMAT": "json",
            "SHARED_CLOCK": "process",
            "REDIS_URL": "",
            "THROTTLE_RATE_USER": "1000000/min",  # one player plays thousands of moves a minute
            "THROTTLE_RATE_IP": "1000000/min",
        }
    )
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return cleanup


@contextlib.contextmanager
def _quiet_logs() -> Iterator[None]:
    """Log lines are formatted as in production, then dropped (/dev/null)."""
    import logging

    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    with open(os.devnull, "w") as null:
        old = handler.setStream(null)
        try:
            yield
        finally:
            handler.setStream(old)


class Player:
    """Plays random legal moves, starting a new game when one ends."""

    def __init__(self, user: Any, rng: random.Random) -> None:
        self.user, self.rng = user, rng
        self.new_game()

    def new_game(self) -> None:
        from api import shapes
        from games.services import games as game_services

        game = game_services.practice_game_start(
            user=self.user, variant="bristol", seed=self.rng.randrange(2**32)
        )
        self.game_id, self.ply = game.pk, 0
        self.legal = shapes.game_state(game)["legal_moves"]

    def next_move(self) -> tuple[int, str, int]:
        if not self.legal:
            self.new_game()
        return self.game_id, self.rng.choice(self.legal), self.ply

    def moved(self, state: dict[str, Any]) -> None:
        self.ply = state["ply"]
        self.legal = state["legal_moves"] if state["status"] == "playing" else []


def _service_move(player: Player) -> None:
    from games.play.move import apply_move

    game_id, move, ply = player.next_move()
    result = apply_move(game_id=game_id, user=player.user, move=move, ply=ply)
    player.moved(result.state.as_json())


def _rest_client(observed: bool, key: str) -> Any:
    from django.conf import settings
    from django.test import Client, override_settings

    middleware = [m for m in settings.MIDDLEWARE if observed or "observability" not in m]
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    with override_settings(MIDDLEWARE=middleware):
        client.get("/api/v1/variants/")  # loads the middleware chain now, for good
    return client


def _rest_move(player: Player, client: Any) -> None:
    game_id, move, ply = player.next_move()
    response = client.post(
        f"/api/v1/games/{game_id}/moves/",
        {"move": move, "ply": ply},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    player.moved(response.json())


def _cpu_per_move(play: Callable[[], None], moves: int) -> float:
    start = time.process_time()
    for _ in range(moves):
        play()
    return (time.process_time() - start) / moves * 1e6


def _observed_row(calls: int) -> None:
    """The move metrics alone (a counter and a histogram), against an empty ``with``."""
    from core import metrics

    def cpu(observed: Callable[[str], contextlib.AbstractContextManager[None]]) -> float:
        start = time.process_time()
        for _ in range(calls):
            with observed("rest"):
                pass
        return (time.process_time() - start) / calls * 1e6

    empty = statistics.median(cpu(lambda t: contextlib.nullcontext()) for _ in range(5))
    counted = statistics.median(cpu(metrics.move_observed) for _ in range(5))
    print(f"  move metrics alone, a move: {counted - empty:+.1f} us")


def _middleware_rows(requests: int) -> None:
    """The site middleware alone, around a view that does nothing: no database, so little
    noise; with and without its log line (the logger disabled)."""
    from django.http import HttpRequest, HttpResponse
    from django.test import RequestFactory

    from patience_site import observability

    factory = RequestFactory()

    def bare(request: HttpRequest) -> HttpResponse:
        return HttpResponse("ok")

    observed = observability.ObservedMiddleware(bare)

    def cpu(handle: Callable[[HttpRequest], object]) -> float:
        batch = [factory.post("/api/v1/games/1/moves/") for _ in range(requests)]
        start = time.process_time()
        for request in batch:
            handle(request)
        return (time.process_time() - start) / requests * 1e6

    figures: dict[str, list[float]] = {"bare": [], "observed": [], "no log line": []}
    for _ in range(5):
        figures["bare"].append(cpu(bare))
        figures["observed"].append(cpu(observed))
        observability.logger.disabled = True
        figures["no log line"].append(cpu(observed))
        observability.logger.disabled = False
    bare_view, middleware, unlogged = (statistics.median(f) for f in figures.values())
    log_line, rest = middleware - unlogged, unlogged - bare_view
    print(f"  middleware alone, a request: {middleware - bare_view:+.1f} us: the log line")
    print(f"    {log_line:+.1f} us, request id and counter {rest:+.1f} us")


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--moves", type=int, default=2000, help="moves a side a door (2000)")
    parser.add_argument("--database-url", default=None, help="PostgreSQL server (SQLite)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cleanup = _setup(args.database_url, Path(tmp))
        try:
            with _quiet_logs():
                return _run(args.moves)
        finally:
            cleanup()


def _run(moves: int) -> int:
    from unittest import mock

    from accounts import services as account_services
    from devtools.accounts import PASSWORD
    from games.play import move as play_move

    user = account_services.user_register(username="bench-metrics", password=PASSWORD)
    key = account_services.token_create(user=user, name="bench")[1]
    off = mock.patch.object(play_move.metrics, "move_observed", lambda t: contextlib.nullcontext())
    player = Player(user, random.Random(7))
    clients = {True: _rest_client(True, key), False: _rest_client(False, key)}
    doors: dict[str, Callable[[bool], Callable[[], None]]] = {
        "service": lambda on: lambda: _service_move(player),
        "rest": lambda on: lambda: _rest_move(player, clients[on]),
    }
    per_round = max(1, moves // ROUNDS)
    print(f"Metrics overhead: CPU per move, {per_round * ROUNDS} moves a side, {ROUNDS} rounds")
    print(f"  {'door':8} {'metrics off':>12} {'metrics on':>12} {'overhead':>10}  (quartiles)")
    for door, make in doors.items():
        figures: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(ROUNDS):
            for on in (False, True):
                with contextlib.nullcontext() if on else off:
                    figures[on].append(_cpu_per_move(make(on), per_round))
        before, after = statistics.median(figures[False]), statistics.median(figures[True])
        # The paired differences of the rounds: their spread says how much is noise.
        q1, mid, q3 = statistics.quantiles(
            [a - b for a, b in zip(figures[True], figures[False], strict=True)], n=4
        )
        print(
            f"  {door:8} {before:9.1f} us {after:9.1f} us {mid:+7.1f} us  ({q1:+.0f} .. {q3:+.0f})"
        )
    _observed_row(moves * 10)
    _middleware_rows(moves)
    print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
