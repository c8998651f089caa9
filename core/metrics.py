"""Prometheus metrics of the service (``prometheus-client``), one definition each.

Counters and histograms are counted where the thing happens, once: a move in the move
service (``games.services.games.game_apply_move``, whatever the door), a socket in the
ASGI wrapper of every socket, an HTTP answer in the site's middleware. States (the hint
pool, the Redis breaker, the connection pool, the race pool, today's dailies) are read
when Prometheus scrapes (``games.gauges.gauges_refresh``).

Under gunicorn (several worker processes) ``PROMETHEUS_MULTIPROC_DIR`` names a directory
that the workers write their values to, and a scrape of any worker adds them up
(``prometheus_client.multiprocess``); ``patience_site/gunicorn.py`` clears it at start
and marks a dead worker's files. A per-process state (hint pool, breaker, connection
pool) is that worker's as of its last scrape: each worker answers scrapes in turn.
"""

from __future__ import annotations

import os
import time
from functools import cache

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

MOVES = Counter(
    "patience_moves",
    "Move and undo requests by door (rest, ws) and outcome (ok, or the refusal's code).",
    ["transport", "outcome"],
)
MOVE_SECONDS = Histogram(
    "patience_move_seconds",
    "Time the move service took for one move or undo request, by door.",
    ["transport"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
OPEN_SOCKETS = Gauge(
    "patience_open_sockets",
    "WebSockets open now, by kind (game, daily, race, other).",
    ["kind"],
    multiprocess_mode="livesum",
)
HTTP_RESPONSES = Counter(
    "patience_http_responses",
    "HTTP answers by route (the URL pattern) and status class (2xx, 3xx, 4xx, 5xx).",
    ["route", "status"],
)
HINT_WORKERS = Gauge(
    "patience_hint_workers", "Live hint solver processes.", multiprocess_mode="livesum"
)
HINTS_IN_FLIGHT = Gauge(
    "patience_hints_in_flight", "Hints waiting or being solved.", multiprocess_mode="livesum"
)
HINT_POOL_BROKEN = Gauge(
    "patience_hint_pool_broken",
    "1 when the last hint found no working solver pool in some process.",
    multiprocess_mode="livemax",
)
HINT_POOL_RESTARTS = Gauge(
    "patience_hint_pool_restarts", "Broken hint pools replaced.", multiprocess_mode="livesum"
)
REDIS_BREAKER_OPEN = Gauge(
    "patience_redis_breaker_open",
    "1 while Redis is left alone after a failure (fallbacks in use) in some process.",
    multiprocess_mode="livemax",
)
DB_POOL = Gauge(
    "patience_db_pool_connections",
    "Database pool: connections open (size), idle (available), requests waiting, most (max).",
    ["state"],
    multiprocess_mode="livesum",
)
RACE_POOL = Gauge(
    "patience_race_pool_deals",
    "Unused certified race deals, by variant.",
    ["variant"],
    multiprocess_mode="mostrecent",
)
DAILIES_READY = Gauge(
    "patience_dailies_dealt_today",
    "1 when every variant's daily of today is dealt.",
    multiprocess_mode="mostrecent",
)
DAILY_LAST_DEALT = Gauge(
    "patience_daily_last_dealt_timestamp_seconds",
    "When the daily job last dealt a daily (its last success that dealt one).",
    multiprocess_mode="mostrecent",
)

DATABASE_UP = Gauge(
    "patience_database_up",
    "1 when the last scrape read the database's states (race pool, dailies), else 0.",
    multiprocess_mode="mostrecent",
)

#: Each label set's child, found once: ``labels()`` validates and locks on every call.
_moves = cache(MOVES.labels)
_move_seconds = cache(MOVE_SECONDS.labels)
_responses = cache(HTTP_RESPONSES.labels)


class move_observed:  # lower case: it reads as a function, ``with move_observed("ws"):``
    """Count and time one move request; its outcome is the refusal's code if it raises.

    A class, not a generator context manager: it runs on every move (bench/metrics.py).
    """

    __slots__ = ("transport", "start")

    def __init__(self, transport: str) -> None:
        self.transport = transport

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, kind: object, exc: BaseException | None, trace: object) -> None:
        _move_seconds(self.transport).observe(time.perf_counter() - self.start)
        outcome = "ok" if exc is None else str(getattr(exc, "code", "error"))
        _moves(self.transport, outcome).inc()


def http_response_count(route: str, status: int) -> None:
    """Count one HTTP answer."""
    _responses(route, f"{status // 100}xx").inc()


def exposition() -> tuple[bytes, str]:
    """The scrape's text and content type: every worker's values under gunicorn (the
    states are read first by the caller: ``games.gauges.gauges_refresh``)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
