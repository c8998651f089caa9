"""A game's shapes: its state (``games.play.state.GameState``), a move's answer, a hint."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from api.shapes.fields import cards, instant, render
from games.engine import (
    Position,
)
from games.models import Deal, Game
from games.play import state

if TYPE_CHECKING:
    from games.play.move import MoveResult
    from games.selectors.hints import Hint, HintPending


GAME_STATUSES = ["playing", "won", "lost", "resigned", "expired", "move_limit"]


class DealRevealSerializer(serializers.Serializer):
    seed = serializers.CharField()
    deck = cards()


class PositionSerializer(serializers.Serializer):
    """A position as its player sees it: the stock is only counted."""

    piles = serializers.DictField(
        child=cards(),
        help_text="Every pile but the stock, by the spec's pile ids, cards bottom to top.",
    )
    stock = serializers.IntegerField(help_text="Cards left in the stock (never their faces).")


class GameStateSerializer(serializers.Serializer):
    """A game as its player sees it: documents ``games.play.state.GameState.as_json``,
    which every door sends as it is (``tests/api/test_api_shapes.py`` keeps them one)."""

    id = serializers.IntegerField()
    variant = serializers.CharField()
    kind = serializers.ChoiceField(choices=Deal.Kind.choices)
    date = serializers.DateField(allow_null=True)
    status = serializers.ChoiceField(choices=GAME_STATUSES)
    score = serializers.IntegerField(help_text="Cards home.")
    max_score = serializers.IntegerField()
    ply = serializers.IntegerField(help_text="Log entries so far (moves and undos).")
    moves_on_board = serializers.IntegerField(help_text="Moves not undone.")
    ranked = serializers.BooleanField()
    assisted = serializers.BooleanField()
    started_at = instant()
    finished_at = instant(allow_null=True)
    elapsed_ms = serializers.IntegerField(help_text="Measured on the server.")
    position = PositionSerializer(
        allow_null=True,
        help_text="Null for a race's game until the race starts: no card of the deal is "
        "shown before then (ask again at `starts_at`).",
    )
    legal_moves = cards(help_text="Empty before a race's start.")
    safe_moves = cards(
        help_text="The legal moves home that give nothing up (an Ace; in Bristol a card "
        "whose rank below is all home): a page may play them for its player."
    )
    finish = cards(
        help_text="When the game is won out (stock empty, only moves home left): the "
        "moves that win it, in order, else empty. Each is an ordinary move."
    )
    can_undo = serializers.BooleanField()
    deal = DealRevealSerializer(
        allow_null=True,
        help_text="Seed and deck order once the game has ended; for a daily's game, once its "
        "day is over as well (others are still playing it), so null until then.",
    )


class MoveResultSerializer(GameStateSerializer):
    """A game's state after a move or undo (``move_result``), and whether it was a retry."""

    duplicate = serializers.BooleanField(
        help_text="True when this exact move was already applied at that ply (a safe retry)."
    )


def game_state(game: Game, position: Position | None = None) -> dict[str, Any]:
    """The public state of a game as stored (``position``: its current one, when read)."""
    return state.game_state(game, position).as_json()


def game_states(games: Iterable[Game]) -> list[dict[str, Any]]:
    """The public states of several games (a page of a list)."""
    return [state.game_state(g).as_json() for g in games]


def move_result(result: MoveResult) -> dict[str, Any]:
    """A move's REST answer (``MoveResultSerializer``): its state and whether it was a
    safe retry."""
    return {**result.state.as_json(), "duplicate": result.duplicate}


class HintSerializer(serializers.Serializer):
    ply = serializers.IntegerField(help_text="The game's ply the hint is for.")
    verdict = serializers.ChoiceField(
        choices=["won", "lost", "unknown"],
        help_text="`won`: still winnable (see `move`); `lost`: no longer winnable; "
        "`unknown`: the solver's limit was reached.",
    )
    move = serializers.CharField(allow_null=True, help_text="Next move of a winning line.")
    nodes = serializers.IntegerField(help_text="Positions the solver generated.")


def hint(given: Hint) -> dict[str, Any]:
    """A hint, as ``POST .../hint/`` and the game socket answer it."""
    return render(HintSerializer, given)


class HintPendingSerializer(serializers.Serializer):
    ply = serializers.IntegerField(help_text="The game's ply the hint is for.")
    status = serializers.ChoiceField(choices=["solving"], help_text="The solver is at work.")
    retry_after = serializers.IntegerField(
        help_text="Seconds to wait before asking where `Location` points (as `Retry-After`)."
    )


def hint_pending(given: HintPending) -> dict[str, Any]:
    """A hint still being solved, as ``POST``/``GET .../hint/`` answer it (202)."""
    return {"ply": given.ply, "status": "solving", "retry_after": given.retry_after}
