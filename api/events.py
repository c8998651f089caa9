"""The socket frames of the events: the domain's events (``games.event_types``) build
their own messages; the sockets (``api.consumers``) turn the messages they receive into
the frames ``api/asyncapi.yaml`` documents with the functions below
(``tests/api/test_events.py`` checks every frame against it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accounts.events import AuthRevoked
from api import shapes
from games import event_types
from games.event_types import BoardResult, GameMoved

#: A frame of a socket: (the AsyncAPI channel it is sent on, the JSON frame).
Frame = tuple[str, dict[str, Any]]


def state_frame(cause: str, ply: int, state: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A game socket's ``state`` frame: a game's state at ``ply`` and why it is sent (a
    request's type, ``connect``, or ``changed`` when pushed); a move's answer adds
    ``duplicate``."""
    return {"type": "state", "cause": cause, "ply": ply, "state": state, **extra}


def game_frame(message: dict[str, Any]) -> dict[str, Any]:
    """A game socket's frame of a ``game.moved``: the state pushed, cause ``changed``."""
    return state_frame("changed", message["ply"], message["state"])


def progress_frame(message: dict[str, Any]) -> dict[str, Any] | None:
    """A race socket's frame of a ``game.moved``: for a race's game only."""
    progress = message["progress"]
    return None if progress is None else {"type": "race.progress", "player": progress}


def race_frame(message: dict[str, Any], you: dict[str, Any] | None) -> dict[str, Any]:
    """A race socket's frame of a ``race.changed``: the race as its listener sees it
    (``you``: the listener's own game, if in the race)."""
    race = {**message["race"], "you": you}
    return {"type": "race.finished" if race["status"] == "finished" else "race.state", "race": race}


def rematch_frame(message: dict[str, Any]) -> dict[str, Any]:
    """A race socket's frame of a ``race.rematch``."""
    return {"type": "race.rematch", "code": message["rematch"]}


def board_frame(message: dict[str, Any]) -> dict[str, Any]:
    """A board socket's frame of a ``board.result`` (without the servers' keys, such as
    the request id that caused it)."""
    return {
        "type": "board.result",
        "variant": message["variant"],
        "date": message["date"],
        "result": shapes.board_line(message["line"]),
    }


def analysis_frame(message: dict[str, Any]) -> dict[str, Any]:
    """A game socket's frame of an ``analysis.ready``: the game's analysis is done."""
    return {"type": "analysis.ready", "game_id": message["game_id"]}


def _game_moved_frames(message: dict[str, Any]) -> list[Frame]:
    progress = progress_frame(message)
    return [("game", game_frame(message)), *([("race", progress)] if progress else [])]


#: Every message type's frames, by the channel that sends them (none: a socket acts on it).
FRAMES: dict[str, Callable[[Any], list[Frame]]] = {
    GameMoved.TYPE: _game_moved_frames,
    event_types.RaceChanged.TYPE: lambda message: [("race", race_frame(message, None))],
    event_types.RaceRematch.TYPE: lambda message: [("race", rematch_frame(message))],
    BoardResult.TYPE: lambda message: [("dailyBoard", board_frame(message))],
    AuthRevoked.TYPE: lambda message: [],
    event_types.AnalysisReady.TYPE: lambda message: [("game", analysis_frame(message))],
}
