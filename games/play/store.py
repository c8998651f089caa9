"""A game as this process holds it, and the one guarded write of every change.

Every change of a game (a move, an undo, an end by the game, the player or the clock)
is one guarded ``UPDATE`` of its row: it applies only while the game is still as it was
read (at that ply, playing, hinted or not) and, on the shared clock, within a ranked
daily's day and a race's window (optimistic concurrency; no row lock). A move's or an
undo's log entry goes into the same row: its few bytes are appended to the packed log
(``games.engine.record``) and the position's stored bytes replaced, so a move writes one
row version and no index entry (docs/scaling.md). On PostgreSQL the bounds of the shared
clock are in the statement; on SQLite, whose shared clock is the process's, they are
checked before it.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, transaction

from core import clock
from core.errors import NotFound
from games.engine import Position, Status
from games.engine.record import EPOCH, pack_entry
from games.models import Game
from games.selectors.games import game_position
from games.selectors.races import RaceClock

# -- games this process holds ----------------------------------------------------------------

#: Games whose latest state this process knows (LRU): a socket's or a client's next move
#: then needs neither a read of the game nor a parse of its stored position.
HELD_GAMES = 1024


@dataclass(frozen=True)
class Held:
    """A game as committed at its ``game.ply``, with its position parsed (never mutated);
    for a race's game once it moved after the start, the race's fixed times. ``cached``:
    from this process's memory, not read just now."""

    game: Game
    position: Position
    race: RaceClock | None = None
    cached: bool = field(default=False, compare=False)


_held: OrderedDict[int, Held] = OrderedDict()
_held_lock = threading.Lock()


def hold(game: Game, position: Position, race: RaceClock | None = None) -> None:
    """Remember a committed game state for the next move; a finished game is forgotten."""
    with _held_lock:
        if game.status != Status.PLAYING:
            _held.pop(game.pk, None)
            return
        _held[game.pk] = Held(game, position, race, cached=True)
        _held.move_to_end(game.pk)
        while len(_held) > HELD_GAMES:
            _held.popitem(last=False)


def hold_on_commit(game: Game, position: Position, race: RaceClock | None = None) -> None:
    """``hold`` once the caller's transaction commits (at once outside one)."""
    transaction.on_commit(lambda: hold(game, position, race))


def held_at(game_id: int, ply: int, user: User) -> Held | None:
    """The game this process holds, if it is the player's and at ``ply``."""
    with _held_lock:
        held = _held.get(game_id)
    if held is None or held.game.ply != ply or held.game.player_id != user.pk:
        return None
    return held


def read(game_id: int, user: User) -> Held:
    """The game as committed now: one read, not locked; ``not_found`` for another
    player's game as for an unknown one."""
    game = Game.objects.select_related("deal").filter(pk=game_id, player=user).first()
    if game is None:
        raise NotFound(f"no game {game_id} of yours")
    return Held(game, game_position(game))


# -- the guarded write ------------------------------------------------------------------------


@dataclass(frozen=True)
class Guard:
    """What the game must still be for a write to apply: at ``ply``, playing, hinted as
    read (``assisted``), and on the shared clock from ``since`` (a race's start) and
    before each of ``until`` (a ranked daily's day's end, a race's time limit)."""

    game_id: int
    player_id: int
    ply: int
    assisted: bool
    since: datetime | None = None
    until: tuple[datetime, ...] = ()


def guard_of(game: Game, race: RaceClock | None) -> Guard | None:
    """The guard of a change of ``game`` as read, with the shared clock's bounds: on
    PostgreSQL's clock they go into the write, on the process clock they are checked
    here. None when the process clock already says no (the caller's read names why)."""
    day = game.deal.date if game.ranked else None
    since = race.starts_at if race is not None else None
    until = ((clock.day_end(day),) if day is not None else ()) + (
        (race.ends_at,) if race is not None else ()
    )
    if not clock.shared_in_database():
        now = clock.shared_now()
        if (since is not None and now < since) or any(now >= t for t in until):
            return None
        since, until = None, ()
    return Guard(game.pk, game.player_id, game.ply, game.assisted, since, until)


@dataclass(frozen=True)
class Change:
    """A game's row after a change; ``position`` None keeps the stored one (an end by the
    player or the clock changes no card)."""

    ply: int
    undo_floor: int
    score: int
    status: str
    finished_at: datetime | None
    position: bytes | None = None


@dataclass(frozen=True)
class Entry:
    """A move's or an undo's log entry, at the guard's ply: its notation, made at ``at``."""

    notation: str
    at: datetime


_CHANGED = ("ply", "undo_floor", "score", "status", "finished_at")


def _entry_bytes(game: Game, entry: Entry) -> bytes:
    """``entry`` packed to follow ``game``'s log: its time since the entry before it (the
    first: since the epoch)."""
    before = game.moved_at or EPOCH
    return pack_entry(game.deal.variant, entry.notation, (entry.at - before) // _MS)


_MS = timedelta(milliseconds=1)


@cache
def _sql(position: bool, entry: bool, since: bool, until: int) -> str:
    """PostgreSQL's guarded write in one statement, for one shape of change."""
    q = connection.ops.quote_name
    sets = ", ".join(f"{name} = %s" for name in _CHANGED)
    sets += ", position = %s" if position else ""
    sets += ", log = log || %s, moved_at = %s" if entry else ""
    where = "id = %s AND player_id = %s AND ply = %s AND status = 'playing' AND assisted = %s"
    where += (" AND now() >= %s" if since else "") + " AND now() < %s" * until
    return f"UPDATE {q(Game._meta.db_table)} SET {sets} WHERE {where} RETURNING id"


def write(guard: Guard, game: Game, change: Change, entry: Entry | None = None) -> Game | None:
    """Apply ``change`` to ``game`` as read (and append ``entry`` to its log) if it is
    still as ``guard`` says: the game as written (a copy: the one read stays as it was),
    or None when the guard missed (the game changed meanwhile, or the clock's bounds)."""
    after = copy.copy(game)
    for name in _CHANGED:
        setattr(after, name, getattr(change, name))
    if change.position is not None:
        after.position = change.position
    added = b""
    if entry is not None:
        added = _entry_bytes(game, entry)
        after.log, after.moved_at = bytes(game.log) + added, entry.at
    if connection.vendor == "postgresql":
        params: list[Any] = [getattr(change, name) for name in _CHANGED]
        if change.position is not None:
            params.append(change.position)
        if entry is not None:
            params += [added, entry.at]
        params += [guard.game_id, guard.player_id, guard.ply, guard.assisted]
        params += ([guard.since] if guard.since else []) + list(guard.until)
        shape = (change.position is not None, entry is not None, guard.since is not None)
        with connection.cursor() as cursor:
            cursor.execute(_sql(*shape, len(guard.until)), params)
            return after if cursor.fetchone() is not None else None
    assert guard.since is None and not guard.until, "the clock's bounds are PostgreSQL's"
    values: dict[str, Any] = {name: getattr(change, name) for name in _CHANGED}
    if change.position is not None:
        values["position"] = change.position
    if entry is not None:  # the guard holds the ply, so the log read is the stored one
        values |= {"log": after.log, "moved_at": entry.at}
    moved = Game.objects.filter(
        pk=guard.game_id,
        player_id=guard.player_id,
        ply=guard.ply,
        status=Status.PLAYING,
        assisted=guard.assisted,
    ).update(**values)
    return after if moved else None
