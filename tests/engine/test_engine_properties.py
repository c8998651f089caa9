"""Property tests: random seeds and random legal play in every variant.

A game is a variant, a seed (0 <= seed < 2**64) and a list of choice numbers; each
number picks one legal move (a quarter of them pick a deal when one is offered,
so games reach the empty stock, the last row and the end more often).
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engine import (
    EngineError,
    Position,
    Status,
    deck_order,
    get_variant,
    new_position,
    replay,
)
from games.engine.cards import cards_text
from tests.engine.helpers import ALL_VARIANTS, oracle_apply, oracle_moves, oracle_score

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
MAX_PLY = 150

variants = st.sampled_from(ALL_VARIANTS)
seeds = st.integers(min_value=0, max_value=2**64 - 1)


@st.composite
def choices(draw: st.DrawFn) -> list[int]:
    """Choice numbers for up to MAX_PLY moves (a drawn length and a drawn random stream:
    plain lists of integers come out too short to reach the end of a game)."""
    length = draw(st.integers(min_value=0, max_value=MAX_PLY))
    rng = random.Random(draw(st.integers(min_value=0, max_value=2**32 - 1)))
    return [rng.randrange(2**16) for _ in range(length)]


def choose(pos: Position, k: int) -> str:
    moves = [str(m) for m in pos.legal_moves]
    deals = [m for m in moves if m.startswith("deal")]
    if deals and k % 4 == 0:
        return deals[(k // 4) % len(deals)]
    return moves[(k // 4) % len(moves)]


def play(variant: str, seed: int, picks: list[int]) -> tuple[list[Position], list[str]]:
    """Every position of the game (the start included) and the moves between them."""
    pos = new_position(variant, seed=seed)
    positions, moves = [pos], []
    for k in picks:
        if pos.is_over:
            break
        move = choose(pos, k)
        pos = pos.apply(move)
        positions.append(pos)
        moves.append(move)
    return positions, moves


def all_cards(pos: Position) -> Counter[int]:
    return Counter(c for pile in pos.piles for c in pile)


@SETTINGS
@given(variants, seeds, choices())
def test_cards_are_conserved(variant: str, seed: int, picks: list[int]) -> None:
    deck = Counter(get_variant(variant).deck())
    for pos in play(variant, seed, picks)[0]:
        assert all_cards(pos) == deck
        data = pos.to_json()
        codes = Counter(c for p in data["piles"].values() for c in p)
        assert codes == Counter(cards_text(list(deck.elements())))


@SETTINGS
@given(variants, seeds, choices())
def test_legal_moves_match_the_spec_and_all_apply(
    variant: str, seed: int, picks: list[int]
) -> None:
    for pos in play(variant, seed, picks)[0]:
        listed = [str(m) for m in pos.legal_moves]
        assert len(listed) == len(set(listed)), "duplicate legal moves"
        data = pos.to_json()
        assert set(listed) == oracle_moves(data)
        assert pos.score == oracle_score(data)
        for move in listed:
            after = pos.apply(move)
            assert after.ply == pos.ply + 1
            assert after.to_json() == oracle_apply(data, move)
        assert pos.to_json() == data  # applying never changes the position itself


@SETTINGS
@given(variants, seeds, choices())
def test_status_follows_the_moves(variant: str, seed: int, picks: list[int]) -> None:
    positions, _ = play(variant, seed, picks)
    for pos in positions:
        if pos.is_won:
            assert pos.status is Status.WON and pos.legal_moves == ()
            assert pos.score == pos.variant.card_count and pos.stock_count == 0
        elif not pos.legal_moves:
            assert pos.status is Status.LOST and pos.stock_count == 0
        else:
            assert pos.status is Status.PLAYING
            assert pos.score < pos.variant.card_count
        assert pos.is_over == (pos.status is not Status.PLAYING)
        assert ("deal" in [str(m) for m in pos.legal_moves]) == (
            pos.stock_count > 0 and not pos.is_won
        )
    # Only the last position may be over.
    assert not any(p.is_over for p in positions[:-1])


@SETTINGS
@given(variants, seeds, choices(), st.integers(min_value=0, max_value=2**32))
def test_unlisted_moves_are_refused_and_change_nothing(
    variant: str, seed: int, picks: list[int], salt: int
) -> None:
    positions, _ = play(variant, seed, picks)
    table = sorted(Position.class_for(variant)._TABLE)
    garbage = ["", "x", "t1-", "deal-reverse-", "G1-A", "t99-f", "g1-t1", "t1-g1", "f1-f"]
    for i, pos in enumerate(positions):
        listed = {str(m) for m in pos.legal_moves}
        before = pos.to_json()
        unlisted = [m for m in table if m not in listed]
        tries = [unlisted[(salt + 7919 * i + 31 * j) % len(unlisted)] for j in range(6)]
        tries.append(garbage[(salt + i) % len(garbage)])
        for move in tries:
            if move in listed:  # a garbage string can be a move of the other family
                continue
            try:
                pos.apply(move)
            except EngineError as exc:
                assert exc.code in ("illegal_move", "game_over", "bad_notation")
                if pos.is_over and move in table:
                    assert exc.code == "game_over"
                if move in table and not pos.is_over:
                    assert exc.code == "illegal_move"
            else:
                raise AssertionError(f"unlisted move {move!r} was applied")
            assert not pos.is_legal(move)
            assert pos.to_json() == before
            assert {str(m) for m in pos.legal_moves} == listed


@settings(SETTINGS, max_examples=30)
@given(variants, seeds, choices())
def test_generation_agrees_with_the_single_move_check(
    variant: str, seed: int, picks: list[int]
) -> None:
    """The set of legal moves is exactly the set of notation moves that is_legal accepts."""
    table = Position.class_for(variant)._TABLE
    positions, _ = play(variant, seed, picks)
    for pos in positions[::10] + positions[-1:]:
        fresh = type(pos)(pos.variant, pos.piles, pos.ply)  # no cached move list
        accepted = {m for m in table if fresh.is_legal(m)}
        assert accepted == {str(m) for m in pos.legal_moves}


@SETTINGS
@given(variants, seeds, choices())
def test_json_round_trip_and_public_form(variant: str, seed: int, picks: list[int]) -> None:
    for pos in play(variant, seed, picks)[0]:
        full = pos.to_json()
        back = Position.from_json(full)
        assert back == pos and back.to_json() == full
        assert [str(m) for m in back.legal_moves] == [str(m) for m in pos.legal_moves]
        public = pos.public_json()
        assert "s" not in public["piles"]
        assert isinstance(public["stock"], int) and public["stock"] == len(full["piles"]["s"])
        assert {k: v for k, v in full["piles"].items() if k != "s"} == public["piles"]
        shown = Counter(c for p in public["piles"].values() for c in p)
        assert shown + Counter(full["piles"]["s"]) == Counter(
            c for p in full["piles"].values() for c in p
        )


@SETTINGS
@given(variants, seeds, choices())
def test_replay_is_deterministic(variant: str, seed: int, picks: list[int]) -> None:
    positions, moves = play(variant, seed, picks)
    first = replay(variant, moves, seed=seed)
    second = replay(variant, moves, seed=seed)
    assert first == second == positions[-1]
    assert first.to_json() == positions[-1].to_json()
    assert replay(variant, moves, deck=deck_order(variant, seed)) == first
    assert positions[0].play(moves) == first
