"""A finished day's result replayed, step by step (full positions: the day is over)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from rest_framework import serializers

from api.shapes.fields import cards, render
from api.shapes.games import DealRevealSerializer
from games.engine import (
    Position,
)
from games.play import state
from games.selectors.dailies import ResultReplay

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class ReplayStep:
    """A full position of a replay, the stock included: shown once the day is over."""

    position: Position

    @property
    def variant(self) -> str:
        return self.position.variant.key

    @property
    def ply(self) -> int:
        return self.position.ply

    @property
    def piles(self) -> dict[str, list[str]]:
        return self.position.to_json()["piles"]

    @property
    def status(self) -> str:
        return self.position.status.value

    @property
    def score(self) -> int:
        return self.position.score


class ReplayPositionSerializer(serializers.Serializer):
    variant = serializers.CharField()
    ply = serializers.IntegerField()
    piles = serializers.DictField(
        child=cards(), help_text="Every pile, the stock (`s`) included, cards bottom to top."
    )
    status = serializers.CharField()
    score = serializers.IntegerField()


class Logged(Protocol):
    """A replay as a selector reads it: the log's moves and the position at a step."""

    @property
    def moves(self) -> list[str]: ...

    @property
    def position(self) -> Position | None: ...


class ReplaySteps:
    """The steps of a replay's log, and the full position at the asked-for step."""

    replay: Logged

    @property
    def steps(self) -> int:
        return len(self.replay.moves)

    @property
    def position(self) -> ReplayStep | None:
        pos = self.replay.position
        return None if pos is None else ReplayStep(pos)


@dataclass(frozen=True)
class ReplayView(ReplaySteps):
    """A finished day's result with its log, and a step of it if asked for."""

    replay: ResultReplay

    @property
    def deal(self) -> state.DealShown:
        return state.deal_shown(self.replay.result.deal)


class ReplaySerializer(serializers.Serializer):
    result_id = serializers.IntegerField(source="replay.result.pk")
    game_id = serializers.IntegerField(
        source="replay.result.game_id", help_text="The game (its analysis: `.../analysis/`)."
    )
    player = serializers.CharField(source="replay.result.player.get_username")
    won = serializers.BooleanField(source="replay.result.won")
    cards_home = serializers.IntegerField(source="replay.result.cards_home")
    moves = cards(source="replay.moves")
    steps = serializers.IntegerField()
    deal = DealRevealSerializer()
    step = serializers.IntegerField(allow_null=True, source="replay.step")
    position = ReplayPositionSerializer(
        allow_null=True, help_text="Full position (stock included) after `step` log entries."
    )


def replay(replay: ResultReplay) -> dict[str, Any]:
    """A finished day's result, as ``games.selectors.dailies.result_replay`` reads it."""
    return render(ReplaySerializer, ReplayView(replay))
