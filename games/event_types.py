"""The events of the service as typed values; the edge renders what goes on the wire.

Modelled on zulip's ``event_types.py``: an event is a frozen value whose fields are its
schema. ``games.events.emit`` runs this process's subscribers on it (inside the
transaction that caused it) and sends its ``message`` to its channel group after
commit. The domain renders no public shape: an event that carries one (a game's state,
a board line) holds the domain's values, and the edge that owns the shapes registers
how its type goes on the wire (``wire_form``, from ``api.apps``: ``api.events``), where
the sockets also turn messages into the frames ``api/asyncapi.yaml`` documents. An event
carries what its sockets show, so no socket reads the database again to show it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from games.engine import Position
    from games.models import Game
    from games.selectors.races import RaceClock

E = TypeVar("E", bound="Event")

#: How an event type's values become JSON data, by type; a type not here goes as its fields.
_wire_forms: dict[type[Event], Callable[[Any], dict[str, Any]]] = {}


def wire_form(kind: type[E], render: Callable[[E], dict[str, Any]]) -> None:
    """Render every event of ``kind`` with ``render`` (the message's keys but ``type``):
    registered once, at app start, by the edge that owns the public shapes."""
    _wire_forms[kind] = render


@dataclass(frozen=True)
class Event:
    """An event: ``TYPE`` names its consumer handler (``game.moved`` -> ``game_moved``)."""

    TYPE: ClassVar[str]

    @property
    def message(self) -> dict[str, Any]:
        """The channel-layer message: JSON data (msgpack on Redis) with ``type`` first.
        Rendered once (the move's answer shows the state its event carries) and kept in
        the value's ``__dict__`` beside its fields, as ``functools.cached_property`` would,
        without its lock (one for all instances on Python 3.11: a game's rendering, which
        may read the database, would wait for every other thread's); a type with no wire
        form goes as its fields (``asdict`` would deep-copy them)."""
        message = self.__dict__.get("_message")
        if message is None:
            render = _wire_forms.get(type(self))
            body = (
                {f.name: getattr(self, f.name) for f in fields(self)}
                if render is None
                else render(self)
            )
            message = self.__dict__["_message"] = {"type": self.TYPE, **body}
        return message


@dataclass(frozen=True)
class GameMoved(Event):
    """A game moved on (a move, an undo, a resignation, an end by the clock): the game as
    stored, its position when already read, and for a race's game its race (whose
    sockets show the player's progress). One event per change, sent to the race's group
    for a race's game (its game sockets join it) and the game's group otherwise. On the
    wire: its public state at its ply and, for a race's game, the progress (counts only)."""

    TYPE: ClassVar[str] = "game.moved"

    game: Game
    position: Position | None = None
    race: RaceClock | None = None


@dataclass(frozen=True)
class RaceChanged(Event):
    """A race's roster or status changed; its sockets read it again (the race frame names
    the listener, ``you``). ``starts_at`` and ``ends_at`` (ISO 8601, or None) let a socket
    wake at the start and at the time limit without any job (``api.consumers``)."""

    TYPE: ClassVar[str] = "race.changed"

    code: str
    starts_at: str | None = None
    ends_at: str | None = None


@dataclass(frozen=True)
class RaceRematch(Event):
    """The players of race ``code`` are offered the race ``rematch``."""

    TYPE: ClassVar[str] = "race.rematch"

    code: str
    rematch: str


@dataclass(frozen=True)
class BoardResult(Event):
    """A result entered a day's board: its line (``games.selectors.boards.result_line``)
    with its rank at send time; on the wire, the line's public shape."""

    TYPE: ClassVar[str] = "board.result"

    variant: str
    day: date
    line: dict[str, Any]


@dataclass(frozen=True)
class AnalysisReady(Event):
    """A finished game's analysis is done (``games.services.analysis``): its sockets read it
    (``GET .../analysis/``)."""

    TYPE: ClassVar[str] = "analysis.ready"

    game_id: int


@dataclass(frozen=True)
class AuthRevoked(Event):
    """The token or session a game socket opened with no longer admits: it closes (4401)."""

    TYPE: ClassVar[str] = "auth.revoked"

    reason: str


#: Every event type, for the schema test.
EVENT_TYPES: tuple[type[Event], ...] = (
    GameMoved,
    RaceChanged,
    RaceRematch,
    BoardResult,
    AuthRevoked,
    AnalysisReady,
)
