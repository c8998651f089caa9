"""Readiness: what a server process needs before it should get traffic.

A liveness probe needs none of this (the process answers); a readiness probe that fails
takes the process out of the load balancer until the database is back, the migrations
have run and the job has dealt today's dailies (players would get ``daily_not_ready``).
"""

from __future__ import annotations

from datetime import datetime

from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Max

from core import clock
from games.engine import VARIANTS
from games.models import Deal

#: Set once this process has seen every migration applied: the code it runs cannot gain
#: migrations later, so the migration graph is not loaded again on every probe.
_migrated: list[bool] = []


def _migrations_pending() -> int:
    if _migrated:
        return 0
    executor = MigrationExecutor(connection)
    pending = len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
    if not pending:
        _migrated.append(True)
    return pending


def dailies_missing() -> list[str]:
    """The variants whose daily for today (shared clock) has not been dealt yet."""
    dealt = set(
        Deal.objects.filter(kind=Deal.Kind.DAILY, date=clock.today()).values_list(
            "variant", flat=True
        )
    )
    return sorted(set(VARIANTS) - dealt)


def daily_last_dealt() -> datetime | None:
    """When the daily job last dealt a daily (None before the first)."""
    latest = Deal.objects.filter(kind=Deal.Kind.DAILY).aggregate(Max("created_at"))
    return latest["created_at__max"]


def readiness_failures() -> dict[str, str]:
    """The readiness checks that fail, each with why (empty: ready). The database comes
    first: without it the other two cannot be checked."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        return {"database": f"unreachable: {exc.__class__.__name__}"}
    failures = {}
    if pending := _migrations_pending():
        failures["migrations"] = f"{pending} migration(s) not applied"
    if missing := dailies_missing():
        failures["dailies"] = "today's daily not dealt: " + ", ".join(missing)
    return failures
