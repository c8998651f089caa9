"""Safe moves home and the finishing line of a won-out game (games.engine.safe)."""

from __future__ import annotations

import pytest

from games.engine import Move, finish_line, new_position, safe_moves
from games.engine.solver import solve_seed
from tests.engine.helpers import ALL_VARIANTS, crafted

# -- Bristol -------------------------------------------------------------------------------


def texts(moves: tuple[Move, ...]) -> list[str]:
    return [str(m) for m in moves]


def test_bristol_an_ace_is_always_safe() -> None:
    pos = crafted("bristol", {"t1": ["9C", "AS"], "r1": ["AD"]}, dump="s")
    assert texts(safe_moves(pos)) == ["t1-f", "r1-f"]


def test_bristol_a_two_is_safe_only_once_every_ace_is_home() -> None:
    three_aces = {"f1": ["AC"], "f2": ["AD"], "f3": ["AH"], "t1": ["AS", "2C"]}
    pos = crafted("bristol", {**three_aces, "t2": ["KC", "2H"]}, dump="s")
    # 2H could go home, but the Ace of spades may still want it as a base.
    assert "t2-f" in texts(pos.legal_moves)
    assert safe_moves(pos) == ()
    after = crafted(
        "bristol",
        {"f1": ["AC"], "f2": ["AD"], "f3": ["AH"], "f4": ["AS"], "t2": ["KC", "2H"]},
        dump="s",
    )
    assert texts(safe_moves(after)) == ["t2-f"]


def test_bristol_higher_ranks_wait_for_all_four_of_the_rank_below() -> None:
    piles = {
        "f1": ["AC", "2C", "3C", "4C"],
        "f2": ["AD", "2D", "3D", "4D"],
        "f3": ["AH", "2H", "3H", "4H"],
        "f4": ["AS", "2S", "3S"],
        "t1": ["5C"],
        "t2": ["4S"],
    }
    pos = crafted("bristol", piles, dump="s")
    assert texts(safe_moves(pos)) == ["t2-f"]  # 4S: every 3 is home; 5C: 4S is not
    assert texts(safe_moves(pos.apply("t2-f"))) == ["t1-f"]


def test_belvedere_counts_its_first_ace() -> None:
    pos = crafted(
        "belvedere",
        {"f1": ["AC"], "f2": ["AD"], "f3": ["AH"], "f4": ["AS"], "t1": ["2S"]},
        dump="s",
    )
    assert texts(safe_moves(pos)) == ["t1-f"]


# -- Gallery ------------------------------------------------------------------------------

#: One card on every reserve (a refilling variant's reserves are never empty while the stock lasts).
RESERVES = {f"r{i}": [c] for i, c in enumerate(["KC", "KD", "KH", "KS", "QD", "QH", "QS", "JC"], 1)}


@pytest.mark.parametrize("variant", ["picture-gallery", "mod3"])
def test_gallery_an_ace_on_a_slot_is_safe(variant: str) -> None:
    pos = crafted(variant, {**RESERVES, "g5": ["AH"], "g6": ["2C"]}, dump="s")
    assert texts(safe_moves(pos)) == ["g5-a"]


def test_gallery_an_ace_emptying_a_refilled_reserve_is_not_safe() -> None:
    # Picture Gallery refills an emptied reserve from the stock: the move deals a card.
    pos = crafted("picture-gallery", {**RESERVES, "r1": ["AH"], "r2": ["QC", "AS"]}, dump="s")
    assert "r1-a" in texts(pos.legal_moves)
    assert texts(safe_moves(pos)) == ["r2-a"]


def test_gallery_an_ace_on_a_reserve_is_safe_without_refill() -> None:
    pos = crafted("mod3", {**RESERVES, "r1": ["AH"]}, dump="s")
    assert texts(safe_moves(pos)) == ["r1-a"]


def test_gallery_building_is_never_called_safe() -> None:
    pos = crafted("mod3", {"g1": ["2H"], "r1": ["5H"]}, dump="s")
    assert "r1-g1" in texts(pos.legal_moves)
    assert safe_moves(pos) == ()


# -- finishing -----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_a_fresh_deal_is_not_won_out(variant: str) -> None:
    assert finish_line(new_position(variant, seed=1)) == ()


@pytest.mark.parametrize("variant", ["bristol", "picture-gallery"])
def test_the_end_of_a_winning_line_is_won_out_and_the_finish_wins(variant: str) -> None:
    line = solve_seed(variant, 1).line
    assert line
    pos = new_position(variant, seed=1)
    finish: tuple[Move, ...] = ()
    for move in line:
        finish = finish_line(pos)
        if finish:
            break
        pos = pos.apply(move)
    assert finish, "a won game is won out at the latest one move before the end"
    assert pos.stock_count == 0
    assert pos.play(finish).is_won
    assert all(m.dst in ("f", "a") or m.dst.startswith("g") for m in finish)


def test_bristol_a_card_under_a_wrong_card_is_not_won_out() -> None:
    # Everything home but 2C under 3C and the spades' run: 3C waits for a 2 that it covers.
    piles = {
        "f1": ["AC"],
        "f2": ["AD", "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "TD", "JD", "QD", "KD"],
        "f3": ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"],
        "f4": ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS"],
        "t1": ["2C", "3C"],
        "t2": ["KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C", "5C", "4C"],
    }
    pos = crafted("bristol", piles, dump="t3")
    assert pos.stock_count == 0
    assert finish_line(pos) == ()
    tidy = crafted("bristol", {**piles, "t1": ["3C", "2C"]}, dump="t3")
    assert finish_line(tidy) != ()
    assert tidy.play(finish_line(tidy)).is_won


def test_nothing_is_safe_or_to_finish_once_the_game_is_over() -> None:
    line = solve_seed("bristol", 1).line
    won = new_position("bristol", seed=1).play(line)
    assert won.is_won
    assert safe_moves(won) == ()
    assert finish_line(won) == ()
