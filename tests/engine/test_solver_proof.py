"""The second proof of a loss (``games.engine.solver.proof``): it confirms the solver's
"lost" verdicts, finds a win wherever one exists, and says when its limit came first."""

from __future__ import annotations

import ast
import doctest
from pathlib import Path

import pytest

import games.engine.solver.proof as proof_module
from games.engine import Position, new_position
from games.engine.solver import Verdict, solve
from games.engine.solver.proof import Proof, prove_lost
from tests.engine.helpers import ALL_VARIANTS

#: Deals whose search space without pruning is small enough for a test; the solver
#: answers "lost" for each (asserted below, so a solver change shows here).
SMALL_LOSSES = [("royal-parade", seed) for seed in (1, 8, 9, 10, 12, 13, 33, 36, 39)] + [
    (variant, 73) for variant in ("picture-gallery", "picture-gallery-reversed", "mod3")
]


def test_documented_examples_run() -> None:
    result = doctest.testmod(proof_module)
    assert result.attempted >= 6 and result.failed == 0


@pytest.mark.parametrize(("variant", "seed"), SMALL_LOSSES)
def test_every_loss_of_the_solver_is_confirmed(variant: str, seed: int) -> None:
    deal = new_position(variant, seed=seed)
    assert solve(deal, max_nodes=20_000).verdict is Verdict.LOST
    proof = prove_lost(deal, max_states=50_000)
    assert proof.outcome is Proof.CONFIRMED, proof
    assert proof.line == () and proof.states >= 1


def first_won_deal(variant: str) -> tuple[Position, tuple[str, ...]]:
    """The first deal of the variant the solver wins, and its winning line."""
    for seed in range(20):
        deal = new_position(variant, seed=seed)
        result = solve(deal, max_nodes=20_000)
        if result.verdict is Verdict.WON:
            return deal, result.line
    raise AssertionError(f"no {variant} deal among seeds 0..19 is won")


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_a_position_that_can_be_won_contradicts_with_a_winning_line(variant: str) -> None:
    # Twelve moves before the end of a line the solver found, a blind search finds a win.
    deal, line = first_won_deal(variant)
    late = deal.play(line[:-12])
    proof = prove_lost(late, max_states=200_000)
    assert proof.outcome is Proof.CONTRADICTED
    assert late.play(proof.line).is_won


def test_a_won_position_contradicts_at_once() -> None:
    deal = new_position("bristol", seed=2)
    won = deal.play(solve(deal, max_nodes=20_000).line)
    assert prove_lost(won) == proof_module.LossProof(Proof.CONTRADICTED, 1)


def test_the_state_limit_answers_undecided() -> None:
    deal = new_position("picture-gallery", seed=3)  # won, but deep for a blind search
    proof = prove_lost(deal, max_states=500)
    assert proof.outcome is Proof.UNDECIDED and proof.states == 500 and proof.line == ()


def test_it_shares_no_code_with_the_search() -> None:
    # The point of a second proof: it imports the engine's positions and moves, nothing
    # of the solver whose verdicts it checks.
    tree = ast.parse(Path(proof_module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"__future__", "collections.abc", "dataclasses", "enum", "position"}
