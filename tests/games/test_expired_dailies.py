"""A ranked daily left unfinished when its day ends counts: expired, not won, on the board.

The hourly job (``create_dailies``) ends such games at the day's end, and so does the
player's next move; a look at the game shows it expired without storing anything (a
read never writes).
"""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.test import TestCase
from rest_framework.test import APIClient

from api import shapes
from core import clock
from core.errors import GameFinished
from games import boards
from games.models import EXPIRED, Game, PlayerStats, Result
from games.play import finish
from games.play import move as play_move
from games.selectors import boards as board_selectors
from games.selectors import games as game_selectors
from games.services import dailies as daily_services
from games.services import games as game_services
from tests.daily_fixtures import DAY, NOON, FakeClock, committed, day_board, finished_result

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_boards")]
pytest_plugins = ["tests.daily_fixtures"]


def started(user: Any, variant: str = "bristol") -> Game:
    """Today's ranked daily, started and one move in."""
    game, created = daily_services.daily_game_start(user=user, variant=variant, day=DAY)
    assert created and game.ranked
    move = shapes.game_state(game)["legal_moves"][0]
    return committed(play_move.apply_move, game_id=game.pk, user=user, move=move, ply=0).game


def assert_counted(game: Game) -> Result:
    game = Game.objects.select_related("deal").get(pk=game.pk)
    assert game.status == EXPIRED
    assert game.finished_at == clock.day_end(DAY)
    assert game_selectors.game_verify(game) is None
    result = Result.objects.get(game=game)
    assert not result.won and result.cards_home == game.score and result.moves == game.ply
    assert result.time_ms == (clock.day_end(DAY) - game.started_at) // timedelta(milliseconds=1)
    assert boards.rank_of(result.deal_id, result.sort_key) >= 1
    return result


def test_the_hourly_job_ends_an_abandoned_ranked_game_and_it_counts(
    user: Any, other_user: Any, daily_clock: FakeClock
) -> None:
    # A win the day before: the abandoned day must end that streak.
    yesterday = daily_services.daily_create("bristol", DAY - timedelta(days=1))
    finished_result(yesterday, user, won=True, finished_at=NOON - timedelta(days=1))
    game = started(user)
    kept = started(other_user)
    committed(finish.resign, game_id=kept.pk, user=other_user)
    practice = game_services.practice_game_start(user=user, variant="bristol", seed=1)
    assert PlayerStats.objects.get(player=user).played == 1
    daily_clock.next_day()
    out = io.StringIO()
    committed(call_command, "create_dailies", days=1, stdout=out)
    assert "1 ranked daily game(s) left unfinished ended as expired" in out.getvalue()
    assert_counted(game)
    record = shapes.player_record(user, board_selectors.stats_of_player(user=user), race_ratings=())
    assert (record["played"], record["won"], record["win_rate"]) == (2, 1, 0.5)
    assert record["variants"][0]["current_streak"] == 0
    board = day_board(deal=game.deal, user=user)
    assert board["total"] == 2 and board["me"]["won"] is False
    assert Game.objects.get(pk=practice.pk).status == "playing"  # practice is never ended
    assert Result.objects.filter(game=kept).count() == 1  # resigned the day before: as it was


def test_a_ranked_game_of_today_is_left_alone(user: Any, daily_clock: FakeClock) -> None:
    game = started(user)
    daily_clock.set(clock.day_end(DAY) - timedelta(microseconds=1))
    assert finish.dailies_expire() == 0
    assert Game.objects.get(pk=game.pk).status == "playing"


def test_opening_the_game_the_next_day_shows_it_expired_and_writes_nothing(
    user: Any, daily_clock: FakeClock
) -> None:
    game = started(user)
    daily_clock.next_day()
    api = APIClient()
    api.force_authenticate(user)
    with TestCase.captureOnCommitCallbacks(execute=True):
        state = api.get(f"/api/v1/games/{game.pk}/").json()
    assert state["status"] == EXPIRED and state["legal_moves"] == []
    assert state["finished_at"] == clock.iso(clock.day_end(DAY))
    assert state["deal"] is not None  # the day is over: the deal is public now
    assert Game.objects.get(pk=game.pk).status == "playing"  # shown, not stored
    assert not Result.objects.filter(game=game).exists()
    assert committed(finish.dailies_expire) == 1  # the job stores what the read showed
    assert_counted(game)


def test_a_move_the_next_day_ends_the_game_and_is_refused(
    user: Any, daily_clock: FakeClock
) -> None:
    game = started(user)
    daily_clock.next_day()
    move = shapes.game_state(game)["legal_moves"][0]
    with pytest.raises(GameFinished, match="day of this ranked daily is over"):
        committed(play_move.apply_move, game_id=game.pk, user=user, move=move, ply=1)
    assert_counted(game)
    with pytest.raises(GameFinished):
        finish.resign(game_id=game.pk, user=user)
    assert finish.dailies_expire() == 0
