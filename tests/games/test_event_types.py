"""games.event_types: every event type's socket frames are messages the AsyncAPI document
(api/asyncapi.yaml) declares, and every event survives the channel layer as it is."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any

import orjson
import pytest

from games import events, shapes
from games.event_types import (
    EVENT_TYPES,
    AuthRevoked,
    BoardResult,
    Event,
    GameMoved,
    RaceChanged,
    RaceRematch,
)
from games.services import games as game_services
from tests.schemas import socket_frames

pytestmark = pytest.mark.django_db


@pytest.fixture
def emitted(monkeypatch: pytest.MonkeyPatch) -> list[Event]:
    """Every event emitted from now on (nothing sent)."""
    seen: list[Event] = []
    monkeypatch.setattr(events, "_send", lambda group, message: None)
    real = events.emit

    def spy(event: Event, group: str) -> None:
        seen.append(event)
        real(event, group)

    monkeypatch.setattr(events, "emit", spy)
    return seen


@pytest.fixture
def examples(user: Any, emitted: list[Event]) -> list[Event]:
    """One event of each type; the game's from a real move, as the command emits it."""
    game = game_services.practice_game_start(user=user, variant="bristol", seed=1)
    move = shapes.game_state(game)["legal_moves"][0]
    game_services.game_apply_move(game_id=game.pk, user=user, move=move, ply=0)
    game_services.game_resign(game_id=game.pk, user=user)
    moved, resigned = emitted
    assert isinstance(moved, GameMoved) and isinstance(resigned, GameMoved)
    game.refresh_from_db()
    line = {
        "rank": 1,
        "result_id": 7,
        "player_name": "ann",
        "won": False,
        "cards_home": 3,
        "moves": 12,
        "time_ms": 4_000,
        "finished_at": datetime(2026, 12, 1, 6, 37, tzinfo=UTC),
    }
    return [
        moved,
        # As a race's game's: with its player's progress (counts only).
        replace(resigned, race="k2m9x0qa7b", progress=shapes.progress(user, game)),
        RaceChanged(code="k2m9x0qa7b", starts_at="2026-12-01T06:00:00+00:00", ends_at=None),
        RaceRematch(code="k2m9x0qa7b", rematch="p3n8w1rb6c"),
        BoardResult(
            variant="bristol", date=date(2026, 12, 1).isoformat(), result=shapes.board_line(line)
        ),
        AuthRevoked(reason="token revoked"),
    ]


def test_every_event_type_has_an_example(examples: list[Event]) -> None:
    assert {type(e) for e in examples} == set(EVENT_TYPES)


def test_every_frame_of_every_event_is_a_documented_socket_message(
    examples: list[Event],
) -> None:
    frames = socket_frames()
    checked = set()
    for event in examples:
        for channel, frame in event.socket_frames():
            messages = frames.sent_by_server(channel)
            assert frame["type"] in messages, f"{channel} sends no {frame['type']}"
            text = orjson.dumps(frame)  # as a socket sends it
            errors = list(frames.validator(messages[frame["type"]]).iter_errors(orjson.loads(text)))
            assert not errors, f"{type(event).__name__} on {channel}: {errors[0].message}"
            checked.add((channel, frame["type"]))
    assert checked == {
        ("game", "state"),
        ("race", "race.progress"),
        ("race", "race.rematch"),
        ("dailyBoard", "board.result"),
    }


def test_a_game_event_carries_what_its_sockets_show(examples: list[Event]) -> None:
    moved = examples[0]
    assert isinstance(moved, GameMoved)
    frame = moved.game_frame()
    assert (frame["cause"], frame["ply"], frame["state"]["ply"]) == ("changed", 1, 1)
    assert moved.race_frame() is None  # not a race's game: nothing for a race socket


@pytest.mark.parametrize("index", range(len(EVENT_TYPES) + 1))
def test_every_event_crosses_the_channel_layer_unchanged(examples: list[Event], index: int) -> None:
    event = examples[index]
    message = event.message()
    # JSON data (the Redis layer's msgpack carries no other), with a request id added.
    carried = orjson.loads(orjson.dumps({**message, "request_id": "r-1"}))
    assert carried["type"] == type(event).TYPE
    assert type(event).from_message(carried) == event
