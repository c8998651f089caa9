"""A game as this process holds it, and the one guarded write of every change.

Every change of a game (a move, an undo, an end by the game, the player or the clock)
is one guarded ``UPDATE`` of its row: it applies only while the game is still as it was
read (at that ply, playing, hinted or not) and, on the shared clock, within a ranked
daily's day and a race's window (optimistic concurrency; no row lock). A move's or an
undo's log entry is inserted by the same write. On PostgreSQL that is one statement (the
``UPDATE`` feeding the ``INSERT``: about a fifth of the server CPU of the ORM's pair in a
transaction, and one round trip instead of four, docs/scaling.md); on SQLite, whose
shared clock is the process's, the ORM's two in one transaction.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

import orjson
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from core import clock
from core.errors import NotFound
from games.engine import Position, Status
from games.models import Game, Move
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
    position: dict[str, Any] | None = None


@dataclass(frozen=True)
class Entry:
    """A move's or an undo's log entry, at the guard's ply: its notation and the moves on
    the board after it (the position it leaves is the change's)."""

    notation: str
    depth: int


_CHANGED = ("ply", "undo_floor", "score", "status", "finished_at")


@cache
def _sql(position: bool, entry: bool, since: bool, until: int) -> str:
    """PostgreSQL's guarded write in one statement, for one shape of change."""
    q = connection.ops.quote_name
    game, log = q(Game._meta.db_table), q(Move._meta.db_table)
    sets = ", ".join(f"{name} = %s" for name in _CHANGED)
    sets += ", position = %s::jsonb" if position else ""
    where = "id = %s AND player_id = %s AND ply = %s AND status = 'playing' AND assisted = %s"
    where += (" AND now() >= %s" if since else "") + " AND now() < %s" * until
    update = f"UPDATE {game} SET {sets} WHERE {where}"
    if not entry:
        return f"{update} RETURNING id"
    return (
        f"WITH moved AS ({update} RETURNING id, position) "
        f"INSERT INTO {log} (game_id, ply, notation, created_at, position, depth) "
        "SELECT id, %s, %s, %s, position, %s FROM moved RETURNING game_id"
    )


def write(guard: Guard, change: Change, entry: Entry | None = None) -> bool:
    """Apply ``change`` (and insert ``entry``) if the game is still as ``guard`` says;
    False when the guard missed (the game changed meanwhile, or the clock's bounds)."""
    if connection.vendor == "postgresql":
        params: list[Any] = [getattr(change, name) for name in _CHANGED]
        if change.position is not None:
            params.append(orjson.dumps(change.position).decode())  # a tenth of json's time
        params += [guard.game_id, guard.player_id, guard.ply, guard.assisted]
        params += ([guard.since] if guard.since else []) + list(guard.until)
        if entry is not None:
            params += [guard.ply, entry.notation, timezone.now(), entry.depth]
        shape = (change.position is not None, entry is not None, guard.since is not None)
        with connection.cursor() as cursor:
            cursor.execute(_sql(*shape, len(guard.until)), params)
            return cursor.fetchone() is not None
    assert guard.since is None and not guard.until, "the clock's bounds are PostgreSQL's"
    values = {name: getattr(change, name) for name in _CHANGED}
    if change.position is not None:
        values["position"] = change.position
    with transaction.atomic():
        moved = Game.objects.filter(
            pk=guard.game_id,
            player_id=guard.player_id,
            ply=guard.ply,
            status=Status.PLAYING,
            assisted=guard.assisted,
        ).update(**values)
        if moved and entry is not None:
            stored = change.position if change.position is not None else {}
            Move.objects.create(
                game_id=guard.game_id,
                ply=guard.ply,
                notation=entry.notation,
                position=stored,
                depth=entry.depth,
            )
    return bool(moved)


def changed(game: Game, change: Change) -> Game:
    """``game`` as the write left it (a copy: the one read stays as it was)."""
    after = copy.copy(game)
    for name in _CHANGED:
        setattr(after, name, getattr(change, name))
    if change.position is not None:
        after.position = change.position
    return after
