"""The fair-play rules of quick-race ratings (games.services.races, docs/fair-play.md),
tried against the farm of issue 32: one person's spare accounts racing each other."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from pytest_django import Settings

from devtools.blocking import blocking_line
from games.models import Deal, Game, Race, RaceEntry, RaceRating
from games.play import finish
from games.play import move as play_move
from games.selectors import races as race_selectors
from games.services import race_ratings
from games.services import races as race_services
from tests.race_fixtures import at, established, game_of, play, pool, starts

pytestmark = pytest.mark.django_db

PLAYED = timedelta(seconds=race_ratings.CONTESTED_MIN_SECONDS + 5)


@pytest.fixture
def farm(make_user: Callable[..., Any]) -> list[Any]:
    """One person's eight accounts: ``farm[0]`` is the one meant to climb."""
    return [make_user(f"farm{i}") for i in range(8)]


def full_race(settings: Any, accounts: list[Any]) -> Race:
    pool(settings, size=1)
    for a in accounts:
        race, _ = race_services.race_quick_join(user=a, variant="bristol")
    race.refresh_from_db()
    return race


def resign_all(race: Race, accounts: list[Any], after: timedelta) -> Race:
    """Every account resigns ``after`` the start, in order; the race is finished."""
    with at(starts(race) + after):
        for a in accounts:
            finish.resign(game_id=game_of(race, a).pk, user=a)
        race_services.race_finish(race_id=race.pk)
    return Race.objects.get(pk=race.pk)


def rating(player: Any) -> float:
    r = RaceRating.objects.filter(player=player, family="bristol").first()
    return 0.0 if r is None else r.rating


def test_the_farm_of_issue_32_gains_nothing(settings: Settings, farm: list[Any]) -> None:
    """Eight accounts join, resign at once with no move, four times over: no rating moves,
    and none of them reaches the board."""
    established(farm)  # even accounts past their unrated races
    for _ in range(4):
        race = resign_all(full_race(settings, farm), farm, timedelta(seconds=1))
        assert not race.rated and race.unrated == Race.Unrated.UNCONTESTED
    assert [rating(a) for a in farm] == [0.0] * 8
    assert not race_selectors.race_leaderboard(family="bristol").exists()


def test_a_race_that_only_one_player_raced_is_void(settings: Settings, farm: list[Any]) -> None:
    """The main account plays, the spare ones resign: nobody gains from them."""
    established(farm[:2])
    race = full_race(settings, farm[:2])
    with at(starts(race) + timedelta(seconds=1)):
        play(race, farm[0], race_ratings.CONTESTED_MIN_MOVES)
    race = resign_all(race, farm[:2], PLAYED)
    assert race.unrated == Race.Unrated.UNCONTESTED
    assert RaceEntry.objects.get(race=race, player=farm[0]).contested
    assert rating(farm[0]) == 0.0


def blocked_race(settings: Any, accounts: list[Any], after: timedelta) -> Race:
    """A race on a deal its players can block: each deals the stock and plays to a dead
    end (``lost``), ``after`` the start; the race is finished."""
    pool(settings, size=1)
    seed = next(s for s in range(20) if blocking_line("bristol", s) is not None)
    Deal.objects.filter(kind=Deal.Kind.RACE, race__isnull=True).update(seed=seed)
    race = full_race(settings, accounts)
    line = blocking_line("bristol", seed)
    assert line is not None
    with at(starts(race) + after):
        for a in accounts:
            game = game_of(race, a)
            for ply, move in enumerate(line):
                play_move.apply_move(game_id=game.pk, user=a, move=move, ply=ply)
            assert Game.objects.get(pk=game.pk).status == "lost"
        race_services.race_finish(race_id=race.pk)
    return Race.objects.get(pk=race.pk)


@pytest.mark.parametrize(("after", "raced"), [(timedelta(seconds=2), False), (PLAYED, True)])
def test_a_game_blocked_on_purpose_is_a_race_only_after_real_play(
    settings: Settings, farm: list[Any], after: timedelta, raced: bool
) -> None:
    """Lost counts like any game: blocked within seconds it is no race, and the spare
    accounts that do it never become established."""
    race = blocked_race(settings, farm[:2], after)
    assert [e.contested for e in race.entries.all()] == [raced, raced]
    assert RaceRating.objects.get(player=farm[0]).contested == int(raced)
    void = Race.Unrated.PROVISIONAL if raced else Race.Unrated.UNCONTESTED
    assert race.unrated == void


