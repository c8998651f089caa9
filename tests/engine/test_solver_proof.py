"""The second proof of a loss (``games.engine.solver.proof``): it confirms the solver's
"lost" verdicts, finds a win wherever one exists, and says when its limit came first."""

from __future__ import annotations

import ast
import doctest
import random
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
    # The point of a second proof: it imports the engine's positions, moves and layout
    # (relative imports two levels up), nothing of the solver whose verdicts it checks.
    tree = ast.parse(Path(proof_module.__file__).read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert all(node.level in (0, 2) for node in imports) and any(node.level for node in imports)
    absolute = {node.module for node in imports if not node.level}
    assert absolute == {"__future__", "collections.abc", "dataclasses", "enum"}
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Import)]


def mirrored(position: Position) -> Position:
    """``position`` with its fans in reverse order and the suits of every pile's cards
    relabelled (a rank-preserving swap of cards): the same game by its symmetries."""
    piles = list(position.piles)
    piles[0:8] = reversed(piles[0:8])
    swap = {c: c ^ 1 for p in piles for c in p}  # hearts <-> spades etc.: same rank
    return type(position)(position.variant, tuple(tuple(swap[c] for c in p) for p in piles))


def lost_bristol_position() -> Position:
    """Bristol seed 49 after 40 seeded random moves: stock out, lost (the solver says so)."""
    rng = random.Random(49)
    pos = new_position("bristol", seed=49)
    for _ in range(40):
        pos = pos.apply(rng.choice(pos.legal_moves))
    return pos


def test_bristol_symmetric_positions_share_a_key_and_others_do_not() -> None:
    deal = new_position("bristol", seed=5).play(["deal", "deal"])
    twin = mirrored(deal)
    assert twin.piles != deal.piles
    assert proof_module._bristol_key(twin) == proof_module._bristol_key(deal)
    for move in deal.legal_moves:  # a real change of the position changes the key
        assert proof_module._bristol_key(deal.apply(move)) != proof_module._bristol_key(deal)
    gallery = new_position("picture-gallery", seed=5)
    assert proof_module._key_of(gallery)(gallery) == gallery.piles


def test_bristol_symmetries_confirm_a_loss_the_plain_key_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pos = lost_bristol_position()
    assert solve(pos, max_nodes=50_000).verdict is Verdict.LOST
    proof = prove_lost(pos, max_states=2_000)
    assert proof.outcome is Proof.CONFIRMED and proof.states < 2_000
    assert prove_lost(mirrored(pos), max_states=2_000) == proof
    monkeypatch.setattr(proof_module, "_key_of", lambda position: proof_module._piles)
    assert prove_lost(pos, max_states=2_000).outcome is Proof.UNDECIDED
    # With room enough the plain key agrees: the symmetries only merge duplicates.
    assert prove_lost(pos, max_states=50_000).outcome is Proof.CONFIRMED
