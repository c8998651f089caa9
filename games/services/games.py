"""Writes: accounts, tokens, starting games, moves, undo, resign.

One command applies a move for every door (REST and WebSocket), on PostgreSQL and
SQLite alike (``game_apply_move``):

1. read the game: from this process's cache when it holds the game at the ply the
   client sent (a read-through cache: it served the game's last move, started it or
   read it), else one read, not locked;
2. let the engine judge the move on that position;
3. write it with one guarded ``UPDATE`` of the game (from that ply, still playing, not
   hinted meanwhile, and on the shared clock within a ranked daily's day or a race's
   window: optimistic concurrency) and the ``INSERT`` of its log entry, atomically
   (``_write_move``: one statement on PostgreSQL, the ORM's two in a transaction on
   SQLite).

A row lock is taken only where a rule needs the game unchanged until commit: the end
of a game (its result, a race's finish), the undo floor, a ranked daily's expiry, a
race's start proven on a first move; and whenever the guard misses, so every refusal
(``stale_ply``, duplicates, finished games, day over) comes from the locked path, with
the game as it is. Each change emits one ``GameMoved`` event (``games.event_types``)
carrying the game's public state, sent after commit (``games.events``); what follows a
game's moves (a race's end) subscribes to it, so this module imports no race service.
"""

from __future__ import annotations

import copy
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

import orjson
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from games import clock, events, metrics
from games.engine import (
    SEED_LIMIT,
    UNDO,
    EngineError,
    GameLog,
    Position,
    Status,
    UndoNotAllowedError,
    get_variant,
    new_position,
)
from games.errors import (
    BadPly,
    DayOver,
    GameFinished,
    InvalidInput,
    NotFound,
    StalePly,
    UndoNotAllowed,
)
from games.event_types import GameMoved
from games.models import EXPIRED, MOVE_LIMIT, Deal, Game, Move
from games.selectors.games import (
    deal_start,
    game_current_log,
    game_for_player,
    game_position,
)
from games.selectors.races import RaceClock, race_game_check


@dataclass(frozen=True)
class MoveOutcome:
    """A game after a move request; ``duplicate`` marks a safe retry that applied nothing.
    ``event`` is the move's event (None for a retry): the caller's answer shows the state
    its message carries, rendered once."""

    game: Game
    position: Position
    duplicate: bool = False
    event: GameMoved | None = None


def _check_seed(seed: int | None) -> int:
    if seed is None:
        return secrets.randbelow(SEED_LIMIT)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise InvalidInput("seed must be an integer with 0 <= seed < 2**64")
    return seed


def game_create(*, user: User, deal: Deal, ranked: bool = False) -> Game:
    """A new game of a deal for a player, timed from now; held for its first move."""
    start = new_position(deal.variant, seed=int(deal.seed))
    game = Game.objects.create(
        player=user,
        deal=deal,
        ranked=ranked,
        started_at=clock.now(),
        position=start.to_json(),
        score=start.score,
        status=start.status.value,
        finished_at=None if start.status == Status.PLAYING else clock.now(),
    )
    transaction.on_commit(lambda: _hold(game, start))
    return game


@transaction.atomic
def practice_game_start(*, user: User, variant: str, seed: int | None = None) -> Game:
    """Start a practice game of a variant; a random seed when none is given."""
    v = get_variant(variant)
    deal, _ = Deal.objects.get_or_create(
        kind=Deal.Kind.PRACTICE, variant=v.key, seed=_check_seed(seed)
    )
    return game_create(user=user, deal=deal)


def _locked_game(game_id: int, user: User) -> Game:
    try:
        # Lock the game row only: a bare FOR UPDATE would also lock the joined deal, which
        # every player of a daily shares, and serialize all their moves.
        return (
            Game.objects.select_for_update(of=("self",))
            .select_related("deal")
            .get(pk=game_id, player=user)
        )
    except Game.DoesNotExist:
        raise NotFound(f"no game {game_id} of yours") from None


def _next_log(game: Game, log: GameLog, move: str) -> GameLog:
    """The log after ``move`` (a move or ``undo``); raises when the rules refuse it."""
    if move != UNDO:
        return log.play(move)
    try:
        return log.undo(ranked=game.ranked, position_at=lambda depth: _position_at(game, depth))
    except UndoNotAllowedError as exc:
        raise UndoNotAllowed(str(exc)) from None


def _position_at(game: Game, depth: int) -> Position:
    """The position the log last left with ``depth`` moves on the board (or the deal's
    start): one indexed read, whatever the log's length."""
    below = game.moves.filter(depth=depth).order_by("-ply").only("position").first()
    if below is None:
        return deal_start(game.deal)
    return Position.from_json(below.position)


