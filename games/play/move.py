"""A move, from the client's request to the committed change: one transaction script.

``apply_move`` does four things, in order:

1. **read** the game: from this process's memory when it holds the game at the ply the
   client sent (a read-through cache: it served the game's last move, started it or
   read it), else one row, not locked (``store``);
2. let the **engine judge** the move or the undo on that position;
3. **write** it with the one guarded statement of every change (``store.write``): the
   move, its log entry and, when the move ends the game, the end, whose result
   ``finish`` records in the same transaction by an explicit call;
4. when the guard misses or a rule refuses, **one unlocked read names the answer**:
   the move again on the fresh game, ``game_finished``, ``stale_ply``, ``bad_ply``,
   ``day_over`` (the day's end is stored first), ``race_not_started`` or ``race_over``.

No row lock: the guard is the whole of the concurrency control. After commit the change
goes out as one ``GameMoved`` carrying the state the answer shows too (``state``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User

from core import clock, metrics
from core.errors import BadPly, GameFinished, StalePly, UndoNotAllowed
from games.engine import UNDO, EngineError, GameLog, Position, Status, UndoNotAllowedError
from games.engine.record import position_bytes
from games.models import MOVE_LIMIT, Deal, Game
from games.play import finish, store
from games.play.state import GameState, game_state
from games.selectors.games import deal_start, game_current_log, game_log
from games.selectors.races import RaceClock, race_game_check

#: Reads of one request: a guard that misses (the game changed between the read and the
#: write) is answered from the fresh game, which the next write then guards.
ATTEMPTS = 3


@dataclass(frozen=True)
class MoveResult:
    """A game after a move request: as stored, its position and the state its player
    sees. ``duplicate`` marks a safe retry that applied nothing."""

    game: Game
    position: Position
    state: GameState
    duplicate: bool = False


def apply_move(
    *,
    game_id: int,
    user: User,
    move: str,
    ply: int,
    transport: str = "rest",
    origin: str | None = None,
) -> MoveResult:
    """Apply a move (or ``undo``) sent by a client that has seen ``ply`` log entries.

    Resending the entry already stored at that ply is answered without applying anything
    (safe retries, also of the move that ended the game). Otherwise a finished game is
    ``game_finished`` whatever the ply, a ply behind the game ``stale_ply`` and one ahead
    of it ``bad_ply``, both with the current ply. The entry that fills the log to
    ``GAME_MAX_LOG`` entries ends the game (``move_limit``). A ranked daily whose day has
    ended is ended as ``expired`` and the move refused (``day_over``). ``transport``
    names the door (``rest``, ``ws``) in the move metrics, counted and timed here.
    ``origin``: the channel of the socket that sent it, which its event skips.
    """
    with metrics.move_observed(transport):
        held = store.held_at(game_id, ply, user) or store.read(game_id, user)
        for _ in range(ATTEMPTS):
            result = _try(held, move, ply, origin)
            if result is not None:
                return result
            held = store.read(game_id, user)
            _window(held)
        game = held.game
        raise StalePly(
            f"you sent ply {ply} but the game is at ply {game.ply}", details={"ply": game.ply}
        )


def _try(held: store.Held, move: str, ply: int, origin: str | None) -> MoveResult | None:
    """The move on the game as ``held``; None when it must be read again (the guard
    missed, the clock refused, or the engine refused a game from memory)."""
    game = held.game
    log = game_current_log(game, held.position)
    if log.is_retry(ply, move, lambda entry: _notation_at(game, entry)):
        return MoveResult(game, log.position, game_state(game, log.position), duplicate=True)
    if game.status != Status.PLAYING:
        raise GameFinished(f"the game is {game.status}")
    if ply != log.entries:
        error = StalePly if ply < log.entries else BadPly
        raise error(
            f"you sent ply {ply} but the game is at ply {log.entries}",
            details={"ply": log.entries},
        )
    race = held.race
    if race is None and game.deal.kind == Deal.Kind.RACE:
        race = race_game_check(game)  # first: no answer tells of an unstarted deal
    guard = store.guard_of(game, race)
    if guard is None:
        return None
    try:
        after = _judged(game, log, move)
    except EngineError:
        if held.cached:  # memory may be behind another process: judge the stored game
            return None
        raise
    return _written(game, after, move, guard, race, origin)


def _judged(game: Game, log: GameLog, move: str) -> GameLog:
    """The log after ``move`` (a move or ``undo``); raises when the rules refuse it."""
    if move != UNDO:
        return log.play(move)
    try:
        return log.undo(ranked=game.ranked, position_at=lambda depth: _position_at(game, depth))
    except UndoNotAllowedError as exc:
        raise UndoNotAllowed(str(exc)) from None


def _written(
    game: Game,
    log: GameLog,
    move: str,
    guard: store.Guard,
    race: RaceClock | None,
    origin: str | None,
) -> MoveResult | None:
    """Write the judged move with its log entry, and its end if it ends the game; emit its
    event. None when the guard missed."""
    pos = log.position
    status = pos.status.value
    if status == Status.PLAYING and log.entries >= settings.GAME_MAX_LOG:
        status = MOVE_LIMIT
    change = store.Change(
        ply=log.entries,
        undo_floor=log.undo_floor,
        score=pos.score,
        status=status,
        finished_at=None if status == Status.PLAYING else clock.now(),
        position=position_bytes(pos),
    )
    entry = store.Entry(move, clock.now())
    after = finish.changed(guard, change, entry, game=game, position=pos, race=race, origin=origin)
    if after is None:
        return None
    return MoveResult(after.game, pos, after.state)


def _position_at(game: Game, depth: int) -> Position:
    """The position the log last left with ``depth`` moves on the board (or the deal's
    start): rebuilt from the deal and the log (bench/storage.py times it). Entries below
    the guarded ply never change, so no lock is needed."""
    return GameLog.replay_board(deal_start(game.deal), game_log(game))[depth]


def _notation_at(game: Game, ply: int) -> str | None:
    """The notation of the log entry at ``ply``, if there is one."""
    log = game_log(game)
    return log[ply] if ply < len(log) else None


def _window(held: store.Held) -> None:
    """After a guard missed, on the game just read: refuse a move outside the shared
    clock's bounds, naming why (a ranked daily's day over, which ends the game first; a
    race not started or over)."""
    game = held.game
    if game.status != Status.PLAYING:
        return
    if finish.day_over_unfinished(game):
        finish.day_expire(game)
        raise finish.day_over()
    if game.deal.kind == Deal.Kind.RACE:
        race_game_check(game)
