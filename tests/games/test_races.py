"""Races through the services: joining, countdown, time limit, moves, standings, ratings.

Times come from the pinned clock (tests/conftest.py); a test moves it with
``race_fixtures.at``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from pytest_django import DjangoCaptureOnCommitCallbacks, Settings

from api import shapes
from core import clock
from core import events as core_events
from core.errors import (
    AlreadyRacing,
    HintNotAllowed,
    NotFound,
    NotRaceCreator,
    RaceFull,
    RaceNotStarted,
    RaceOver,
    RacePoolEmpty,
    RaceStarted,
    TooFewPlayers,
    UndoNotAllowed,
)
from games.engine import Status
from games.engine.record import position_bytes
from games.models import EXPIRED, Game, Race, RaceEntry, RaceRating
from games.play import finish, state
from games.play import move as play_move
from games.selectors import races as race_selectors
from games.selectors.games import game_log, game_position
from games.services import hints as hint_services
from games.services import race_pool
from games.services import races as race_services
from tests.race_fixtures import (
    after_start,
    at,
    ends,
    established,
    game_of,
    pool,
    quiet_moves,
    starts,
    won_after,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every channel-layer message sent, as (group, message)."""
    messages: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(
        core_events, "send", lambda group, message: messages.append((group, message))
    )
    return messages


@pytest.fixture
def players(make_user: Callable[..., Any]) -> list[Any]:
    return [make_user(f"racer{i}") for i in range(8)]


def quick_race(settings: Settings, players: list[Any], n: int = 2) -> Race:
    pool(settings)
    joined = [race_services.race_quick_join(user=p, variant="bristol")[0] for p in players[:n]]
    race = joined[-1]
    race.refresh_from_db()
    return race


def test_a_quick_race_counts_down_once_a_second_player_joins(
    settings: Settings, players: list[Any]
) -> None:
    pool(settings)
    race, created = race_services.race_quick_join(user=players[0], variant="bristol")
    assert created and race.status == Race.Status.OPEN and race.starts_at is None
    assert race.deal is not None and race.deal.kind == "race" and race.kind == Race.Kind.QUICK
    now = clock.shared_now()
    joined, created = race_services.race_quick_join(user=players[1], variant="bristol")
    assert not created and joined.pk == race.pk
    race.refresh_from_db()
    assert race.status == Race.Status.COUNTDOWN
    wait = (starts(race) - now).total_seconds()
    assert race_selectors.QUICK_START_SECONDS - 1 < wait <= race_selectors.QUICK_START_SECONDS + 1
    assert ends(race) - starts(race) == timedelta(seconds=300)
    games = [game_of(race, p) for p in players[:2]]
    assert all(g.ranked and g.started_at == race.starts_at and g.deal == race.deal for g in games)


def test_a_full_quick_race_starts_after_the_short_countdown(
    settings: Settings, players: list[Any]
) -> None:
    race = quick_race(settings, players, 8)
    now = clock.shared_now()
    wait = (starts(race) - now).total_seconds()
    assert wait <= race_selectors.COUNTDOWN_SECONDS
    assert Game.objects.filter(race_entry__race=race, started_at=starts(race)).count() == 8
    # A ninth quick racer opens a new race instead.
    outsider = players[0].__class__.objects.create_user("ninth")
    other, created = race_services.race_quick_join(user=outsider, variant="bristol")
    assert created and other.pk != race.pk
    late = players[0].__class__.objects.create_user("tenth")
    with pytest.raises(RaceFull):
        race_services.race_join(user=late, code=race.code)
    assert race_services.race_join(user=players[0], code=race.code).pk == race.pk  # again: no-op


def test_a_player_is_in_one_live_race_at_a_time(settings: Settings, players: list[Any]) -> None:
    pool(settings)
    race = race_services.race_create(user=players[0], variant="bristol")
    with pytest.raises(AlreadyRacing):
        race_services.race_quick_join(user=players[0], variant="bristol")
    with pytest.raises(AlreadyRacing):
        race_services.race_create(user=players[0], variant="bristol")
    assert Race.objects.count() == 1
    # The database holds the rule too, whatever a service forgets.
    other = race_services.race_create(user=players[1], variant="bristol")
    with pytest.raises(IntegrityError), transaction.atomic():
        RaceEntry.objects.create(race=other, player=players[0], joined_at=clock.now())
    assert race.entries.count() == 1


