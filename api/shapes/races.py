"""A race's shapes: the race as everyone sees it (``games.selectors.race_state``), a
racer's progress and standing, replays of a finished race, the rating boards."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from rest_framework import serializers

from api.shapes.fields import cards, instant, render
from api.shapes.games import DealRevealSerializer
from api.shapes.players import RaceRatingSerializer, RatingView
from api.shapes.replays import ReplayPositionSerializer, ReplaySteps
from games.engine import (
    Status,
)
from games.models import Race, RaceRating
from games.play import state
from games.selectors import races as race_selectors
from games.selectors.race_state import race_state

if TYPE_CHECKING:
    pass


class ProgressSerializer(serializers.Serializer):
    username = serializers.CharField()
    status = serializers.ChoiceField(
        choices=list(state.PROGRESS_STATUSES),
        help_text="`waiting` before the start; `expired`: still playing at the time limit.",
    )
    cards_home = serializers.IntegerField()
    moves = serializers.IntegerField(help_text="Log entries (moves and undos).")
    finished_at = instant(allow_null=True)
    time_ms = serializers.IntegerField(allow_null=True, help_text="From the start to the end.")


class RatingChangeSerializer(serializers.Serializer):
    before = serializers.FloatField()
    after = serializers.FloatField()


class StandingSerializer(ProgressSerializer):
    place = serializers.IntegerField()
    rating = RatingChangeSerializer(allow_null=True, help_text="Quick races only.")


class YouSerializer(serializers.Serializer):
    game = serializers.IntegerField(
        allow_null=True, help_text="Your game of the race (from the countdown on)."
    )


class RaceSerializer(serializers.Serializer):
    code = serializers.CharField()
    variant = serializers.CharField()
    kind = serializers.ChoiceField(choices=Race.Kind.choices)
    status = serializers.ChoiceField(choices=Race.Status.choices)
    creator = serializers.CharField()
    max_players = serializers.IntegerField()
    min_players = serializers.IntegerField()
    time_limit_seconds = serializers.IntegerField()
    starts_at = instant(allow_null=True)
    ends_at = instant(allow_null=True)
    server_time = instant(help_text="Now, on the clock the race runs on.")
    rematch = serializers.CharField(allow_null=True, help_text="Code of the rematch, if any.")
    players = ProgressSerializer(many=True)
    you = YouSerializer(allow_null=True, help_text="Null unless you are in the race.")
    standings = StandingSerializer(many=True, allow_null=True, help_text="Once finished.")
    unrated = serializers.ChoiceField(
        choices=Race.Unrated.choices,
        allow_null=True,
        help_text="Once finished, why the race changed no rating (docs/fair-play.md): private; "
        "uncontested (fewer than two players raced); provisional (fewer than two raced from "
        "accounts past their first races); voided (by an admin). Null while it runs, or rated.",
    )


def viewer_id(viewer: AbstractBaseUser | AnonymousUser | None) -> int | None:
    """The id of a signed-in viewer of a race, None for anyone else."""
    return viewer.pk if viewer is not None and viewer.is_authenticated else None


def race(race: Race, viewer: AbstractBaseUser | AnonymousUser | None) -> dict[str, Any]:
    """A race as ``viewer`` sees it: the same for all, but ``you``."""
    return race_state(race).as_json(viewer_id(viewer))


def races(races: Iterable[Race], viewer: AbstractBaseUser | AnonymousUser | None) -> list[Any]:
    """Races (the lobby) as ``viewer`` sees them."""
    seen_by = viewer_id(viewer)
    return [race_state(r).as_json(seen_by) for r in races]


@dataclass(frozen=True)
class RaceReplayView(ReplaySteps):
    """A racer's game of a finished race with its log, and a step of it if asked for."""

    replay: race_selectors.RaceReplay

    @property
    def deal(self) -> state.DealShown:
        return state.deal_shown(self.replay.game.deal)

    @property
    def player(self) -> str:
        return self.replay.entry.player.get_username()

    @property
    def won(self) -> bool:
        return self.replay.game.status == Status.WON


class RaceReplaySerializer(serializers.Serializer):
    player = serializers.CharField()
    game_id = serializers.IntegerField(
        source="replay.game.pk", help_text="The game (its analysis: `.../analysis/`)."
    )
    won = serializers.BooleanField()
    cards_home = serializers.IntegerField(source="replay.game.score")
    moves = cards(source="replay.moves")
    steps = serializers.IntegerField()
    deal = DealRevealSerializer()
    step = serializers.IntegerField(allow_null=True, source="replay.step")
    position = ReplayPositionSerializer(
        allow_null=True, help_text="Full position (stock included) after `step` log entries."
    )


def race_replay(replay: race_selectors.RaceReplay) -> dict[str, Any]:
    """A racer's game of a finished race, as ``games.selectors.races.race_replay`` reads it."""
    return render(RaceReplaySerializer, RaceReplayView(replay))


@dataclass(frozen=True)
class RatingLineView(RatingView):
    """A rating on a family's board, with its rank."""

    rank: int

    @property
    def player(self) -> str:
        return self.line.player.get_username()


class RatingLineSerializer(RaceRatingSerializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()


def race_leaderboard(ranked: Iterable[tuple[RaceRating, int]]) -> list[Any]:
    """A page of a family's quick-race ratings, best first
    (``games.selectors.races.race_board_ranked``)."""
    lines = [RatingLineView(r, rank) for r, rank in ranked]
    return render(RatingLineSerializer, lines, many=True)
