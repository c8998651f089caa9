"""solve(..., lost=..., memos=...): solves of one deal's positions share the states
proven lost and the searches' memo tables, and answer as they do alone."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pytest

from bench._greedy import greedy_log
from games.engine import new_position
from games.engine.solver import Verdict, solve
from tests.engine.helpers import RP_MIDGAME_TEXT


@pytest.mark.parametrize(("variant", "seed"), [("belvedere", 3), ("royal-parade", 5), ("mod3", 2)])
def test_a_shared_table_changes_no_verdict(variant: str, seed: int) -> None:
    start = new_position(variant, seed=seed)
    positions = [start]
    for move in greedy_log(variant, seed, 0)[:60]:
        positions.append(positions[-1].apply(move))
    shared: set[Hashable] = set()
    tables: dict[str, Any] = {}
    compared = 0
    # From the end backwards: the later positions' proofs are there for the earlier ones.
    for position in reversed(positions[::6]):
        alone = solve(position, max_nodes=30_000)
        together = solve(position, max_nodes=30_000, lost=shared, memos=tables)
        if alone.decided and together.decided:
            assert together.verdict is alone.verdict
            compared += 1
        if together.line:
            assert position.play(together.line).is_won
    assert compared >= 5


def test_shared_memo_tables_keep_what_the_searches_of_no_exit_proved() -> None:
    # Lost, 32 cards in the stock: nearly all of the proof is the searches of rule
    # no-exit, whose memo table a second solve of the deal reads instead of searching.
    position = new_position("royal-parade", seed=20261204).play(RP_MIDGAME_TEXT.split())
    tables: dict[str, Any] = {}
    first = solve(position, max_nodes=200_000, memos=tables)
    again = solve(position, max_nodes=200_000, memos=tables)
    assert first.verdict is again.verdict is Verdict.LOST
    assert again.nodes * 100 < first.nodes
