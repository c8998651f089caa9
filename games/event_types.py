"""The games' events as typed values, each building its own message (as zulip's
``event_types.py``): an event's fields are its schema, and ``body`` is what goes on the
wire. They carry values the domain built (a game's ``GameState``, a racer's
``Progress``), so a socket forwards them without reading the database, and the doors
(``api.events``) only turn them into the frames ``api/asyncapi.yaml`` documents.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from core import clock
from core.events import ORIGIN, Event

if TYPE_CHECKING:
    from games.play.state import GameState, Progress
    from games.selectors.race_state import RaceState


@dataclass(frozen=True)
class GameMoved(Event):
    """A game moved on (a move, an undo, a resignation, an end by the clock): its state at
    its ply and, for a race's game, the race's code and the player's progress (counts
    only). One event per change, sent to the race's group for a race's game (its game
    sockets join it) and the game's group otherwise. ``origin``: the channel of the socket
    that made the change (None: REST, a clock), which gets its answer and not this."""

    TYPE: ClassVar[str] = "game.moved"

    state: GameState
    race_id: int | None = None
    race: str | None = None
    progress: Progress | None = None
    origin: str | None = None

    def body(self) -> dict[str, Any]:
        state = self.state
        return {
            "game_id": state.id,
            "ply": state.ply,
            "status": state.status,
            "state": state.as_json(),
            "race": self.race,
            "progress": None if self.progress is None else self.progress.as_json(),
            ORIGIN: self.origin,
        }


@dataclass(frozen=True)
class RaceChanged(Event):
    """A race's roster or status changed: the race as everyone sees it, so its sockets
    forward it without a read (each adds its listener's ``you`` from ``games``, which no
    frame shows), and its start and time limit (ISO 8601, or None), for the sockets to
    wake at without any job (``api.consumers``)."""

    TYPE: ClassVar[str] = "race.changed"

    state: RaceState

    def body(self) -> dict[str, Any]:
        state = self.state
        return {
            "code": state.code,
            "starts_at": clock.iso(state.starts_at),
            "ends_at": clock.iso(state.ends_at),
            "race": state.as_json(),
            "games": [list(pair) for pair in state.games],
        }


@dataclass(frozen=True)
class RaceRematch(Event):
    """The players of race ``code`` are offered the race ``rematch``."""

    TYPE: ClassVar[str] = "race.rematch"

    code: str
    rematch: str


@dataclass(frozen=True)
class BoardResult(Event):
    """A result entered a day's board: its line (``games.selectors.boards.result_line``)
    with its rank at send time, its moment as ISO 8601 text."""

    TYPE: ClassVar[str] = "board.result"

    variant: str
    day: date
    line: dict[str, Any]

    def body(self) -> dict[str, Any]:
        line = {
            key: clock.iso(value) if isinstance(value, datetime) else value
            for key, value in self.line.items()
        }
        return {"variant": self.variant, "date": self.day.isoformat(), "line": line}


@dataclass(frozen=True)
class AnalysisReady(Event):
    """A finished game's analysis is done (``games.services.analysis``): its sockets read it
    (``GET .../analysis/``)."""

    TYPE: ClassVar[str] = "analysis.ready"

    game_id: int


#: Every event type of the games, for the schema test.
EVENT_TYPES: tuple[type[Event], ...] = (
    GameMoved,
    RaceChanged,
    RaceRematch,
    BoardResult,
    AnalysisReady,
)
