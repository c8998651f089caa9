"""The service's notion of now and of the daily challenge's day (UTC).

Everything that depends on the date goes through here, so tests can move time.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from django.utils import timezone


def now() -> datetime:
    """Current time, timezone-aware UTC."""
    return timezone.now()


def today() -> date:
    """The current UTC day: the day whose dailies are being played."""
    return now().astimezone(UTC).date()


def day_end(day: date) -> datetime:
    """The instant a UTC day ends (the next midnight)."""
    return datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=UTC)


def seconds_left(day: date) -> int:
    """Whole seconds until a day ends (0 once it has)."""
    return max(0, int((day_end(day) - now()).total_seconds()))
