"""The events of the service as typed values, each with the socket frames it becomes.

Modelled on zulip's ``event_types.py``: an event is a frozen value whose fields are its
schema; ``games.events.emit`` runs this process's subscribers on it (inside the
transaction that caused it) and sends it to its channel group after commit, where the
sockets (``api.consumers``) turn it into the frames ``socket_frames`` renders, the
messages ``api/asyncapi.yaml`` documents (``tests/games/test_event_types.py`` checks
every event type's frames against that document). An event carries what its sockets
show, so no socket reads the database again to show it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self

#: A frame of a socket: (the AsyncAPI channel it is sent on, the JSON frame).
Frame = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Event:
    """An event: ``TYPE`` names its consumer handler (``game.moved`` -> ``game_moved``)."""

    TYPE: ClassVar[str]

    def message(self) -> dict[str, Any]:
        """The channel-layer message: JSON data (msgpack on Redis) with ``type`` first; the
        fields as they are (``asdict`` would deep-copy a game's state, a tenth of a move)."""
        return {"type": self.TYPE, **{f.name: getattr(self, f.name) for f in fields(self)}}

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> Self:
        """The event a channel-layer message carries (extra keys, as ``request_id``, left)."""
        return cls(**{f.name: message[f.name] for f in fields(cls)})

    def socket_frames(self) -> list[Frame]:
        """The frames the sockets that receive it send to their clients."""
        return []


@dataclass(frozen=True)
class GameMoved(Event):
    """A game moved on (a move, an undo, a resignation, an end by the clock): its public
    state at ``ply`` (the REST game state) and, for a race's game, its player's progress
    (counts only, for the race's sockets). One event per change, sent to the race's group
    for a race's game (its game sockets join it) and the game's group otherwise."""

    TYPE: ClassVar[str] = "game.moved"

    game_id: int
    ply: int
    status: str
    state: dict[str, Any]
    race: str | None = None
    progress: dict[str, Any] | None = None

    def game_frame(self) -> dict[str, Any]:
        """The game socket's frame: the state pushed, cause ``changed``."""
        return {"type": "state", "cause": "changed", "ply": self.ply, "state": self.state}

    def race_frame(self) -> dict[str, Any] | None:
        """The race socket's frame, for a race's game."""
        return None if self.progress is None else {"type": "race.progress", "player": self.progress}

    def socket_frames(self) -> list[Frame]:
        race = self.race_frame()
        return [("game", self.game_frame()), *([("race", race)] if race is not None else [])]


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

    def frame(self) -> dict[str, Any]:
        """The race socket's frame."""
        return {"type": "race.rematch", "code": self.rematch}

    def socket_frames(self) -> list[Frame]:
        return [("race", self.frame())]


@dataclass(frozen=True)
class BoardResult(Event):
    """A result entered a day's board: its public line with its rank at send time."""

    TYPE: ClassVar[str] = "board.result"

    variant: str
    date: str
    result: dict[str, Any]

    def frame(self) -> dict[str, Any]:
        """The board socket's frame."""
        return {
            "type": "board.result",
            "variant": self.variant,
            "date": self.date,
            "result": self.result,
        }

    def socket_frames(self) -> list[Frame]:
        return [("dailyBoard", self.frame())]


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
)
