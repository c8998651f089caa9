"""Template helpers: variant names, durations, and data for the scripts."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from django import template
from django.template.defaultfilters import floatformat
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
def cell(line: dict[str, Any], key: str) -> object:
    """A board line's ``key`` as a table cell shows it: a rating with one decimal."""
    value = line[key]
    return floatformat(value, 1) if isinstance(value, float) else value


@register.filter
def add_days(day: date, n: int) -> date:
    """A date n days later (or earlier for negative n)."""
    return day + timedelta(days=int(n))


#: A fanned card steps this much (card widths) below the one under it (board.js's
#: INDEX_STEP); a fan's or reserve's box has room for ten cards, or its longest pile.
INDEX_STEP = 0.35
FAN_SPREAD = 9 * INDEX_STEP

#: The board's size as board.js fits it, from app.css's layout: ``aw + bw * cw`` px wide and
#: ``ah + bh * cw`` px high for a card width ``cw``, on a landscape ("w") and a portrait ("t")
#: window. ``bh`` is ``base`` plus the spreads of the fans and reserves as the layout adds
#: them up (a row beside or below the other).
_SHAPES: dict[str, dict[str, dict[str, Any]]] = {
    "bristol": {
        "w": {"bw": 11, "aw": 200, "ah": 94, "bh": lambda t, r: 2.8 + max(t, r)},
        "t": {"bw": 8, "aw": 40, "ah": 44, "bh": lambda t, r: 4.2 + t + r},
    },
    "gallery": {
        "w": {"bw": 13.9, "aw": 203, "ah": 53, "bh": lambda t, r: max(7.15, 4.2 + r)},
        "t": {"bw": 8, "aw": 58, "ah": 49, "bh": lambda t, r: 10.15 + r},
    },
}


def _spread(piles: dict[str, list[str]], kind: str) -> float:
    longest = max((len(cards) for pid, cards in piles.items() if pid[0] == kind), default=0)
    return max(FAN_SPREAD, (longest - 1) * INDEX_STEP)


@register.simple_tag
def board_box(family: str, position: dict[str, Any] | None = None) -> str:
    """CSS variables of the box a board will take (app.css's ``.board-frame``), so the page
    keeps its room before the script draws it: nothing below the board moves then."""
    piles = (position or {}).get("piles") or {}
    t, r = _spread(piles, "t"), _spread(piles, "r")
    out = []
    for name, shape in _SHAPES[family].items():
        bh = round(shape["bh"](t, r), 2)
        out += [f"--bw-{name}: {shape['bw']}", f"--aw-{name}: {shape['aw']}"]
        out += [f"--ah-{name}: {shape['ah']}", f"--bh-{name}: {bh}"]
    return "; ".join(out)
