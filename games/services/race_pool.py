"""The pool of certified race deals: each variant's unused deals, certified winnable by the
solver, which the job ``manage.py races`` keeps filled (``race_pool_fill``), so the solver
never runs on a request; a new race takes one (``race_pool_deal``)."""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet

from core import jobs
from core.errors import (
    NoCertifiedDeal,
    RacePoolEmpty,
)
from games.engine import SEED_LIMIT, VARIANTS, new_position
from games.engine.solver import Verdict, solve
from games.models import Deal
from games.selectors import races as race_selectors

logger = logging.getLogger(__name__)


def _pool(variant: str) -> QuerySet[Deal]:
    return race_selectors.race_pool(variant)


def _certified_seed(variant: str) -> tuple[int, list[str] | None, int | None]:
    """A random seed the solver proves winnable within ``RACE_SOLVER_NODES`` nodes."""
    limit = settings.RACE_SOLVER_NODES
    for _ in range(settings.DAILY_MAX_CANDIDATES):
        seed = secrets.randbelow(SEED_LIMIT)
        if not limit:
            return seed, None, None
        result = solve(new_position(variant, seed=seed), max_nodes=limit)
        if result.verdict is Verdict.WON:
            return seed, list(result.line), result.nodes
    raise NoCertifiedDeal(f"no winnable {variant} deal found for the race pool")


#: Namespace of this service's PostgreSQL advisory locks (the first of their two keys).
LOCK_SPACE = 3232
#: The second key of the lock that lets one process of the cluster fill the pool.
POOL_FILL_LOCK = 0


@contextmanager
def _pool_fill_lock() -> Iterator[bool]:
    """Hold the cluster-wide lock of filling the pool, without waiting; yields whether it
    was got. Several server processes start the job when the pool runs low: only one of
    them deals, the others see the lock taken and stop (that is what kept a burst of
    joins from dealing the pool three times over).

    PostgreSQL: a session advisory lock, released at the end (and by PostgreSQL if the
    process dies). SQLite (development, one machine): an exclusive ``flock`` on a file in
    the temporary directory named after the database, which the system releases with the
    process too; it does not span machines, which SQLite does not either. An in-memory
    database (tests) is one process's own, and so is its lock file.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_SPACE, POOL_FILL_LOCK])
            got = bool(cursor.fetchone()[0])
            try:
                yield got
            finally:
                if got:
                    cursor.execute(
                        "SELECT pg_advisory_unlock(%s, %s)", [LOCK_SPACE, POOL_FILL_LOCK]
                    )
        return
    name = str(connection.settings_dict["NAME"])
    if connection.is_in_memory_db():  # type: ignore[attr-defined]  # SQLite's own method
        name += f":{os.getpid()}"  # a database of this process alone (tests)
    path = Path(tempfile.gettempdir()) / f"patience-race-pool-{zlib.crc32(name.encode())}.lock"
    with path.open("a") as file:
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


def race_pool_fill(*, variants: list[str] | None = None, most: int | None = None) -> int:
    """Deal certified race deals until each variant has ``RACE_POOL_SIZE`` unused ones, at
    most ``most`` in all; returns how many were dealt (0 when another process is at it).

    Runs the solver: only the job ``manage.py races`` (and tests) call it, never a request.
    Once per cluster (``_pool_fill_lock``), and it counts the pool again before each deal,
    so it never deals past the target.
    """
    made = 0
    with _pool_fill_lock() as got:
        if not got:
            return 0
        for key in variants or list(VARIANTS):
            while _pool(key).count() < settings.RACE_POOL_SIZE:
                if most is not None and made >= most:
                    return made
                seed, line, nodes = _certified_seed(key)
                Deal.objects.create(
                    kind=Deal.Kind.RACE, variant=key, seed=seed, par_line=line, solver_nodes=nodes
                )
                made += 1
    return made


def race_pool_deal(variant: str) -> Deal:
    """Take an unused certified deal of the pool (inside the caller's transaction); start
    the job when the pool runs low, ``race_pool_empty`` when it is empty."""
    deal = _pool(variant).select_for_update(of=("self",), skip_locked=True).order_by("pk").first()
    if deal is None or _pool(variant).count() <= settings.RACE_POOL_SIZE // 2:
        jobs.race_pool_job_start()
    if deal is None:
        raise RacePoolEmpty(
            f"no {variant} race deal is ready: they are being dealt, try again in a moment",
            details={"retry_after": 5},
        )
    return deal
