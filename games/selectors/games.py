"""Reads: a game's log and replay, a player's games (what a player sees of them is
``api.shapes``)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.contrib.auth.models import User
from django.db.models import QuerySet

from core import clock
from core.errors import NotFound
from games.engine import (
    EngineError,
    GameLog,
    Position,
    Status,
    new_position,
)
from games.engine.record import EPOCH, position_bytes, position_from_bytes, unpack
from games.models import EXPIRED, SERVER_ENDS, Deal, Game, Race
from games.standings import reach_of


def deal_start(deal: Deal) -> Position:
    """Starting position of a deal."""
    return new_position(deal.variant, seed=int(deal.seed))


@dataclass(frozen=True)
class LoggedMove:
    """One entry of a game's log: its index (the ply the client sent with it), its
    notation (a move or ``undo``) and when it was made."""

    ply: int
    notation: str
    created_at: datetime


def game_entries(game: Game) -> list[LoggedMove]:
    """A game's log entries in order, unpacked (``games.engine.record``)."""
    at, entries = EPOCH, []
    for ply, entry in enumerate(unpack(game.deal.variant, game.log)):
        at += timedelta(milliseconds=entry.ms)
        entries.append(LoggedMove(ply, entry.notation, at))
    return entries


def game_log(game: Game) -> list[str]:
    """The notations of a game's log in order."""
    return [entry.notation for entry in unpack(game.deal.variant, game.log)]


def game_replay(game: Game) -> GameLog:
    """Replay a game's stored log from its deal; raises EngineError on a bad entry."""
    return GameLog.replay(deal_start(game.deal), game_log(game))


def game_reach(game: Game) -> int:
    """Log entries after which the game's score last rose to its final value (0 with no
    card home beyond the deal's): a tie-break of the standings (``games.standings``).
    Replays the log."""
    if game.score == 0:
        return 0
    start = deal_start(game.deal)
    steps = GameLog.replay_steps(start, game_log(game))
    return reach_of([log.position.score for log in steps], start.score)


def game_position(game: Game) -> Position:
    """The current position from the stored snapshot."""
    return position_from_bytes(game.position)


def game_current_log(game: Game, position: Position | None = None) -> GameLog:
    """The game's log as its row records it (snapshot, entries, undo floor): no replay.

    ``position`` is the snapshot's position when the caller has read it already.
    """
    pos = position if position is not None else game_position(game)
    return GameLog(pos, entries=game.ply, undo_floor=game.undo_floor)


def game_position_after(game: Game, entries: int) -> Position:
    """The position after the first ``entries`` log entries, replayed from the deal."""
    return GameLog.replay(deal_start(game.deal), game_log(game)[:entries]).position


def game_verify(game: Game) -> str | None:
    """None if the snapshot and the counters equal the replay of the log, else why not."""
    try:
        log = GameLog.replay(deal_start(game.deal), game_log(game))
    except EngineError as exc:
        return f"log does not replay: {exc}"
    pos = log.position
    if position_bytes(pos) != bytes(game.position):
        return "snapshot differs from the replay of the log"
    if game.ply != log.entries:
        return f"ply {game.ply} but the log has {log.entries} entries"
    if game.undo_floor != log.undo_floor:
        return f"undo floor {game.undo_floor} but the replay gives {log.undo_floor}"
    if game.score != pos.score:
        return f"score {game.score} but the replay scores {pos.score}"
    if game.status not in SERVER_ENDS and game.status != pos.status.value:
        return f"status {game.status} but the replay is {pos.status.value}"
    return None


def game_for_player(*, game_id: int, user: User) -> Game:
    """A game of this player; another player's game is reported as not found."""
    try:
        return Game.objects.select_related("deal").get(pk=game_id, player=user)
    except Game.DoesNotExist:
        raise NotFound(f"no game {game_id} of yours") from None


def game_shown(*, game_id: int, user: User) -> Game:
    """A game of this player, to show: one still playing past its end on the shared clock
    (a ranked daily's day, a race's time limit) shows as ``expired`` then. Derived, not
    stored (a read never writes): the jobs, the sockets' timers or the player's next move
    store it."""
    game = game_for_player(game_id=game_id, user=user)
    if game.status != Status.PLAYING:
        return game
    end = game_end_due(game)
    if end is None or clock.shared_now() < end:
        return game
    shown = copy.copy(game)
    shown.status, shown.finished_at = EXPIRED, end
    return shown


def game_end_due(game: Game) -> datetime | None:
    """When the clock ends ``game`` if it is still playing then: a ranked daily's day's
    end, a race's time limit; None for a game no clock ends."""
    deal = game.deal
    if deal.kind == Deal.Kind.RACE:
        return Race.objects.filter(deal_id=deal.pk).values_list("ends_at", flat=True).first()
    if game.ranked and deal.date is not None:
        return clock.day_end(deal.date)
    return None


def ranked_days_of_player(*, user: User, variant: str, first: date, last: date) -> dict[date, Game]:
    """The player's ranked daily games of a variant from ``first`` to ``last``, by day
    (with their results, for a calendar)."""
    games = Game.objects.filter(
        player=user, ranked=True, deal__variant=variant, deal__date__range=(first, last)
    ).select_related("deal", "result")
    return {g.deal.date: g for g in games if g.deal.date is not None}


#: A player's games newest first, by id: the order they were started in. Not by
#: ``started_at``, which a race moves to the race's start (a cursor needs a fixed order).
GAMES_ORDER = ("-id",)


def games_of_player(*, user: User, status: str | None = None) -> QuerySet[Game]:
    """A player's games, newest first (``GAMES_ORDER``); only those of one status if given."""
    games = Game.objects.filter(player=user)
    if status is not None:
        games = games.filter(status=status)
    return games.select_related("deal").order_by(*GAMES_ORDER)


def elapsed_ms(game: Game) -> int:
    """Server-measured play time so far (or in total, once finished)."""
    end = game.finished_at or clock.now()
    return max(0, (end - game.started_at) // timedelta(milliseconds=1))


def hints_allowed(game: Game) -> bool:
    """Whether hints may be given in a game: they use the hidden stock, so never in a
    ranked game, nor in any game of a daily before its day is over (and revealed)."""
    if game.ranked:
        return False
    deal = game.deal
    return deal.kind != Deal.Kind.DAILY or (deal.date is not None and clock.day_over(deal.date))