def _notation_at(game: Game, ply: int) -> str | None:
    """The notation of the log entry at ``ply``, if there is one."""
    return game.moves.filter(ply=ply).values_list("notation", flat=True).first()


# -- games this process holds --------------------------------------------------------------

#: Games whose latest state this process knows (LRU): a socket's or a client's next move
#: then needs neither a read of the game nor a parse of its stored position.
HELD_GAMES = 1024


@dataclass(frozen=True)
class _Held:
    """A game as committed at its ``game.ply``, with its position parsed (never mutated),
    and for a race's game once it moved after the start, the race's fixed times."""

    game: Game
    position: Position
    race: RaceClock | None = None


_held: OrderedDict[int, _Held] = OrderedDict()
_held_lock = threading.Lock()


def _hold(game: Game, position: Position, race: RaceClock | None = None) -> None:
    """Remember a committed game state for the next move; a finished game is forgotten."""
    with _held_lock:
        if game.status != Status.PLAYING:
            _held.pop(game.pk, None)
            return
        _held[game.pk] = _Held(game, position, race)
        _held.move_to_end(game.pk)
        while len(_held) > HELD_GAMES:
            _held.popitem(last=False)


def _held_at(game_id: int, ply: int, user: User) -> _Held | None:
    with _held_lock:
        held = _held.get(game_id)
    if held is None or held.game.ply != ply or held.game.player_id != user.pk:
        return None
    return held


def _read(game_id: int, user: User, ply: int) -> _Held | None:
    """The game as committed, for a move from ``ply``: from this process's cache when it
    holds the game at that ply (a read-through cache), else one read, not locked, which
    the cache keeps once committed. None when only the locked path can answer (no such game of the
    player, a finished game, another ply: a retry, ``stale_ply`` or ``bad_ply``)."""
    held = _held_at(game_id, ply, user)
    if held is not None:
        return held
    game = Game.objects.select_related("deal").filter(pk=game_id, player=user).first()
    if game is None or game.status != Status.PLAYING or game.ply != ply:
        return None
    position = game_position(game)
    transaction.on_commit(lambda: _hold(game, position))  # inside a caller's transaction
    return _Held(game, position)


@dataclass(frozen=True)
class _Bounds:
    """The shared clock's bounds of a move that the guarded write checks on PostgreSQL's
    ``now()``: from ``since`` (a race's start), before each of ``until`` (a ranked daily's
    day's end, a race's time limit)."""

    since: datetime | None = None
    until: tuple[datetime, ...] = ()


def _clock_bounds(game: Game, race: RaceClock | None) -> _Bounds | None:
    """What the shared clock must show for a move: a ranked daily's day not over, a race's
    game between its start and its time limit. On PostgreSQL's clock the bounds go into
    the guarded write; on the process clock they are checked here. None when the process
    clock says no (the locked path answers why)."""
    day = game.deal.date if game.ranked else None
    since = race.starts_at if race is not None else None
    until = ([clock.day_end(day)] if day is not None else []) + (
        [race.ends_at] if race is not None else []
    )
    if clock.shared_in_database():
        return _Bounds(since, tuple(until))
    now = clock.shared_now()
    inside = (since is None or now >= since) and all(now < t for t in until)
    return _Bounds() if inside else None


@cache
def _move_sql(since: bool, until: int) -> str:
    """PostgreSQL's guarded write in one statement: the game's ``UPDATE`` (the guard in its
    ``WHERE``, the clock's bounds on the statement's ``now()``) feeds the ``INSERT`` of the
    log entry, which so exists exactly when the game moved."""
    q = connection.ops.quote_name
    game, entry = q(Game._meta.db_table), q(Move._meta.db_table)
    bounds = (" AND now() >= %s" if since else "") + " AND now() < %s" * until
    return (
        f"WITH moved AS (UPDATE {game} SET ply = %s, undo_floor = %s, score = %s, "
        "position = %s::jsonb WHERE id = %s AND player_id = %s AND ply = %s "
        f"AND status = 'playing' AND assisted = %s{bounds} RETURNING id, position) "
        f"INSERT INTO {entry} (game_id, ply, notation, created_at, position, depth) "
        "SELECT id, %s, %s, %s, position, %s FROM moved RETURNING game_id"
    )


