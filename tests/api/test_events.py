"""api.events: every event's wire form and socket frames are what api/asyncapi.yaml
documents, and a game's event carries what its sockets show."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from api import events, shapes
from games.models import Game
from games.play import state
from tests.schemas import socket_frames

pytestmark = pytest.mark.django_db


def test_every_frame_of_every_event_is_a_documented_socket_message(
    event_examples: list[Any],
) -> None:
    frames = socket_frames()
    checked = set()
    for event in event_examples:
        for channel, frame in events.FRAMES[event.TYPE](event.message):
            messages = frames.sent_by_server(channel)
            assert frame["type"] in messages, f"{channel} sends no {frame['type']}"
            text = orjson.dumps(frame)  # as a socket sends it
            errors = list(frames.validator(messages[frame["type"]]).iter_errors(orjson.loads(text)))
            assert not errors, f"{type(event).__name__} on {channel}: {errors[0].message}"
            checked.add((channel, frame["type"]))
    assert checked == {
        ("game", "state"),
        ("race", "race.progress"),
        ("race", "race.state"),
        ("race", "race.rematch"),
        ("dailyBoard", "board.result"),
        ("game", "analysis.ready"),
    }


def test_a_game_event_carries_what_its_sockets_show(event_examples: list[Any]) -> None:
    moved, resigned = event_examples[:2]
    frame = events.game_frame(moved.message)
    assert (frame["cause"], frame["ply"]) == ("changed", 1)
    game = Game.objects.select_related("deal").get(pk=moved.state.id)
    assert game.status == "resigned"  # the resignation came after this move
    assert frame["state"]["ply"] == game.ply and frame["state"]["status"] == "playing"
    assert frame["state"] == moved.state.as_json()
    assert events.progress_frame(moved.message) is None  # not a race's game
    progress = events.progress_frame(resigned.message)
    assert progress == {
        "type": "race.progress",
        "player": state.progress(game.player, game).as_json(),
    }
    assert progress["player"]["status"] == "resigned"


def test_a_board_event_shows_the_lines_public_shape(event_examples: list[Any]) -> None:
    board = event_examples[4]
    frame = events.board_frame({**board.message, "request_id": "r-1"})
    assert frame == {
        "type": "board.result",
        "variant": "bristol",
        "date": "2026-12-01",
        "result": shapes.board_line(board.line),
    }
    assert frame["result"] == {
        "rank": 1,
        "result_id": 7,
        "player": "ann",
        "won": False,
        "cards_home": 3,
        "moves": 12,
        "time_ms": 4_000,
        "finished_at": "2026-12-01T06:37:00Z",
    }
