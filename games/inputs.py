"""What clients name and send, parsed once for REST, sockets and pages.

A variant key, a day (``YYYY-MM-DD`` or ``today``) and a move with the ply the
client has seen. Bad input raises the domain's errors: an unknown variant is
``NotFound``, anything malformed ``InvalidInput``; each door turns them into its
own answer (a status, a close code, a 404 page).
"""

from __future__ import annotations

import re
from datetime import date

from core import clock
from core.errors import InvalidInput, NotFound
from games.engine import VARIANTS

#: The word that stands for the current UTC day wherever a day is asked for.
TODAY = "today"
#: The one written form of a day (``date.fromisoformat`` alone also takes 20261201).
ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
#: Longest move notation a client may send (the longest real one is far shorter).
MOVE_MAX_LENGTH = 20


def variant_parse(key: str) -> str:
    """A variant's key, if there is such a variant."""
    if key not in VARIANTS:
        raise NotFound(f"no variant {key!r}")
    return key


def day_parse(text: str) -> date:
    """A day: ``YYYY-MM-DD``, or ``today`` (the current UTC day)."""
    if text == TODAY:
        return clock.today()
    try:
        # fromisoformat alone also takes 20261201 and 2026-W49-2: only the documented form.
        if not ISO_DAY.fullmatch(text):
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{text!r} is not a date (YYYY-MM-DD or today)") from None


def move_parse(move: object) -> str:
    """A move's notation as sent: text of 1 to ``MOVE_MAX_LENGTH`` characters.

    NUL and lone surrogates are refused, as REST's text fields refuse them: the
    database stores neither (an idempotent retry looks the notation up).
    """
    if not isinstance(move, str) or not 0 < len(move) <= MOVE_MAX_LENGTH:
        raise InvalidInput(f"'move' must be a notation of 1 to {MOVE_MAX_LENGTH} characters")
    if "\x00" in move or any("\ud800" <= c <= "\udfff" for c in move):
        raise InvalidInput("'move' must not contain NUL or surrogate characters")
    return move


def ply_parse(ply: object) -> int:
    """The log entries the client has seen: a whole number, at least 0 (not a bool)."""
    if isinstance(ply, bool) or not isinstance(ply, int) or ply < 0:
        raise InvalidInput("'ply' must be an integer >= 0 (the log entries you have seen)")
    return ply
