"""The database connection pool heals at the first dead connection it hands out.

When PostgreSQL ends its backends (a restart, a failover, an operator's
``pg_terminate_backend``), every idle connection in psycopg's pool is dead, and
the pool only finds out when it hands one out: each then costs a request its
answer (503), one by one, for as long as the pool keeps them (minutes, when
traffic is light). Checking every connection on checkout would cost a round trip
per request; instead the first request that meets a dead connection has the pool
check all its idle ones (``ConnectionPool.check``), in a thread of its own so that
no request waits for it. So a backend kill costs the requests in flight, not
minutes of them.

Each ``check`` also grows the pool by one connection (psycopg_pool 3.3) up to its
``max_size``, which is therefore the process's hard bound (``DB_POOL_MAX_SIZE``:
one per thread), and ``max_idle`` (``DB_POOL_MAX_IDLE``) shrinks it back once the
faults stop. Replacing the connections instead (``drain``, no growth) served a
third of the requests under repeated kills: every sweep reconnected the healthy
ones too.
"""

from __future__ import annotations

import logging
import threading

from django.db import connections

logger = logging.getLogger(__name__)

_sweeping = threading.Lock()


def _sweep(pool: object) -> None:
    try:
        pool.check()  # type: ignore[attr-defined]
    except Exception:  # the database is down: the next dead connection sweeps again
        logger.warning("could not check the pooled database connections", exc_info=True)
    finally:
        _sweeping.release()


def pool_sweep() -> None:
    """A request met a dead database connection: have the pool replace its other dead
    ones now, once at a time, in the background. Without a pool (SQLite, persistent
    connections) there is nothing to sweep."""
    pool = getattr(connections["default"], "pool", None)
    if pool is None or not _sweeping.acquire(blocking=False):
        return
    threading.Thread(target=_sweep, args=(pool,), name="db-pool-sweep", daemon=True).start()


def pool_stats() -> dict[str, int]:
    """This process's connection pool, for metrics: connections open (``size``), of them
    idle (``available``), requests waiting for one, and the most it may open (``max``).
    Empty without a pool (SQLite, persistent connections)."""
    pool = getattr(connections["default"], "pool", None)
    if pool is None:
        return {}
    stats = pool.get_stats()
    keys = {"size": "pool_size", "available": "pool_available", "waiting": "requests_waiting"}
    found = {name: int(stats.get(key, 0)) for name, key in keys.items()}
    return {**found, "max": int(pool.max_size)}
