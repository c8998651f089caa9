"""Template helpers: variant names, durations, and data for the scripts."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from django import template
from django.utils.dateparse import parse_date, parse_datetime

from accounts.selectors import is_guest as _is_guest
from web.variants import all_variants, variant_name

register = template.Library()


@register.filter
def variant_label(key: str) -> str:
    """The translated name of a variant key."""
    return variant_name(key)


def _clock(seconds: int) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


@register.filter
def duration(ms: int | None) -> str:
    """Milliseconds (a game's ``elapsed_ms``, a result's ``time_ms``) as h:mm:ss or m:ss."""
    return "" if ms is None else _clock(int(ms) // 1000)


@register.filter
def countdown(seconds: int | None) -> str:
    """Whole seconds (``core.clock.seconds_left``) as h:mm:ss or m:ss: what the page shows
    before its script takes over the countdown, so it must be right on its own."""
    return "" if seconds is None else _clock(int(seconds))


@register.filter
def is_guest(user: object) -> bool:
    """A visitor playing as a guest (``accounts.models.Guest``): practice only, no name."""
    return _is_guest(user)


@register.filter
def registered(user: object) -> bool:
    """Signed in with an account of one's own (not a guest): dailies, races and tokens."""
    return bool(getattr(user, "is_authenticated", False)) and not _is_guest(user)


@register.filter
def percent(value: float | None) -> str:
    return f"{round((value or 0) * 100)} %"


@register.simple_tag
def variants_data() -> list[dict]:
    """Every variant with its translated name (for json_script)."""
    return all_variants()


@register.filter
def iso(text: str | None) -> date | datetime | None:
    """An ISO date or date-time of a JSON shape (``api.shapes``) as a value the ``date``
    filter formats."""
    if not text:
        return None
    return parse_date(text) or parse_datetime(text)


@register.filter
def add_days(day: date, n: int) -> date:
    """A date n days later (or earlier for negative n)."""
    return day + timedelta(days=int(n))