def _write_move(game: Game, ply: int, move: str, log: GameLog, bounds: _Bounds) -> bool:
    """The guarded write of a move: the game moves on from ``ply`` while playing, not hinted
    meanwhile and within the clock's bounds, and its log entry is inserted, atomically;
    False when the guard missed. The guard is the same on every database, its statement
    is not: on PostgreSQL one statement (about a fifth of the server CPU of the ORM's
    ``UPDATE`` and ``INSERT`` in a transaction, and one round trip instead of four:
    docs/scaling.md), elsewhere (SQLite, whose shared clock is the process's, so no
    bounds) the ORM's two in one transaction."""
    pos = log.position
    if connection.vendor == "postgresql":
        params: list[Any] = [log.entries, log.undo_floor, pos.score]
        params += [orjson.dumps(game.position).decode()]  # a tenth of the json module's time
        params += [game.pk, game.player_id, ply, game.assisted]
        params += ([bounds.since] if bounds.since else []) + list(bounds.until)
        params += [ply, move, timezone.now(), log.moves_on_board]
        with connection.cursor() as cursor:
            cursor.execute(_move_sql(bounds.since is not None, len(bounds.until)), params)
            return cursor.fetchone() is not None
    assert bounds == _Bounds(), "the shared clock is the database's on PostgreSQL only"
    with transaction.atomic():
        moved = Game.objects.filter(
            pk=game.pk,
            player_id=game.player_id,
            ply=ply,
            status=Status.PLAYING,
            assisted=game.assisted,
        ).update(
            ply=log.entries, undo_floor=log.undo_floor, score=pos.score, position=game.position
        )
        if moved:
            _log_entry(game, ply, move, log)
    return bool(moved)


def _log_entry(game: Game, ply: int, move: str, log: GameLog) -> None:
    """The log entry of ``move`` played at ``ply``: the position it left (``game``'s, as
    stored by the same write), for undo without replay."""
    Move.objects.create(
        game_id=game.pk, ply=ply, notation=move, position=game.position, depth=log.moves_on_board
    )


def _apply_guarded(held: _Held, move: str, ply: int) -> MoveOutcome | None:
    """The common move, without a lock: the guarded write (``_write_move``: optimistic
    concurrency). None when only the locked path can answer: an undo (its floor), an
    illegal move (the answer needs the current game), a move that ends the game (its
    result), a race's game whose start this process has not proven yet, a time the
    process clock refuses, or a guard that missed (the game changed meanwhile)."""
    game, race = held.game, held.race
    if move == UNDO or (game.deal.kind == Deal.Kind.RACE and race is None):
        return None
    bounds = _clock_bounds(game, race)
    if bounds is None:
        return None
    try:
        log = GameLog(held.position, entries=ply, undo_floor=game.undo_floor).play(move)
    except EngineError:
        return None
    pos = log.position
    if pos.status != Status.PLAYING or log.entries >= settings.GAME_MAX_LOG:
        return None
    moved = copy.copy(game)
    moved.ply, moved.undo_floor, moved.score, moved.position = (
        log.entries,
        log.undo_floor,
        pos.score,
        pos.to_json(),
    )
    if not _write_move(moved, ply, move, log, bounds):
        return None
    transaction.on_commit(lambda: _hold(moved, pos, race))
    return MoveOutcome(moved, pos, event=game_announce(moved, pos, race=race))


def game_announce(
    game: Game, position: Position | None = None, *, race: RaceClock | None = None
) -> GameMoved:
    """Emit the one event of a game's change (inside its transaction; sent after commit),
    ``GameMoved``, and return it: its message carries the public state the caller's
    answer shows too."""
    event = GameMoved(game=game, position=position, race=race)
    events.game_moved(event)
    return event


def game_apply_move(
    *,
    game_id: int,
    user: User,
    move: str,
    ply: int,
    transport: str = "rest",
) -> MoveOutcome:
    """Apply a move (or ``undo``) sent by a client that has seen ``ply`` log entries.

    Resending the entry already stored at that ply is answered without applying
    anything (safe retries, also of the move that ended the game). Otherwise a
    finished game is ``game_finished`` whatever the ply, a ply behind the game
    ``stale_ply`` and one ahead of it ``bad_ply``, both with the current ply.
    The entry that fills the log to ``GAME_MAX_LOG`` entries ends the game
    (``move_limit``; a ranked game then counts as not won). A ranked daily whose
    day has ended is ended as ``expired`` (committed) and the move refused.
    Every change emits one ``GameMoved`` after commit (``game_announce``). ``transport``
    names the door (``rest``, ``ws``) in the move metrics, counted and timed here, once
    for every door.
    """
    with metrics.move_observed(transport):
        held = _read(game_id, user, ply)
        if held is not None and (outcome := _apply_guarded(held, move, ply)) is not None:
            return outcome
        with transaction.atomic():
            # Locked: the rules below need the game unchanged until commit: the game's end
            # (its result, a race's finish), the undo floor (the position below is read from
            # the log), a day's expiry, a race's window on a first move; and each refusal
            # answers the game as it is.
            game = _locked_game(game_id, user)
            if not _expired_now(game):
                return _apply(game, move, ply)
        raise _day_over()


