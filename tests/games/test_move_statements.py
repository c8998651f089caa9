"""The common path of a move: one guarded statement, and the locked path when it misses.

A process that served a game's last move (or started it) holds the game at that
ply; its next move is then one ``UPDATE ... INSERT`` statement, committed on its
own. These tests run in autocommit (``transaction=True``), as servers do.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from games.engine import new_position
from games.errors import StalePly
from games.models import Game
from games.services import games as game_services

pytestmark = pytest.mark.django_db(transaction=True)

TRANSACTION_CONTROL = {"BEGIN", "COMMIT", "ROLLBACK"}


def statements(captured: CaptureQueriesContext) -> tuple[list[str], int]:
    """The SQL statements run (transaction control left out) and the explicit commits."""
    sqls = [q["sql"] for q in captured.captured_queries]
    return [s for s in sqls if s not in TRANSACTION_CONTROL], sqls.count("COMMIT")


def playable(seed: int = 3, moves: int = 6) -> list[str]:
    """A line of ``moves`` moves of a Bristol deal that leaves the game playing, no move
    the same as the one before it."""
    pos, line = new_position("bristol", seed=seed), [""]
    while len(line) <= moves:
        move = min(str(m) for m in pos.legal_moves if str(m) != line[-1])
        pos = pos.apply(move)
        line.append(move)
    return line[1:]


needs_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the one-statement path is PostgreSQL's"
)


@needs_postgres
def test_service_moves_cost_one_statement_each(user: Any, assert_consistent: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    for ply, move in enumerate(playable()):
        with CaptureQueriesContext(connection) as captured:
            out = game_services.game_apply_move(game_id=game.pk, user=user, move=move, ply=ply)
        sqls, commits = statements(captured)
        assert len(sqls) <= 2 and commits <= 1, captured.captured_queries
        assert "FOR UPDATE" not in " ".join(sqls)
        assert out.game.ply == ply + 1 and not out.duplicate
    assert_consistent(game)


@needs_postgres
def test_rest_moves_cost_two_statements_each(api: Any, assert_consistent: Any) -> None:
    started = api.post("/api/v1/games/", {"variant": "bristol", "seed": 3}, format="json")
    assert started.status_code == 201, started.content
    url = f"/api/v1/games/{started.json()['id']}/moves/"
    for ply, move in enumerate(playable()):
        with CaptureQueriesContext(connection) as captured:
            answer = api.post(url, {"move": move, "ply": ply}, format="json")
        assert answer.status_code == 200, answer.content
        sqls, commits = statements(captured)
        assert len(sqls) <= 2 and commits <= 1, captured.captured_queries  # token, move
    assert_consistent(Game.objects.get(pk=started.json()["id"]))


def test_a_held_state_that_another_process_outran_answers_as_before(user: Any) -> None:
    """The process holds ply 1 but the game is at ply 2: the locked path answers."""
    first, second, third = playable(moves=3)
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    at_one = game_services.game_apply_move(game_id=game.pk, user=user, move=first, ply=0)
    game_services.game_apply_move(game_id=game.pk, user=user, move=second, ply=1)
    game_services._hold(at_one.game, at_one.position)  # as another process left it

    again = game_services.game_apply_move(game_id=game.pk, user=user, move=second, ply=1)
    assert again.duplicate and again.game.ply == 2
    game_services._hold(at_one.game, at_one.position)
    with pytest.raises(StalePly) as refused:
        game_services.game_apply_move(game_id=game.pk, user=user, move=third, ply=1)
    assert refused.value.details == {"ply": 2}
    assert Game.objects.get(pk=game.pk).ply == 2


def test_a_held_game_resigned_meanwhile_takes_no_move(user: Any) -> None:
    first, second = playable(moves=2)
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    game_services.game_apply_move(game_id=game.pk, user=user, move=first, ply=0)
    game_services.game_resign(game_id=game.pk, user=user)  # the held state stays as it was

    with pytest.raises(game_services.GameFinished):
        game_services.game_apply_move(game_id=game.pk, user=user, move=second, ply=1)
    assert Game.objects.get(pk=game.pk).moves.count() == 1


@needs_postgres
def test_a_hint_given_elsewhere_shows_in_the_next_move(user: Any) -> None:
    first, second = playable(moves=2)
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    game_services.game_apply_move(game_id=game.pk, user=user, move=first, ply=0)
    Game.objects.filter(pk=game.pk).update(assisted=True)  # another process's hint

    with CaptureQueriesContext(connection) as captured:
        out = game_services.game_apply_move(game_id=game.pk, user=user, move=second, ply=1)
    assert len(statements(captured)[0]) == 1  # still the held path
    assert out.game.assisted is True
