"""Selectors on the real database: verification, public views, lists."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from api import shapes
from core.errors import NotFound
from games.engine import EngineError, GameLog, Position
from games.engine.record import position_bytes
from games.models import UNDO, Game
from games.play import finish
from games.play import move as play_move
from games.selectors import games as game_selectors
from games.services import games as game_services
from tests.helpers import stored_position, swap_piles, tamper_log

pytestmark = pytest.mark.django_db


def fresh(game: Game) -> Game:
    return Game.objects.select_related("deal").get(pk=game.pk)


@pytest.fixture
def played(user: Any) -> Game:
    """A Bristol game with a deal, a move and an undo in its log."""
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
    pos = game_selectors.game_position(fresh(game))
    move = next(str(m) for m in pos.legal_moves if str(m) != "deal")
    play_move.apply_move(game_id=game.pk, user=user, move=move, ply=1)
    play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=2)
    play_move.apply_move(game_id=game.pk, user=user, move=move, ply=3)
    return fresh(game)


# -- game_verify ----------------------------------------------------------------------------


def test_verify_accepts_an_untouched_game(played: Game) -> None:
    assert game_selectors.game_verify(played) is None


def test_verify_detects_a_tampered_snapshot(played: Game) -> None:
    swap_piles(played.pk, "t1", "t2")
    assert "snapshot differs" in (game_selectors.game_verify(fresh(played)) or "")


def test_verify_detects_a_tampered_stock(played: Game) -> None:
    pos = stored_position(played.pk)
    piles = (*pos.piles[:-1], pos.piles[-1][::-1])
    tampered = Position.class_for(pos.variant)(pos.variant, piles, pos.ply)
    Game.objects.filter(pk=played.pk).update(position=position_bytes(tampered))
    assert "snapshot differs" in (game_selectors.game_verify(fresh(played)) or "")


def test_verify_detects_a_tampered_ply(played: Game) -> None:
    Game.objects.filter(pk=played.pk).update(ply=played.ply + 1)
    assert game_selectors.game_verify(fresh(played)) == "ply 5 but the log has 4 entries"


def test_verify_detects_a_tampered_score(played: Game) -> None:
    Game.objects.filter(pk=played.pk).update(score=played.score + 3)
    problem = game_selectors.game_verify(fresh(played))
    assert problem is not None and problem.startswith("score")


def test_verify_detects_a_tampered_status(played: Game) -> None:
    Game.objects.filter(pk=played.pk).update(status="won", finished_at=timezone.now())
    assert game_selectors.game_verify(fresh(played)) == "status won but the replay is playing"


def test_verify_detects_a_log_that_does_not_replay(played: Game) -> None:
    tamper_log(played.pk, 1, "t1-r1")
    assert (game_selectors.game_verify(fresh(played)) or "").startswith("log does not replay")


def test_verify_detects_a_missing_log_entry(played: Game) -> None:
    tamper_log(played.pk, 3, None)
    assert game_selectors.game_verify(fresh(played)) is not None


def test_verify_accepts_a_resigned_game(played: Game, user: Any) -> None:
    finish.resign(game_id=played.pk, user=user)
    assert game_selectors.game_verify(fresh(played)) is None


# -- replay -----------------------------------------------------------------------------------


def test_replay_counts_entries_and_moves_on_the_board(played: Game) -> None:
    replay = game_selectors.game_replay(played)
    assert replay.moves_on_board == 2  # deal, move (one undone move taken off)
    assert replay.entries == played.ply == 4
    assert replay.position.ply == 2
    assert replay.position == game_selectors.game_position(played)
    assert replay == game_selectors.game_current_log(played)


def test_replay_of_an_undo_with_nothing_to_undo_fails(played: Game) -> None:
    with pytest.raises(EngineError, match="no move to undo"):
        GameLog.replay(game_selectors.deal_start(played.deal), [UNDO])


# -- public view ------------------------------------------------------------------------------


def test_game_state_is_the_public_view(played: Game) -> None:
    state = shapes.game_state(played)
    pos = game_selectors.game_position(played)
    assert state["id"] == played.pk
    assert state["variant"] == "bristol"
    assert state["kind"] == "practice"
    assert state["status"] == "playing"
    assert state["ply"] == 4
    assert state["moves_on_board"] == 2
    assert state["max_score"] == 52
    assert state["position"] == {
        "piles": pos.public_json()["piles"],
        "stock": pos.stock_count,
    }
    assert "s" not in state["position"]["piles"]
    assert state["legal_moves"] == [str(m) for m in pos.legal_moves]
    assert state["can_undo"] is True
    assert state["deal"] is None
    assert state["elapsed_ms"] >= 0
    stock = stored_position(played.pk).pile("s")
    text = json.dumps(state, default=str)
    assert all(f'"{card}"' not in text for card in stock)


def test_elapsed_time_is_measured_on_the_server(played: Game) -> None:
    Game.objects.filter(pk=played.pk).update(started_at=timezone.now() - timedelta(seconds=90))
    assert 90_000 <= game_selectors.elapsed_ms(fresh(played)) < 95_000
    finish.resign(game_id=played.pk, user=played.player)
    done = fresh(played)
    assert done.finished_at is not None
    total = int((done.finished_at - done.started_at).total_seconds() * 1000)
    assert game_selectors.elapsed_ms(done) == total  # frozen at the finish
    assert 90_000 <= total < 95_000


def test_games_of_player_lists_only_mine_newest_first(user: Any, other_user: Any) -> None:
    mine = [
        game_services.practice_game_start(user=user, variant="bristol", seed=i) for i in range(3)
    ]
    game_services.practice_game_start(user=other_user, variant="bristol", seed=1)
    listed = list(game_selectors.games_of_player(user=user))
    assert [g.pk for g in listed] == [g.pk for g in reversed(mine)]


def test_game_for_player_hides_other_players_games(user: Any, other_user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=1)
    assert game_selectors.game_for_player(game_id=game.pk, user=user) == game
    with pytest.raises(NotFound):
        game_selectors.game_for_player(game_id=game.pk, user=other_user)
    with pytest.raises(NotFound):
        game_selectors.game_for_player(game_id=game.pk + 99, user=user)


def test_game_entries_are_in_log_order_and_time(played: Game) -> None:
    entries = game_selectors.game_entries(played)
    assert [m.ply for m in entries] == [0, 1, 2, 3]
    times = [played.started_at] + [m.created_at for m in entries]
    moved_at = fresh(played).moved_at
    assert times == sorted(times) and moved_at is not None and entries[-1].created_at <= moved_at
    assert game_selectors.game_log(played)[0] == "deal"
    assert game_selectors.game_log(played)[2] == UNDO
