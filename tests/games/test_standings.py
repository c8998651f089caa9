"""The one order of standings (games.standings) on the day's board and in races: games
not won rank by cards home, then the entries that reached them, and never reward doing
nothing or quitting first (issue 32, part 3)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from pytest_django import Settings

from games.play import finish
from games.play import move as play_move
from games.selectors.games import game_position, game_reach
from games.services import games as game_services
from games.services import races as race_services
from games.standings import reach_of
from tests.daily_fixtures import DAY, board_order, daily, finished_result
from tests.race_fixtures import at, game_of, pool, starts

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_boards")]

pytest_plugins = ["tests.daily_fixtures"]


@pytest.mark.parametrize(
    "scores, reach",
    [
        ([], 0),
        ([0, 0, 0], 0),  # no card home: every such game ties here
        ([0, 1, 1, 2, 2], 4),
        ([1, 2, 1, 2, 2], 4),  # an undo took a card back: the last rise counts
        ([1, 2, 3, 2], 4),
    ],
)
def test_reach_is_the_entries_to_the_last_rise_to_the_final_cards(
    scores: list[int], reach: int
) -> None:
    assert reach_of(scores) == reach


@pytest.mark.parametrize(
    "scores, reach",
    [([], 0), ([4, 4], 0), ([4, 5, 5], 2), ([5, 4], 0)],
)
def test_cards_the_deal_put_home_are_reached_by_nobody(scores: list[int], reach: int) -> None:
    """Belvedere deals its four aces home: a score of 4 from the first entry is no rise."""
    assert reach_of(scores, 4) == reach


def test_a_belvedere_game_that_sent_no_card_home_reaches_nothing(user: Any) -> None:
    """Before, the aces the deal put home counted as reached at the first entry: a player
    who never moved outranked one who played on with the same cards home."""
    game = game_services.practice_game_start(user=user, variant="belvedere", seed=3)
    dealt_home = game.score
    assert dealt_home > 0
    for ply in range(3):
        moves = [str(m) for m in game_position(game).legal_moves if not str(m).endswith("-f")]
        play_move.apply_move(game_id=game.pk, user=user, move=moves[0], ply=ply)
        game.refresh_from_db()
    assert game.score == dealt_home and game.ply == 3
    assert game_reach(game) == 0


def test_a_games_reach_comes_from_its_log(user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=2)
    scores = []
    for ply in range(30):
        game.refresh_from_db()
        moves = [str(m) for m in game_position(game).legal_moves]
        move = next((m for m in moves if m.endswith("-f")), next(m for m in moves if m != "deal"))
        play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
        game.refresh_from_db()
        scores.append(game.score)
    assert game.score > 0
    last_rise = max(k for k in range(1, 31) if scores[k - 1] != (scores[k - 2] if k > 1 else 0))
    assert game_reach(game) == last_rise < 30


def test_on_the_daily_board_never_moving_does_not_outrank_playing(
    make_user: Callable[..., Any],
) -> None:
    """Issue 32: a player who never moved outranked one with as many cards home and 65
    entries, because fewer moves ranked higher."""
    deal = daily("bristol", DAY)
    idle = finished_result(deal, make_user("idle"), cards_home=0, moves=0)
    busy = finished_result(deal, make_user("busy"), cards_home=0, moves=65)
    assert board_order(deal) == [busy.pk, idle.pk]


def test_in_a_race_the_first_to_resign_does_not_win(
    settings: Settings, make_user: Callable[..., Any]
) -> None:
    """Issue 32: two racers resigned with no card home; the first to resign took place 1."""
    quitter, stayer = make_user("quitter"), make_user("stayer")
    pool(settings)
    for p in (quitter, stayer):
        race, _ = race_services.race_quick_join(user=p, variant="bristol")
    race.refresh_from_db()
    for p, after in ((quitter, 1), (stayer, 40)):
        with at(starts(race) + timedelta(seconds=after)):
            finish.resign(game_id=game_of(race, p).pk, user=p)
    with at(starts(race) + timedelta(seconds=41)):
        race_services.race_finish(race_id=race.pk)
    places: dict[str, Any] = dict(race.entries.values_list("player__username", "place"))
    assert places == {"stayer": 1, "quitter": 2}
