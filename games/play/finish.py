"""The end of a game, and the one place a change of a game is written and announced.

A game ends by a move (won, lost, the move limit: ``games.play.move``), by its player
(``resign``) or by the clock (a ranked daily's day, ``day_expire``; a race's time limit,
``race_games_expire``). Each end is the one guarded write of every change
(``games.play.store``), and in the same transaction its result is recorded by an
explicit call (``games.services.results.result_record``, as lila's ``Finisher``); a
race, another aggregate, follows the change's ``GameMoved`` (``games.events``).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction

from core import clock
from core.errors import DayOver, GameFinished
from games import events
from games.engine import Position, Status
from games.event_types import GameMoved
from games.models import EXPIRED, Game, Race
from games.play import store
from games.play.state import GameState, game_state, progress
from games.selectors.games import game_position
from games.selectors.races import RaceClock, race_game_check
from games.services.results import result_record


@dataclass(frozen=True)
class Changed:
    """A game as a change left it, and the state its player sees."""

    game: Game
    state: GameState


def changed(
    guard: store.Guard,
    change: store.Change,
    entry: store.Entry | None = None,
    *,
    game: Game,
    position: Position,
    race: RaceClock | None,
    origin: str | None = None,
) -> Changed | None:
    """Write ``change`` of ``game`` under ``guard`` (with a move's log ``entry``); when it
    ends the game, record its result in the same transaction. Then emit its one event
    (sent after commit) and hold the game for the next move. None when the guard missed."""
    ends = change.status != Status.PLAYING
    # A move that does not end the game is one statement: no transaction around it.
    with transaction.atomic() if ends else nullcontext():
        after = store.write(guard, game, change, entry)
        if after is None:
            return None
        if ends:
            result_record(after)
        state = game_state(after, position)
        events.game_moved(
            GameMoved(
                state=state,
                race_id=None if race is None else race.race_id,
                race=None if race is None else race.code,
                progress=None if race is None else progress(race.player, after),
                origin=origin,
            )
        )
    store.hold_on_commit(after, position, race)
    return Changed(after, state)


def end(game: Game, status: str, at: datetime, race: RaceClock | None = None) -> Changed | None:
    """End ``game`` as read (``status``, finished ``at``) with the guarded write; None when
    the guard missed (it changed meanwhile: read it again)."""
    guard = store.Guard(game.pk, game.player_id, game.ply, game.assisted)
    change = store.Change(game.ply, game.undo_floor, game.score, status, at)
    return changed(guard, change, game=game, position=game_position(game), race=race)


def resign(*, game_id: int, user: User) -> Changed:
    """End a game by resignation (a ranked daily whose day is over ends as ``expired``)."""
    while True:
        game = store.read(game_id, user).game
        if game.status != Status.PLAYING:
            raise GameFinished(f"the game is {game.status}")
        if day_over_unfinished(game):
            day_expire(game)
            raise day_over()
        race = race_game_check(game)
        done = end(game, Status.RESIGNED.value, clock.now(), race)
        if done is not None:
            return done


# -- ranked dailies left unfinished -----------------------------------------------------------


def day_over() -> DayOver:
    """The refusal of a move in a ranked daily whose day has ended."""
    return DayOver(
        "the day of this ranked daily is over: the game ended with it, as not won with the "
        "cards it had home"
    )


def day_over_unfinished(game: Game) -> bool:
    """A ranked daily still playing after its day ended on the shared clock."""
    return (
        game.ranked
        and game.status == Status.PLAYING
        and game.deal.date is not None
        and game.deal.date < clock.today()
    )


def day_expire(game: Game) -> bool:
    """End a ranked daily left unfinished when its day ended, as ``expired`` at the day's
    end, not won, with the cards it had home: it enters the board and the player's record
    like any other result, so abandoning a bad deal protects no win rate or streak. True
    if it was ended now (False: it had changed meanwhile, and whoever changed it decided)."""
    assert game.deal.date is not None, "a ranked daily has its day"
    return end(game, EXPIRED, clock.day_end(game.deal.date)) is not None


def dailies_expire() -> int:
    """End every ranked daily left unfinished when its day ended; returns how many.

    Run by ``create_dailies`` (hourly in the compose file); a game is also ended when its
    player next plays it (``apply_move``, ``resign``).
    """
    stale = Game.objects.filter(ranked=True, status=Status.PLAYING, deal__date__lt=clock.today())
    return sum(day_expire(game) for game in stale.select_related("deal"))


# -- a race's time limit ----------------------------------------------------------------------


def race_games_expire(race: Race) -> int:
    """End the games of ``race`` still playing at its time limit (expired, with the cards
    home); returns how many. A game that changed meanwhile is read again."""
    assert race.starts_at is not None and race.ends_at is not None, "a started race"
    ended = 0
    playing = Game.objects.filter(race_entry__race=race, status=Status.PLAYING)
    for game in playing.select_related("deal", "player"):
        while game.status == Status.PLAYING:
            at = RaceClock(race.pk, race.code, race.starts_at, race.ends_at, game.player)
            if end(game, EXPIRED, race.ends_at, at) is not None:
                ended += 1
                break
            game = Game.objects.select_related("deal", "player").get(pk=game.pk)
    return ended
