"""games.hints: a winning line found once, in a solver worker, then followed to the win.

A player who plays nothing but hints wins in exactly the moves of the first line
the solver found (``LINE_SLACK`` = 0: every position on it is cached with its
move, so no second, different line is ever asked for), and the solver runs again
only when the player leaves the line.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.engine import Position, new_position
from games.engine.solver import Verdict, solve
from games.models import Game
from games.play import move as play_move
from games.services import games as game_services
from tests.helpers import game_hint_answered, hint_answered

#: Moves a hints-only game may take beyond the first line found (see the docstring).
LINE_SLACK = 0
#: Small solver limits keep the test quick; deals the solver does not win within them
#: are skipped (they are not "solver-won" deals).
NODES = 20_000
DEALS = 50
PLAYER = 1


@pytest.fixture(autouse=True)
def quick_solver(settings: Any) -> None:
    settings.HINT_SOLVER_NODES = NODES
    settings.HINT_SOLVER_SECONDS = 60.0  # the node limit decides, on a busy machine too
    settings.HINT_DEADLINE_SECONDS = 120.0
    settings.HINT_PLAYER_INTERVAL_SECONDS = 0  # one "player" solves deal after deal here


def play_hints_only(start: Position) -> tuple[int, list[int]]:
    """Play nothing but hints from ``start`` to the end; the moves and the nodes of each."""
    pos, nodes = start, []
    while not pos.is_won:
        answer = hint_answered(pos, player=PLAYER)
        assert answer.verdict == Verdict.WON.value, (pos, answer)
        nodes.append(answer.nodes)
        assert answer.move is not None
        pos = pos.apply(answer.move)
        assert len(nodes) < 2_000, "the hints do not lead to a win"
    return len(nodes), nodes


@pytest.mark.parametrize("variant", ["bristol", "picture-gallery"])
def test_hints_alone_win_in_the_moves_of_the_first_line(variant: str) -> None:
    won = 0
    for seed in range(4 * DEALS):
        start = new_position(variant, seed=seed)
        first = solve(start, max_nodes=NODES)
        if first.verdict is not Verdict.WON:
            continue
        moves, nodes = play_hints_only(start)
        assert moves <= len(first.line) + LINE_SLACK, (seed, moves, len(first.line))
        # One solve, at the start: every later hint came from the cached line.
        assert nodes[0] > 0 and not any(nodes[1:]), (seed, nodes)
        won += 1
        if won == DEALS:
            return
    pytest.fail(f"only {won} of the first {4 * DEALS} {variant} deals won within {NODES} nodes")


def test_leaving_the_line_solves_again_and_coming_back_does_not() -> None:
    start = new_position("bristol", seed=7)
    first = hint_answered(start, player=PLAYER)
    assert first.move is not None
    on_line = start.apply(first.move)
    assert hint_answered(on_line, player=PLAYER).nodes == 0  # on the line: from the cache
    off_line = next(
        p
        for m in start.legal_moves
        if m != first.move
        and (p := start.apply(m)) is not None
        and solve(p, max_nodes=NODES).verdict is Verdict.WON
    )
    assert hint_answered(off_line, player=PLAYER).nodes > 0  # left it: solved again
    assert hint_answered(start, player=PLAYER).nodes == 0  # back at the start (an undo): cached


@pytest.mark.django_db
def test_practice_bristol_deal_7_played_by_hints_ends_won(user: Any) -> None:
    """It used to loop for ever after 47 moves (t8-t5, t5-t8, ...), every hint saying won."""
    game = game_services.practice_game_start(user=user, variant="bristol", seed=7)
    line = solve(new_position("bristol", seed=7), max_nodes=NODES).line
    while game.status == "playing":
        hint = game_hint_answered(game_id=game.pk, user=user)
        assert hint.verdict == "won" and hint.ply == game.ply and hint.move is not None
        game = play_move.apply_move(game_id=game.pk, user=user, move=hint.move, ply=game.ply).game
        assert game.ply <= len(line) + LINE_SLACK
    assert game.status == "won"
    assert Game.objects.get(pk=game.pk).assisted
