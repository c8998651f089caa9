"""GameLog: replay, undo and its floor, entries against moves on the board, retries."""

from __future__ import annotations

import dataclasses
import doctest
import random

import pytest

import games.engine.log as log_module
from games.engine import (
    BadNotationError,
    BadPositionError,
    IllegalMoveError,
    Position,
    new_position,
)
from games.engine.log import UNDO, GameLog, UndoNotAllowedError
from tests.engine.helpers import ALL_VARIANTS


def start(variant: str = "bristol", seed: int = 7) -> Position:
    return new_position(variant, seed=seed)


def never(depth: int) -> Position:
    raise AssertionError(f"position_at({depth}) must not be called")


def won_bristol(ply: int) -> Position:
    """A won Bristol position with ``ply`` moves on the board."""
    piles: dict[str, list[str]] = {p: [] for p in Position.class_for("bristol").PILE_IDS}
    for i, suit in enumerate("CDHS"):
        piles[f"f{i + 1}"] = [r + suit for r in "A23456789TJQK"]
    return Position.from_json({"variant": "bristol", "ply": ply, "piles": piles})


def test_documented_examples_run() -> None:
    result = doctest.testmod(log_module)
    assert result.attempted > 0 and result.failed == 0


def test_a_new_log_is_empty() -> None:
    log = GameLog(start())
    assert (log.entries, log.moves_on_board, log.undo_floor) == (0, 0, 0)
    assert not log.can_undo(ranked=False) and not log.can_undo(ranked=True)


def test_the_log_is_an_immutable_value() -> None:
    log = GameLog(start())
    after = log.play("deal")
    assert log.entries == 0 and log.position == start()
    with pytest.raises(dataclasses.FrozenInstanceError):
        log.entries = 3  # type: ignore[misc]
    assert GameLog.replay(start(), ["deal"]) == after
    assert hash(after) == hash(GameLog.replay(start(), ["deal"]))


def test_a_move_adds_an_entry_and_a_move_on_the_board() -> None:
    log = GameLog(start()).play("deal")
    assert (log.entries, log.moves_on_board) == (1, 1)
    assert log.position == start().apply("deal")


def test_an_undo_adds_an_entry_and_takes_a_move_off_the_board() -> None:
    log = GameLog.replay(start(), ["deal", "r1-t4", UNDO])
    assert (log.entries, log.moves_on_board) == (3, 1)
    assert log.position == start().apply("deal")


def test_a_card_from_the_stock_raises_the_floor_and_an_undo_lowers_it() -> None:
    log = GameLog(start()).play("deal")
    assert log.undo_floor == 1  # the deal revealed three stock cards
    log = log.play("r1-t4")
    assert log.undo_floor == 1  # a move from a reserve reveals nothing of the stock
    practice = log.undo(ranked=False, position_at=lambda d: start().apply("deal"))
    practice = practice.undo(ranked=False, position_at=lambda d: start())
    assert (practice.moves_on_board, practice.undo_floor) == (0, 0)


def test_a_refill_from_the_stock_raises_the_floor() -> None:
    # Picture Gallery refills an emptied reserve from the stock at once.
    pos = start("picture-gallery", 1)
    log = GameLog(pos)
    move = next(
        str(m)
        for m in pos.legal_moves
        if str(m).startswith("r") and pos.apply(m).stock_count < pos.stock_count
    )
    log = log.play(move)
    assert log.undo_floor == 1 and log.position.stock_count == pos.stock_count - 1


def test_a_ranked_game_never_undoes_below_the_floor() -> None:
    log = GameLog.replay(start(), ["deal", "r1-t4", UNDO])
    assert log.floor(ranked=True) == 1 and log.floor(ranked=False) == 0
    assert not log.can_undo(ranked=True) and log.can_undo(ranked=False)
    with pytest.raises(UndoNotAllowedError, match="revealed a card of the stock") as info:
        log.undo(ranked=True, position_at=never)
    assert info.value.code == "undo_not_allowed"
    assert log.undo(ranked=False, position_at=lambda d: start()).moves_on_board == 0


def test_an_undo_with_no_move_is_refused() -> None:
    with pytest.raises(UndoNotAllowedError, match="no move to undo"):
        GameLog(start()).undo(ranked=False, position_at=never)
    with pytest.raises(UndoNotAllowedError, match="no move to undo"):
        GameLog.replay(start(), [UNDO])


def test_an_undo_after_the_end_is_refused() -> None:
    log = GameLog(won_bristol(ply=5), entries=9)
    assert not log.can_undo(ranked=False)
    with pytest.raises(UndoNotAllowedError, match="over"):
        log.undo(ranked=False, position_at=never)


def test_an_undo_to_a_position_of_the_wrong_depth_is_refused() -> None:
    log = GameLog(start()).play("deal")
    with pytest.raises(BadPositionError):
        log.undo(ranked=False, position_at=lambda d: start().apply("deal"))


def test_bad_entries_raise_the_engine_codes() -> None:
    with pytest.raises(IllegalMoveError):
        GameLog(start()).play("t1-r1")
    with pytest.raises(BadNotationError):
        GameLog.replay(start(), ["deal", "t9-f"])


def test_a_retry_is_the_same_entry_at_a_ply_already_logged() -> None:
    log = GameLog.replay(start(), ["deal", "r1-t4", UNDO])
    stored = ["deal", "r1-t4", UNDO].__getitem__
    assert log.is_retry(0, "deal", stored)
    assert log.is_retry(2, UNDO, stored)
    assert not log.is_retry(1, "deal", stored)  # another entry at that ply: stale
    # The next ply and beyond, or below 0, are never retries; nothing is looked up.
    for ply in (3, 4, -1):
        assert not log.is_retry(ply, "deal", never)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_undo_from_stored_positions_equals_the_replay(variant: str) -> None:
    """A server that keeps each entry's position and reads the latest one at a depth (as
    the service does) builds the same log as the replay, entry by entry."""
    rng = random.Random(variant)
    pos0 = start(variant, 11)
    log = GameLog(pos0)
    entries: list[tuple[str, Position]] = []  # (notation, position after it)

    def position_at(depth: int) -> Position:
        latest = [p for _, p in entries if p.ply == depth]
        return latest[-1] if latest else pos0

    for _ in range(120):
        if log.position.is_over:
            break
        if log.can_undo(ranked=False) and rng.random() < 0.25:
            notation = UNDO
            log = log.undo(ranked=False, position_at=position_at)
        else:
            notation = str(rng.choice(log.position.legal_moves))
            log = log.play(notation)
        entries.append((notation, log.position))
    notations = [n for n, _ in entries]
    assert UNDO in notations
    steps = list(GameLog.replay_steps(pos0, notations))
    assert [s.position for s in steps] == [p for _, p in entries]
    assert steps[-1] == log == GameLog.replay(pos0, notations)
    assert log.entries == len(notations)
    assert log.moves_on_board == len(notations) - 2 * notations.count(UNDO)
