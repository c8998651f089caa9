"""games.event_types: the events are values; each builds its own JSON message, which
crosses the channel layer as it is (its frames: tests/api/test_events.py)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import orjson
import pytest
from django.db import transaction

from accounts.events import AuthRevoked
from games import events
from games.event_types import EVENT_TYPES, GameMoved, RaceRematch
from games.play import move as play_move
from games.selectors.games import game_position
from games.services import games as game_services

pytestmark = pytest.mark.django_db


def test_every_event_type_has_an_example(event_examples: list[Any]) -> None:
    assert {type(e) for e in event_examples} == {*EVENT_TYPES, AuthRevoked}


def test_the_move_command_emits_the_game_as_stored(event_examples: list[Any]) -> None:
    moved, resigned = event_examples[:2]
    assert isinstance(moved, GameMoved) and isinstance(resigned, GameMoved)
    assert (moved.state.ply, moved.state.status, moved.race) == (1, "playing", None)
    assert moved.state.moves_on_board == 1 and moved.state.legal_moves
    assert (resigned.state.ply, resigned.state.status) == (1, "resigned")
    assert resigned.state.legal_moves == () and resigned.state.deal is not None


@pytest.mark.parametrize("index", range(len(EVENT_TYPES) + 2))
def test_every_event_crosses_the_channel_layer_unchanged(
    event_examples: list[Any], index: int
) -> None:
    event = event_examples[index]
    message = event.message
    assert next(iter(message)) == "type" and message["type"] == type(event).TYPE
    # JSON data (the Redis layer's msgpack carries no other), with a request id added.
    carried = orjson.loads(orjson.dumps({**message, "request_id": "r-1"}))
    assert carried == {**message, "request_id": "r-1"}


def test_a_game_event_carries_its_state_as_json(event_examples: list[Any]) -> None:
    moved = event_examples[0]
    assert moved.message["state"] == moved.state.as_json()
    assert moved.message["state"]["ply"] == 1


def test_followers_get_a_game_event_at_once_inside_its_transaction(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events, "_followers", [])
    got: list[tuple[int, bool]] = []
    events.game_moved_follow(
        lambda e: got.append((e.state.ply, transaction.get_connection().in_atomic_block))
    )
    game = game_services.practice_game_start(user=user, variant="bristol", seed=1)
    move = str(game_position(game).legal_moves[0])
    with pytest.raises(RuntimeError), transaction.atomic():
        play_move.apply_move(game_id=game.pk, user=user, move=move, ply=0)
        raise RuntimeError("rolled back")
    assert got == [(1, True)]  # its work rolls back with the move


def test_an_event_of_plain_values_goes_as_its_fields() -> None:
    event = RaceRematch(code="k2m9x0qa7b", rematch="p3n8w1rb6c")
    assert event.message == {
        "type": "race.rematch",
        **{f.name: getattr(event, f.name) for f in fields(event)},
    }