def test_a_move_before_the_start_is_refused_and_changes_nothing(
    settings: Settings, players: list[Any], sent: list[tuple[str, dict[str, Any]]]
) -> None:
    race = quick_race(settings, players)
    game = game_of(race, players[0])
    move = quiet_moves(race.deal, 1)[0]
    with pytest.raises(RaceNotStarted):
        play_move.apply_move(game_id=game.pk, user=players[0], move=move, ply=0)
    game.refresh_from_db()
    assert game.ply == 0 and len(game_log(game)) == 0
    assert not [m for _, m in sent if m["type"] == "game.moved"]


def test_moves_after_the_start_send_progress_with_counts_only(
    settings: Settings,
    players: list[Any],
    sent: list[tuple[str, dict[str, Any]]],
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    race = quick_race(settings, players)
    game = game_of(race, players[0])
    with after_start(race), django_capture_on_commit_callbacks(execute=True):
        for ply, move in enumerate(quiet_moves(race.deal, 3)):
            play_move.apply_move(game_id=game.pk, user=players[0], move=move, ply=ply)
    progress = [m["progress"] for group, m in sent if group == f"race.{race.code}"]
    assert [p["moves"] for p in progress] == [1, 2, 3]
    assert set(progress[-1]) == {
        "username",
        "status",
        "cards_home",
        "moves",
        "finished_at",
        "time_ms",
    }
    assert progress[-1]["username"] == "racer0"
    assert progress[-1]["status"] == "playing"


def test_race_games_are_ranked_no_hints_and_no_undo_across_a_stock_reveal(
    settings: Settings, players: list[Any]
) -> None:
    race = quick_race(settings, players)
    game = game_of(race, players[0])
    with after_start(race):
        with pytest.raises(HintNotAllowed):
            hint_services.game_hint(game_id=game.pk, user=players[0])
        play_move.apply_move(game_id=game.pk, user=players[0], move="deal", ply=0)
        with pytest.raises(UndoNotAllowed):
            play_move.apply_move(game_id=game.pk, user=players[0], move="undo", ply=1)


def test_the_time_limit_ends_the_race_and_its_unfinished_games(
    settings: Settings,
    players: list[Any],
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    race = quick_race(settings, players)
    first, second = (game_of(race, p) for p in players[:2])
    moves = quiet_moves(race.deal, 2)
    with after_start(race):
        for ply, move in enumerate(moves):
            play_move.apply_move(game_id=first.pk, user=players[0], move=move, ply=ply)
    with at(ends(race) + timedelta(milliseconds=10)):
        with pytest.raises(RaceOver):
            play_move.apply_move(game_id=second.pk, user=players[1], move=moves[0], ply=0)
        assert len(game_log(second)) == 0
        assert race_services.races_tick() == (1, 1)
        assert race_services.races_tick() == (0, 0)  # idempotent
    race.refresh_from_db()
    assert race.status == Race.Status.FINISHED
    for game in (first, second):
        game.refresh_from_db()
        assert game.status == EXPIRED and game.finished_at == race.ends_at
    places = dict(race.entries.values_list("player__username", "place"))
    assert first.score >= second.score == 0
    assert places["racer0"] == 1  # more cards home, or as many and more moves: it played
    assert not RaceEntry.objects.filter(live=True).exists()


def test_the_countdown_ends_at_starts_at_on_the_server_clock(
    settings: Settings, players: list[Any]
) -> None:
    race = quick_race(settings, players)
    with at(starts(race) - timedelta(milliseconds=100)):
        assert shapes.race(race, None)["status"] == "countdown"
    with at(starts(race)):
        view = shapes.race(race, players[0])
        assert view["status"] == "running" and view["you"] == {"game": game_of(race, players[0]).pk}
        assert view["players"][0]["status"] == "playing"


def _end(game: Game, *, status: str, score: int, ply: int, seconds: float) -> None:
    """End a game as if ``ply`` moves on the board had led there."""
    pos = game_position(game)
    Game.objects.filter(pk=game.pk).update(
        status=status,
        score=score,
        ply=ply,
        position=position_bytes(type(pos)(pos.variant, pos.piles, ply)),
        finished_at=game.started_at + timedelta(seconds=seconds),
    )


def test_standings_winners_by_time_then_cards_home_then_moves_then_later_finish(
    settings: Settings, players: list[Any]
) -> None:
    race = quick_race(settings, players, 6)
    g = [game_of(race, p) for p in players[:6]]
    _end(g[0], status="lost", score=30, ply=50, seconds=100)  # 4th: same cards, more moves
    _end(g[1], status="won", score=52, ply=200, seconds=90)  # 2nd: slower win
    _end(g[2], status="lost", score=30, ply=40, seconds=120)  # 5th: fewer moves, later
    _end(g[3], status="won", score=52, ply=300, seconds=80)  # 1st: fastest win
    _end(g[4], status="lost", score=31, ply=90, seconds=200)  # 3rd: most cards of losers
    _end(g[5], status="lost", score=30, ply=40, seconds=110)  # ... after g[2]: earlier
    with at(starts(race) + timedelta(seconds=1)):
        race_services.race_finish(race_id=race.pk)
    order = list(race.entries.order_by("place").values_list("player__username", flat=True))
    assert order == ["racer3", "racer1", "racer4", "racer0", "racer2", "racer5"]
    view = shapes.race(Race.objects.get(pk=race.pk), None)
    assert [s["username"] for s in view["standings"]] == order
    assert [s["place"] for s in view["standings"]] == [1, 2, 3, 4, 5, 6]


def test_a_finished_quick_race_rates_its_players_by_place(
    settings: Settings, players: list[Any]
) -> None:
    established(players[:3])
    race = quick_race(settings, players, 3)
    g = [game_of(race, p) for p in players[:3]]
    _end(g[0], status="lost", score=10, ply=50, seconds=100)
    _end(g[1], status="won", score=52, ply=200, seconds=90)
    _end(g[2], status="lost", score=20, ply=40, seconds=120)
    with at(starts(race) + timedelta(seconds=1)):
        race_services.race_finish(race_id=race.pk)
        race_services.race_finish(race_id=race.pk)  # idempotent: rated once
    ratings = {r.player.username: r for r in RaceRating.objects.select_related("player")}
    assert set(ratings) == {"racer0", "racer1", "racer2"}
    assert all(r.family == "bristol" and r.races == 1 for r in ratings.values())
    assert Race.objects.get(pk=race.pk).rated
    assert ratings["racer1"].rating > ratings["racer2"].rating > ratings["racer0"].rating
    assert ratings["racer1"].mu > 25 > ratings["racer0"].mu
    entry = race.entries.get(player=players[1])
    assert entry.rating_before == 0.0 and entry.rating_after == pytest.approx(
        ratings["racer1"].rating
    )
    board = race_selectors.race_leaderboard(family="bristol")
    lines = shapes.race_leaderboard(
        race_selectors.race_board_ranked(board, list(board), first=True)
    )
    assert [(line["rank"], line["player"]) for line in lines] == [
        (1, "racer1"),
        (2, "racer2"),
        (3, "racer0"),
    ]


def test_a_private_race_is_started_by_its_creator_and_is_not_rated(
    settings: Settings, players: list[Any]
) -> None:
    pool(settings)
    race = race_services.race_create(user=players[0], variant="bristol")
    with pytest.raises(TooFewPlayers):
        race_services.race_start(user=players[0], code=race.code)
    race_services.race_join(user=players[1], code=race.code)
    race.refresh_from_db()
    assert race.status == Race.Status.OPEN  # a private race waits for its creator
    with pytest.raises(NotRaceCreator):
        race_services.race_start(user=players[1], code=race.code)
    now = clock.shared_now()
    race = race_services.race_start(user=players[0], code=race.code)
    assert race.status == Race.Status.COUNTDOWN
    wait = (starts(race) - now).total_seconds()
    assert race_selectors.COUNTDOWN_SECONDS <= wait < race_selectors.COUNTDOWN_SECONDS + 1
    with pytest.raises(RaceStarted):
        race_services.race_start(user=players[0], code=race.code)
    with at(ends(race)):
        race_services.races_tick()
    assert not RaceRating.objects.exists()
    assert Race.objects.get(pk=race.pk).status == Race.Status.FINISHED


def test_joining_and_leaving_end_at_the_start(settings: Settings, players: list[Any]) -> None:
    race = quick_race(settings, players)
    race_services.race_leave(user=players[1], code=race.code)
    race.refresh_from_db()
    assert race.status == Race.Status.OPEN and race.starts_at is None
    assert not Game.objects.exists()  # no game before a countdown
    race_services.race_join(user=players[1], code=race.code)
    race.refresh_from_db()
    with after_start(race):
        with pytest.raises(RaceStarted):
            race_services.race_join(user=players[2], code=race.code)
        with pytest.raises(RaceStarted):
            race_services.race_leave(user=players[0], code=race.code)


def test_the_last_game_to_end_finishes_the_race(
    settings: Settings,
    players: list[Any],
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    race = quick_race(settings, players)
    with after_start(race), django_capture_on_commit_callbacks(execute=True):
        finish.resign(game_id=game_of(race, players[0]).pk, user=players[0])
        assert Race.objects.get(pk=race.pk).status != Race.Status.FINISHED
        finish.resign(game_id=game_of(race, players[1]).pk, user=players[1])
    race.refresh_from_db()
    assert race.status == Race.Status.FINISHED


def test_a_race_deal_is_hidden_until_the_race_finished(
    settings: Settings, players: list[Any]
) -> None:
    race = quick_race(settings, players)
    game = game_of(race, players[0])
    with after_start(race):
        game = finish.resign(game_id=game.pk, user=players[0]).game
        assert shapes.game_state(game)["deal"] is None  # the other player still plays it
        finish.resign(game_id=game_of(race, players[1]).pk, user=players[1])
        race_services.race_finish(race_id=race.pk)
    assert race.deal is not None
    assert shapes.game_state(game_of(race, players[0]))["deal"]["seed"] == str(race.deal.seed)


def test_rematch_offers_the_players_a_new_race_on_a_new_deal(
    settings: Settings, players: list[Any], sent: list[tuple[str, dict[str, Any]]]
) -> None:
    race = quick_race(settings, players)
    with pytest.raises(Exception, match="not finished"):
        race_services.race_rematch(user=players[0], code=race.code)
    with at(ends(race)):
        race_services.races_tick()
    rematch, created = race_services.race_rematch(user=players[0], code=race.code)
    assert created and rematch.kind == Race.Kind.PRIVATE and rematch.deal_id != race.deal_id
    again, created = race_services.race_rematch(user=players[1], code=race.code)
    assert not created and again.pk == rematch.pk
    assert Race.objects.get(pk=race.pk).rematch_id == rematch.pk
    assert set(rematch.entries.values_list("player__username", flat=True)) == {"racer0", "racer1"}


def test_an_empty_pool_refuses_and_starts_the_job(
    settings: Settings, players: list[Any], race_pool_jobs: list[int]
) -> None:
    settings.RACE_POOL_SIZE = 0
    with pytest.raises(RacePoolEmpty):
        race_services.race_quick_join(user=players[0], variant="bristol")
    assert race_pool_jobs and not Race.objects.exists()


@pytest.mark.certified
def test_the_pool_job_deals_certified_winnable_deals(settings: Settings) -> None:
    pool(settings, "bristol", 2, certified=True)
    deals = list(race_pool._pool("bristol"))
    assert len(deals) == 2 and all(won_after(d) for d in deals)


def test_a_won_race_game_counts_its_time_from_the_start(
    settings: Settings, players: list[Any]
) -> None:
    race = quick_race(settings, players)
    game = game_of(race, players[0])
    with at(starts(race) + timedelta(seconds=42)):
        finish.resign(game_id=game.pk, user=players[0])
    game.refresh_from_db()
    progress = state.progress(players[0], game).as_json()
    assert progress["status"] == Status.RESIGNED.value
    assert 42_000 <= progress["time_ms"] < 43_000


@pytest.mark.parametrize("code", ["\x00", "ABCDEFGHIJ", "short", "abcdefghijk", "abc/efghij"])
def test_a_text_that_cannot_be_a_race_code_is_not_found_without_a_query(
    code: str, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(0), pytest.raises(NotFound):
        race_selectors.race_by_code(code)