def _apply(game: Game, move: str, ply: int) -> MoveOutcome:
    log = game_current_log(game)
    if log.is_retry(ply, move, lambda entry: _notation_at(game, entry)):
        return MoveOutcome(game, log.position, duplicate=True)
    if game.status != Status.PLAYING:
        raise GameFinished(f"the game is {game.status}")
    if ply != log.entries:
        error = StalePly if ply < log.entries else BadPly
        raise error(
            f"you sent ply {ply} but the game is at ply {log.entries}",
            details={"ply": log.entries},
        )
    race = race_game_check(game)  # first: no answer tells of an unstarted deal
    log = _next_log(game, log, move)
    pos = log.position
    game.position = pos.to_json()
    _log_entry(game, game.ply, move, log)
    game.ply = log.entries
    game.undo_floor = log.undo_floor
    game.score = pos.score
    game.status = pos.status.value
    if game.status == Status.PLAYING and game.ply >= settings.GAME_MAX_LOG:
        game.status = MOVE_LIMIT
    if game.status != Status.PLAYING:
        game.finished_at = clock.now()
    game.save(update_fields=["ply", "undo_floor", "position", "score", "status", "finished_at"])
    transaction.on_commit(lambda: _hold(game, pos, race))
    return MoveOutcome(game, pos, event=game_announce(game, pos, race=race))


def game_resign(*, game_id: int, user: User) -> Game:
    """End a game by resignation (a ranked daily whose day is over ends as ``expired``)."""
    with transaction.atomic():
        game = _locked_game(game_id, user)
        if not _expired_now(game):
            if game.status != Status.PLAYING:
                raise GameFinished(f"the game is {game.status}")
            race = race_game_check(game)
            game.status = Status.RESIGNED.value
            game.finished_at = clock.now()
            game.save(update_fields=["status", "finished_at"])
            game_announce(game, race=race)
            return game
    raise _day_over()


# -- ranked dailies left unfinished -------------------------------------------------------


def _day_over() -> DayOver:
    return DayOver(
        "the day of this ranked daily is over: the game ended with it, as not won with the "
        "cards it had home"
    )


def _day_over_unfinished(game: Game) -> bool:
    return (
        game.ranked
        and game.status == Status.PLAYING
        and game.deal.date is not None
        and game.deal.date < clock.today()
    )


def _expired_now(game: Game) -> bool:
    """End a locked ranked game whose day is over as ``expired``; True if it was ended now.

    It ends at the day's end, not won, with the cards it had home: it enters the
    board and the player's record like any other result, so abandoning a bad deal
    cannot protect a win rate or a streak.
    """
    if not _day_over_unfinished(game):
        return False
    assert game.deal.date is not None  # _day_over_unfinished saw the day
    game.status = EXPIRED
    game.finished_at = clock.day_end(game.deal.date)
    game.save(update_fields=["status", "finished_at"])
    game_announce(game)
    return True


def game_open(*, game_id: int, user: User) -> Game:
    """One of the player's games, to show: a ranked daily left unfinished when its day ended
    is ended first (``expired``), so the player sees how it counted."""
    game = game_for_player(game_id=game_id, user=user)
    if _day_over_unfinished(game):
        with transaction.atomic():
            _expired_now(_locked_game(game_id, user))
        game = game_for_player(game_id=game_id, user=user)
    return game


def games_expire() -> int:
    """End every ranked daily left unfinished when its day ended; returns how many.

    Run by ``create_dailies`` (hourly in the compose file); a game is also ended
    when its player next opens or plays it (``game_open``, ``game_apply_move``).
    """
    stale = list(
        Game.objects.filter(
            ranked=True, status=Status.PLAYING, deal__date__lt=clock.today()
        ).values_list("pk", "player_id")
    )
    ended = 0
    for game_id, player_id in stale:
        with transaction.atomic():
            game = (
                Game.objects.select_for_update(of=("self",))
                .select_related("deal")
                .get(pk=game_id, player_id=player_id)
            )
            ended += _expired_now(game)
    return ended
