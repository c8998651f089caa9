"""solve(..., lost=...): solves of one deal's positions share the states proven lost,
and answer as they do alone."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from bench._greedy import greedy_log
from games.engine import new_position
from games.engine.solver import solve


@pytest.mark.parametrize(("variant", "seed"), [("belvedere", 3), ("royal-parade", 5), ("mod3", 2)])
def test_a_shared_table_changes_no_verdict(variant: str, seed: int) -> None:
    start = new_position(variant, seed=seed)
    positions = [start]
    for move in greedy_log(variant, seed, 0)[:60]:
        positions.append(positions[-1].apply(move))
    shared: set[Hashable] = set()
    compared = 0
    # From the end backwards: the later positions' proofs are there for the earlier ones.
    for position in reversed(positions[::6]):
        alone = solve(position, max_nodes=30_000)
        together = solve(position, max_nodes=30_000, lost=shared)
        if alone.decided and together.decided:
            assert together.verdict is alone.verdict
            compared += 1
        if together.line:
            assert position.play(together.line).is_won
    assert compared >= 5