def test_new_accounts_race_unrated_until_they_have_raced_enough(
    settings: Settings, farm: list[Any]
) -> None:
    """Fresh accounts that race for real count their races but change no rating, and
    beating them is worth nothing, until each has raced ``RATED_AFTER_RACES`` races."""
    for n in range(race_ratings.RATED_AFTER_RACES):
        race = full_race(settings, farm[:2])
        with at(starts(race) + timedelta(seconds=1)):
            for a in farm[:2]:
                play(race, a, race_ratings.CONTESTED_MIN_MOVES)
        race = resign_all(race, farm[:2], PLAYED)
        assert race.unrated == Race.Unrated.PROVISIONAL, n
        assert rating(farm[0]) == 0.0
    assert RaceRating.objects.get(player=farm[0]).contested == race_ratings.RATED_AFTER_RACES
    race = full_race(settings, farm[:2])
    with at(starts(race) + timedelta(seconds=1)):
        for a in farm[:2]:
            play(race, a, race_ratings.CONTESTED_MIN_MOVES)
    assert resign_all(race, farm[:2], PLAYED).rated


def test_a_quitter_loses_as_last_but_feeds_nobody(settings: Settings, farm: list[Any]) -> None:
    established(farm[:3])
    race = full_race(settings, farm[:3])
    with at(starts(race) + timedelta(seconds=1)):
        for a in farm[:2]:
            play(race, a, race_ratings.CONTESTED_MIN_MOVES)
    race = resign_all(race, [farm[2], farm[0], farm[1]], PLAYED)
    assert race.rated
    entries = {e.player_id: e for e in race.entries.all()}
    assert [entries[a.pk].contested for a in farm[:3]] == [True, True, False]
    assert rating(farm[2]) < 0.0  # the quitter lost ...
    # ... and the two who raced changed as in a race of two: the quitter gave them nothing.
    model = race_ratings._MODEL
    two = model.rate(
        [[model.rating(mu=model.mu, sigma=model.sigma)] for _ in range(2)],
        ranks=[float(entries[farm[0].pk].place or 0), float(entries[farm[1].pk].place or 0)],
    )
    assert rating(farm[0]) == pytest.approx(two[0][0].ordinal())
    assert rating(farm[1]) == pytest.approx(two[1][0].ordinal())


def test_repeated_pairings_count_less_and_then_not_at_all(
    settings: Settings, farm: list[Any]
) -> None:
    """Two established accounts race each other for real again and again: the winner's
    gain shrinks each race and stops at ``REPEAT_LIMIT`` meetings a day."""
    established(farm[:2])
    gains = []
    for _ in range(race_ratings.REPEAT_LIMIT + 2):
        race = full_race(settings, farm[:2])
        with at(starts(race) + timedelta(seconds=1)):
            for a in farm[:2]:
                play(race, a, race_ratings.CONTESTED_MIN_MOVES)
        race = resign_all(race, farm[:2], PLAYED)
        assert race.rated
        winner = race.entries.get(place=1)
        gains.append((winner.rating_after or 0.0) - (winner.rating_before or 0.0))
    assert gains[0] > gains[1] > gains[2] > 0
    assert gains[3:] == [0.0, 0.0]


def test_an_admin_voids_a_race_rating(
    settings: Settings, farm: list[Any], staff_client: Any
) -> None:
    established(farm[:2])
    race = full_race(settings, farm[:2])
    with at(starts(race) + timedelta(seconds=1)):
        for a in farm[:2]:
            play(race, a, race_ratings.CONTESTED_MIN_MOVES)
    race = resign_all(race, farm[:2], PLAYED)
    assert race.rated and rating(farm[0]) != rating(farm[1])
    changelist = reverse("admin:games_race_changelist")
    assert race.code in staff_client.get(changelist).content.decode()
    response = staff_client.post(
        changelist, {"action": "void_rating", "_selected_action": [race.pk]}, follow=True
    )
    assert response.status_code == 200
    race.refresh_from_db()
    assert not race.rated and race.unrated == Race.Unrated.VOIDED
    for r in RaceRating.objects.filter(player__in=farm[:2]):
        assert (r.mu, r.sigma, r.races) == (
            pytest.approx(race_ratings._MODEL.mu),
            pytest.approx(race_ratings._MODEL.sigma),
            0,
        )
    assert not race_selectors.race_leaderboard(family="bristol").exists()
    assert all(e.rating_after is None for e in race.entries.all())
    race_ratings.race_rating_void(race_id=race.pk)  # idempotent
    assert RaceRating.objects.get(player=farm[0]).races == 0
    for page in ("raceentry", "racerating"):
        assert staff_client.get(reverse(f"admin:games_{page}_changelist")).status_code == 200
