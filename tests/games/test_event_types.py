"""games.event_types: the events are values; each becomes one JSON message, rendered
once, that crosses the channel layer as it is (its frames: tests/api/test_events.py)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import orjson
import pytest

from games.event_types import EVENT_TYPES, GameMoved, RaceRematch

pytestmark = pytest.mark.django_db


def test_every_event_type_has_an_example(event_examples: list[Any]) -> None:
    assert {type(e) for e in event_examples} == set(EVENT_TYPES)


def test_the_move_command_emits_the_game_as_stored(event_examples: list[Any]) -> None:
    moved, resigned = event_examples[:2]
    assert isinstance(moved, GameMoved) and isinstance(resigned, GameMoved)
    assert (moved.game.ply, moved.game.status, moved.race) == (1, "playing", None)
    assert moved.position is not None and moved.position.to_json() == moved.game.position
    assert (resigned.game.ply, resigned.game.status) == (1, "resigned")


@pytest.mark.parametrize("index", range(len(EVENT_TYPES) + 1))
def test_every_event_crosses_the_channel_layer_unchanged(
    event_examples: list[Any], index: int
) -> None:
    event = event_examples[index]
    message = event.message
    assert next(iter(message)) == "type" and message["type"] == type(event).TYPE
    # JSON data (the Redis layer's msgpack carries no other), with a request id added.
    carried = orjson.loads(orjson.dumps({**message, "request_id": "r-1"}))
    assert carried == {**message, "request_id": "r-1"}


def test_a_message_is_rendered_once(event_examples: list[Any]) -> None:
    moved = event_examples[0]
    assert moved.message is moved.message
    assert moved.message["state"]["ply"] == 1


def test_an_event_with_no_wire_form_goes_as_its_fields() -> None:
    event = RaceRematch(code="k2m9x0qa7b", rematch="p3n8w1rb6c")
    assert event.message == {
        "type": "race.rematch",
        **{f.name: getattr(event, f.name) for f in fields(event)},
    }
