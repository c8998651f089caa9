"""A player's record: every variant played, the all-time boards, race ratings."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import AbstractBaseUser
from rest_framework import serializers

from api.shapes.fields import render
from games.models import PlayerStats, RaceRating
from games.selectors.boards import current_streak

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class StatsView:
    """A player's record in one variant, with its rank on an all-time board if any."""

    stats: PlayerStats
    rank: int | None = None

    @property
    def player(self) -> str:
        return self.stats.player.get_username()

    @property
    def win_rate(self) -> float:
        return round(self.stats.won / self.stats.played, 4) if self.stats.played else 0.0

    @property
    def current_streak(self) -> int:
        return current_streak(self.stats)


class AlltimeEntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    days_won = serializers.IntegerField(source="stats.won")
    played = serializers.IntegerField(source="stats.played")
    best_streak = serializers.IntegerField(source="stats.best_streak")
    current_streak = serializers.IntegerField()


def alltime_lines(ranked: list[tuple[PlayerStats, int]]) -> list[dict[str, Any]]:
    """A page of an all-time board (``games.selectors.boards.alltime_ranked``)."""
    return render(
        AlltimeEntrySerializer, [StatsView(s, rank=rank) for s, rank in ranked], many=True
    )


class BestSerializer(serializers.Serializer):
    date = serializers.DateField(source="deal.date")
    won = serializers.BooleanField()
    cards_home = serializers.IntegerField()
    moves = serializers.IntegerField()
    time_ms = serializers.IntegerField()


class VariantRecordSerializer(serializers.Serializer):
    variant = serializers.CharField(source="stats.variant")
    played = serializers.IntegerField(source="stats.played")
    won = serializers.IntegerField(source="stats.won")
    win_rate = serializers.FloatField()
    best_streak = serializers.IntegerField(source="stats.best_streak")
    current_streak = serializers.IntegerField()
    best = BestSerializer(allow_null=True, source="stats.best_result")


@dataclass(frozen=True)
class RecordView:
    """A player's daily record: totals over the variants, and each variant's."""

    user: AbstractBaseUser
    stats: list[PlayerStats]
    ratings: Iterable[RaceRating]

    @property
    def player(self) -> str:
        return self.user.get_username()

    @property
    def played(self) -> int:
        return sum(s.played for s in self.stats)

    @property
    def won(self) -> int:
        return sum(s.won for s in self.stats)

    @property
    def win_rate(self) -> float:
        return round(self.won / self.played, 4) if self.played else 0.0

    @property
    def variants(self) -> list[StatsView]:
        return [StatsView(s) for s in sorted(self.stats, key=lambda s: s.variant)]

    @property
    def race_ratings(self) -> list[RatingView]:
        return [RatingView(r) for r in self.ratings]


@dataclass(frozen=True)
class RatingView:
    """A quick-race rating, rounded as boards and player pages show it."""

    line: RaceRating

    @property
    def rating(self) -> float:
        return round(self.line.rating, 2)

    @property
    def mu(self) -> float:
        return round(self.line.mu, 4)

    @property
    def sigma(self) -> float:
        return round(self.line.sigma, 4)


class RaceRatingSerializer(serializers.Serializer):
    family = serializers.CharField(source="line.family")
    rating = serializers.FloatField(help_text="mu - 3 sigma (openskill's ordinal).")
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    races = serializers.IntegerField(source="line.races")


class PlayerRecordSerializer(serializers.Serializer):
    player = serializers.CharField()
    played = serializers.IntegerField()
    won = serializers.IntegerField()
    win_rate = serializers.FloatField()
    variants = VariantRecordSerializer(many=True)
    race_ratings = RaceRatingSerializer(many=True, help_text="Quick-race ratings per family.")


def player_record(
    user: AbstractBaseUser, stats: list[PlayerStats], *, race_ratings: Iterable[RaceRating]
) -> dict[str, Any]:
    """A player's record: daily totals from their ``PlayerStats`` rows, and their quick-race
    ratings (one page and one API answer show both)."""
    return render(PlayerRecordSerializer, RecordView(user, stats, race_ratings))
