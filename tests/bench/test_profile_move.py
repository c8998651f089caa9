"""bench/profile_move.py: a sample's stack is put in its layer and given to the product
module that owns the work, so the profile's rows say where a move's CPU goes."""

from __future__ import annotations

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


def test_work_belongs_to_the_innermost_product_module_and_its_layer_to_the_library() -> None:
    stack = [
        f"{SITE}/daphne/server.py",
        f"{SITE}/channels/consumer.py",
        f"{ROOT}/api/consumers.py",
        f"{ROOT}/games/services/games.py",
        f"{SITE}/psycopg/cursor.py",
    ]
    assert classify(stack) == ("psycopg", "games.services.games")


def test_the_engine_is_a_layer_of_its_own() -> None:
    stack = [f"{ROOT}/games/services/games.py", f"{ROOT}/games/engine/bristol.py"]
    assert classify(stack) == ("games.engine", "games.engine")


def test_a_helper_counts_for_its_caller() -> None:
    stack = [
        f"{ROOT}/api/throttling.py",
        f"{ROOT}/games/redis_guard.py",
        f"{SITE}/redis/connection.py",
    ]
    assert classify(stack) == ("channels_redis/redis/msgpack", "api.throttling")


def test_a_wrapper_above_a_dispatcher_owns_nothing() -> None:
    """A product middleware that calls Django's handler: what runs below is the framework's."""
    stack = [
        f"{ROOT}/patience_site/asgi.py",
        f"{SITE}/django/core/handlers/base.py",
        f"{STDLIB}/json/encoder.py",
    ]
    assert classify(stack) == ("json/orjson", FRAMEWORK)
