"""A daily's shapes: the deal of a day (its seed, deck and par once the day is over), a day's
overview and my game of it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from api.shapes.fields import cards, render
from core import clock
from games.engine import (
    deck_order,
    get_variant,
)
from games.models import Deal, Game

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class DailyView:
    """A daily deal: its commitment now; its seed, deck and par once its day is over."""

    deal: Deal

    @property
    def day(self) -> date:
        assert self.deal.date is not None, "a daily has its day"
        return self.deal.date

    @cached_property
    def over(self) -> bool:
        """Read once: the shared clock may be a query."""
        return clock.day_over(self.day)

    @property
    def seed(self) -> Decimal | None:
        return self.deal.seed if self.over else None

    @property
    def deck(self) -> list[str] | None:
        return deck_order(self.deal.variant, int(self.deal.seed)) if self.over else None

    @property
    def par(self) -> int | None:
        return self.deal.par if self.over else None

    @property
    def par_line(self) -> list[str] | None:
        return self.deal.par_line if self.over else None

    @property
    def seconds_left(self) -> int:
        return clock.seconds_left(self.day)


class DailySerializer(serializers.Serializer):
    variant = serializers.CharField(source="deal.variant")
    date = serializers.DateField(source="deal.date")
    commitment = serializers.CharField(
        source="deal.commitment", help_text="SHA-256 of the seed's decimal text."
    )
    seed = serializers.CharField(allow_null=True, help_text="Published once the day is over.")
    deck = cards(allow_null=True, help_text="Published once the day is over.")
    par = serializers.IntegerField(
        allow_null=True,
        help_text="Moves in the solver's winning line; published once the day is over "
        "(null for a deal that was not certified).",
    )
    par_line = cards(
        allow_null=True,
        help_text="The solver's winning line in the spec's notation, published with `par`.",
    )
    seconds_left = serializers.IntegerField(help_text="Until the day ends (UTC).")


class MyDailyGameSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="game.pk")
    status = serializers.CharField(source="game.status")
    score = serializers.IntegerField(source="game.score")
    ply = serializers.IntegerField(source="game.ply")
    rank = serializers.IntegerField(allow_null=True)


@dataclass(frozen=True)
class MyDailyGame:
    """A player's ranked game of a daily, with its rank on the day's board (None if none)."""

    game: Game
    rank: int | None


@dataclass(frozen=True)
class DailyOverviewView(DailyView):
    """A daily with its variant's name and the player's ranked game of it."""

    my_game: MyDailyGame | None = None

    @property
    def name(self) -> str:
        return get_variant(self.deal.variant).name


class DailyOverviewSerializer(DailySerializer):
    name = serializers.CharField()
    my_game = MyDailyGameSerializer(allow_null=True)


def daily(deal: Deal) -> dict[str, Any]:
    """What anyone may know of a daily (see ``DailyView``)."""
    return render(DailySerializer, DailyView(deal))


def daily_overview(dailies: list[tuple[Deal, Game | None, int | None]]) -> list[dict[str, Any]]:
    """The dailies of a day, each with the player's ranked game and its rank (or None)."""
    views = [
        DailyOverviewView(deal, None if game is None else MyDailyGame(game, rank))
        for deal, game, rank in dailies
    ]
    return render(DailyOverviewSerializer, views, many=True)
