"""The service's notion of now and of the daily challenge's day (UTC).

Everything that depends on the date goes through here, so tests can move time.

Two clocks. ``now()`` is this process's clock: it times games (started and
finished). ``shared_now()`` is PostgreSQL's ``now()``, one clock for every
server process however far their own clocks drift: the day (``today``), the
cut-off of ranked results and the reveal of a day's seeds, decks and pars all
come from it. A day is revealed only ``DAILY_REVEAL_GRACE_SECONDS`` after it
ended, so a move that PostgreSQL timed before midnight (its transaction began
then) has committed before anyone sees the day's winning line. On SQLite (one
process, development) the shared clock is the process clock, and so it is where
``SHARED_CLOCK`` is ``process`` (one process on PostgreSQL, or servers whose clock a
test pins).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone


def now() -> datetime:
    """Current time of this process, timezone-aware UTC."""
    return timezone.now()


def shared_in_database() -> bool:
    """Whether the shared clock is the database's ``now()`` (else the process clock)."""
    return connection.vendor == "postgresql" and settings.SHARED_CLOCK != "process"


def shared_now() -> datetime:
    """Current time on the clock all server processes share (see the module docstring)."""
    if not shared_in_database():
        return now()
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0]


def today() -> date:
    """The current UTC day on the shared clock: the day whose dailies are being played."""
    return shared_now().astimezone(UTC).date()


def day_end(day: date) -> datetime:
    """The instant a UTC day ends (the next midnight)."""
    return datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=UTC)


def seconds_left(day: date) -> int:
    """Whole seconds until a day ends on the shared clock (0 once it has)."""
    return max(0, int((day_end(day) - shared_now()).total_seconds()))


def day_ended(day: date) -> bool:
    """True once a day has ended on the shared clock: ranked games of it no longer count."""
    return shared_now() >= day_end(day)


def day_over(day: date) -> bool:
    """True once a day ended at least the reveal grace ago on the shared clock: its seeds,
    decks, pars and replays are public, and its games may have hints."""
    grace = timedelta(seconds=settings.DAILY_REVEAL_GRACE_SECONDS)
    return shared_now() >= day_end(day) + grace


def iso(moment: datetime | None) -> str | None:
    """A moment as the API writes it: ISO 8601 in UTC with ``Z`` (as DRF's field with a
    UTC default time zone renders it)."""
    if moment is None:
        return None
    text = moment.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
