"""The states a Prometheus scrape reports, read when it scrapes: this process's (the hint
pool, the Redis breaker, the connection pool), then the cluster's (the race pool, today's
dailies) from the database. The gauges themselves are ``core.metrics``'s."""

from __future__ import annotations

import logging

from django.db import DatabaseError

from core import redis_guard
from core.db import pool_stats
from core.metrics import (
    DAILIES_READY,
    DAILY_LAST_DEALT,
    DATABASE_UP,
    DB_POOL,
    HINT_POOL_BROKEN,
    HINT_POOL_RESTARTS,
    HINT_WORKERS,
    HINTS_IN_FLIGHT,
    RACE_POOL,
    REDIS_BREAKER_OPEN,
)
from games import hints
from games.selectors import health, races

logger = logging.getLogger(__name__)


def gauges_refresh() -> None:
    """Read the states a scrape reports: this process's, then the cluster's (database)."""
    pool = hints.pool_state()
    HINT_WORKERS.set(pool["workers"])
    HINTS_IN_FLIGHT.set(pool["in_flight"])
    HINT_POOL_BROKEN.set(int(bool(pool["broken"])))
    HINT_POOL_RESTARTS.set(pool["restarts"])
    REDIS_BREAKER_OPEN.set(int(redis_guard.breaker_state() == "open"))
    for state, value in pool_stats().items():
        DB_POOL.labels(state).set(value)
    try:
        pools = races.race_pool_sizes()
        dailies_dealt = not health.dailies_missing()
        last = health.daily_last_dealt()
    except DatabaseError:  # a scrape answers most when the database is away
        logger.warning("metrics: the database states could not be read", exc_info=True)
        DATABASE_UP.set(0)
        return
    DATABASE_UP.set(1)
    for variant, size in pools.items():
        RACE_POOL.labels(variant).set(size)
    DAILIES_READY.set(int(dailies_dealt))
    if last is not None:
        DAILY_LAST_DEALT.set(last.timestamp())
