"""The games' channel groups, and the events a change of a game, a race or a board sends
to them (after commit: ``core.events``).

Consumers join ``game_group(id)`` for a game they show (and a race game's socket its
race's group, to which a race game's ``GameMoved`` goes, with the player's progress for
the race's sockets) and ``daily_group`` for a day's board.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from core import events as core_events
from games.event_types import AnalysisReady, BoardResult, GameMoved, RaceChanged, RaceRematch
from games.selectors.race_state import race_state
from games.selectors.races import race_by_code


def game_group(game_id: int) -> str:
    """Channel group of one game's listeners."""
    return f"game.{game_id}"


def daily_group(variant: str, day: date) -> str:
    """Channel group of one day's board listeners."""
    return f"daily.{variant}.{day.isoformat()}"


def race_group(code: str) -> str:
    """Channel group of one race's listeners (players and spectators)."""
    return f"race.{code}"


#: What follows a game's change in this process: a race, another aggregate, finishes when
#: its last game ends (``games.services.races.race_game_moved``, subscribed in
#: ``games.apps``), so the move path knows nothing of races' services. A game's own
#: result is no follower: ``games.play.finish`` records it by an explicit call.
_followers: list[Callable[[GameMoved], None]] = []


def game_moved_follow(handler: Callable[[GameMoved], None]) -> None:
    """Call ``handler`` with every ``GameMoved`` of this process, inside its transaction."""
    if handler not in _followers:
        _followers.append(handler)


def game_moved(event: GameMoved) -> None:
    """The one event of a game's change: its followers now (inside the change's
    transaction), and after commit its race's group for a race's game (its game sockets
    join it), else the game's group."""
    core_events.emit(
        event, race_group(event.race) if event.race is not None else game_group(event.state.id)
    )
    for follow in _followers:
        follow(event)


def result_entered(*, variant: str, day: date, line: dict[str, Any]) -> None:
    """Send a new board line (``games.selectors.boards.result_line``) to the day's board
    now (called after commit)."""
    core_events.send(
        daily_group(variant, day), BoardResult(variant=variant, day=day, line=line).message
    )


def race_changed(*, code: str) -> None:
    """After commit: a race's roster or status changed; the race as everyone sees it now
    (read inside the change's transaction), so its sockets need not read it again."""
    core_events.emit(RaceChanged(race_state(race_by_code(code))), race_group(code))


def race_rematch(*, code: str, rematch: str) -> None:
    """After commit: the players of race ``code`` are offered the race ``rematch``."""
    core_events.emit(RaceRematch(code=code, rematch=rematch), race_group(code))


def analysis_ready(*, game_id: int) -> None:
    """After commit: a finished game's analysis is done; its sockets say so."""
    core_events.emit(AnalysisReady(game_id=game_id), game_group(game_id))
