"""bench/profile_move.py: a sample's stack is put in its layer and given to the product
module that owns the work, so the profile's rows say where a move's CPU goes."""

from __future__ import annotations

import pytest

from bench.profile_move import FRAMEWORK, ROOT, classify, parse_frames

SITE = "/srv/venv/lib/python3.11/site-packages"
STDLIB = "/usr/lib/python3.11"


def test_a_raw_line_gives_its_thread_kind_files_and_count() -> None:
    line = (
        'process 7:"daphne";thread (27694): MainThread;'
        f"run_once ({STDLIB}/asyncio/base_events.py:1922);"
        f"game_moved ({ROOT}/api/consumers.py:410) 12\n"
    )
    kind, files, count = parse_frames(line)
    assert (kind, count) == ("event loop", 12)
    assert files == [f"{STDLIB}/asyncio/base_events.py", f"{ROOT}/api/consumers.py"]
    worker = line.replace(": MainThread", ": asyncio_2")
    assert parse_frames(worker)[0] == "worker threads"


@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        pytest.param(
            [
                f"{SITE}/daphne/server.py",
                f"{SITE}/channels/consumer.py",
                f"{ROOT}/api/consumers.py",
                f"{ROOT}/games/services/games.py",
                f"{SITE}/psycopg/cursor.py",
            ],
            ("psycopg", "games.services.games"),
            id="innermost product module owns the work, the library is the layer",
        ),
        pytest.param(
            [f"{ROOT}/games/services/games.py", f"{ROOT}/games/engine/bristol.py"],
            ("games.engine", "games.engine"),
            id="the engine is a layer of its own",
        ),
        pytest.param(
            [
                f"{ROOT}/api/throttling.py",
                f"{ROOT}/core/redis_guard.py",
                f"{SITE}/redis/connection.py",
            ],
            ("channels_redis/redis/msgpack", "api.throttling"),
            id="a helper counts for its caller",
        ),
        pytest.param(
            # A product middleware that calls Django's handler: below it is the framework's.
            [
                f"{ROOT}/patience_site/asgi.py",
                f"{SITE}/django/core/handlers/base.py",
                f"{STDLIB}/json/encoder.py",
            ],
            ("json/orjson", FRAMEWORK),
            id="a wrapper above a dispatcher owns nothing",
        ),
    ],
)
def test_a_sample_gets_its_layer_and_owner(stack: list[str], expected: tuple[str, str]) -> None:
    assert classify(stack) == expected
