"""Picture Gallery family rules (picture-gallery, royal-parade, -reversed, mod3)."""

from __future__ import annotations

import pytest

from games.engine import (
    BadNotationError,
    BadPositionError,
    GameOverError,
    IllegalMoveError,
    Position,
    Status,
    deck_order,
    new_position,
)
from tests.engine.helpers import GALLERY_FAMILY, crafted, deal, moves_text, oracle_moves, rank

REFILL = ("picture-gallery", "picture-gallery-reversed")
NO_REFILL = ("royal-parade", "mod3")
WITH_ACES = ("picture-gallery", "picture-gallery-reversed", "mod3")

# -- dealing -------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1])
def test_gallery_layout_from_deck_order(variant: str, seed: int) -> None:
    deck = deck_order(variant, seed)
    pos = Position.from_deck(variant, deck)
    for i in range(24):
        assert pos.pile(f"g{i + 1}") == [deck[i]]
    for i in range(8):
        assert pos.pile(f"r{i + 1}") == [deck[24 + i]]
    assert pos.pile("a") == []
    assert pos.pile("s") == list(reversed(deck[32:]))
    assert pos.top("s") == deck[32]  # card 33 is dealt next
    assert pos.stock_count == (64 if variant == "royal-parade" else 72)


def test_royal_parade_has_no_aces() -> None:
    pos = new_position("royal-parade", seed=3)
    codes = [c for pid in pos.PILE_IDS for c in pos.pile(pid)]
    assert len(codes) == 96
    assert not any(c[0] == "A" for c in codes)
    with pytest.raises(BadPositionError):
        Position.from_deck("royal-parade", deck_order("picture-gallery", 3))


# -- a crafted middle-game position --------------------------------------------------------

# Slots: g1 2H (a correct start) | g2 2H-5H-8H-JH (full) | g3 5D (wrong start) | g4 empty
# g9 3C-6C | g10 3S | g11 empty | g17 4D | g18 empty | g19 2C (a 2 in the bottom row)
# the other slots hold a lone high card in the wrong row; reserves r1..r8 all hold cards.
SLOTS = {
    "g1": ["2H"],
    "g2": ["2H", "5H", "8H", "JH"],
    "g3": ["5D"],
    "g4": [],
    "g5": ["KC"],
    "g6": ["KD"],
    "g7": ["QC"],
    "g8": ["QD"],
    "g9": ["3C", "6C"],
    "g10": ["3S"],
    "g11": [],
    "g12": ["JC"],
    "g13": ["JD"],
    "g14": ["TC"],
    "g15": ["TD"],
    "g16": ["KS"],
    "g17": ["4D"],
    "g18": [],
    "g19": ["2C"],
    "g20": ["QS"],
    "g21": ["JS"],
    "g22": ["TS"],
    "g23": ["9D"],
    "g24": ["9S"],
}
RESERVES = {
    "r1": ["5H"],
    "r2": ["KH", "3D"],
    "r3": ["9C"],
    "r4": ["8D"],
    "r5": ["6S"],
    "r6": ["7D"],
    "r7": ["4C"],
    "r8": ["QH"],
}
SAMPLE_MOVES = [
    "g1-g4",  # a start card may move to another empty slot of its row
    "g10-g11",
    "g17-g18",
    "g19-g4",  # a 2 in the wrong row moves to the empty top-row slot
    "r1-g1",  # 5H on 2H
    "r2-g11",  # 3D into the empty middle-row slot
    "r3-g9",  # 9C on 3C-6C
    "r5-g10",  # 6S on 3S
    "r6-g17",  # 7D on 4D
    "r7-g18",  # 4C into the empty bottom-row slot
    "deal",
]


def sample(variant: str) -> Position:
    """The crafted position with the stock's top card 7S."""
    return crafted(variant, {**SLOTS, **RESERVES, "s": ["7S"]}, dump="s")


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
def test_legal_moves_are_exactly_the_spec_set(variant: str) -> None:
    pos = sample(variant)
    assert sorted(moves_text(pos)) == sorted(SAMPLE_MOVES)
    assert set(moves_text(pos)) == oracle_moves(pos.to_json())
    assert len(set(pos.legal_moves)) == len(pos.legal_moves)
    assert pos.status is Status.PLAYING


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
def test_building_in_suit_three_ranks_up(variant: str) -> None:
    pos = sample(variant)
    assert pos.apply("r3-g9").pile("g9") == ["3C", "6C", "9C"]
    assert pos.apply("r5-g10").pile("g10") == ["3S", "6S"]
    assert pos.apply("r6-g17").pile("g17") == ["4D", "7D"]


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
@pytest.mark.parametrize(
    "move",
    [
        # an empty slot takes only its row's start card
        "r2-g4",  # 3 into the top row
        "r7-g4",  # 4 into the top row
        "g19-g11",  # 2 into the middle row
        "r7-g11",  # 4 into the middle row
        "r2-g18",  # 3 into the bottom row
        "g5-g4",  # a King into an empty slot
        # building: same suit, exactly three ranks up, on a correct start card
        "g24-g9",  # 9S on 6C: wrong suit
        "g23-g9",  # 9D on 6C: wrong suit
        "r6-g9",  # 7D on 6C
        "r4-g3",  # 8D on 5D: g3's bottom card is not a 2
        "r1-g19",  # 5H on 2C in the bottom row
        "r8-g2",  # QH on the full g2
        "g21-g2",  # JS on the full g2
        # nothing onto a reserve that holds cards, the ace pile (non-Aces) or the stock
        "g1-r2",
        "g5-r8",
        "g1-a",
        "r1-a",
        "g1-s",
        # nothing leaves the ace pile or the stock by a move
        "s-r1",
        "s-g4",
        "a-g1",
        # empty sources, same pile
        "g4-g11",
        "g1-g1",
        "r1-r1",
    ],
)
def test_illegal_moves_are_refused_and_change_nothing(variant: str, move: str) -> None:
    pos = sample(variant)
    before = pos.to_json()
    with pytest.raises(IllegalMoveError) as exc:
        pos.apply(move)
    assert exc.value.code == "illegal_move"
    assert not pos.is_legal(move)
    assert pos.to_json() == before


@pytest.mark.parametrize(
    "move", ["g25-g1", "g0-g1", "r9-g1", "r1-f", "t1-g1", "g1-a1", "G1-G2", "g1-A", "g1-", "-g1"]
)
def test_bad_notation_in_gallery(move: str) -> None:
    pos = sample("picture-gallery")
    with pytest.raises(BadNotationError) as exc:
        pos.apply(move)
    assert exc.value.code == "bad_notation"


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
def test_a_full_slot_takes_nothing_but_its_top_may_move(variant: str) -> None:
    pos = crafted(variant, {**SLOTS, **RESERVES, "r8": ["QH"]}, dump="r8")  # stock empty
    assert pos.stock_count == 0
    listed = moves_text(pos)
    assert not [m for m in listed if m.endswith("-g2")]
    assert "g2-r1" not in listed  # r1 holds a card
    emptied = pos.apply("r1-g1")  # now r1 is empty and the stock is empty
    assert "g2-r1" in moves_text(emptied)  # JH (top of a complete slot) is a free card
    assert emptied.apply("g2-r1").pile("g2") == ["2H", "5H", "8H"]


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
def test_score_counts_aces_and_cards_in_correctly_built_slots(variant: str) -> None:
    # g1 1 + g2 4 + g9 2 + g10 1 + g17 1; g3 (5D) and g19 (2C) are in the wrong row.
    assert sample(variant).score == 9
    pos = new_position(variant, seed=11)
    expected = sum(1 for i in range(24) if rank(pos.pile(f"g{i + 1}")[0]) == 2 + i // 8)
    assert pos.score == expected


# -- Aces ----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", WITH_ACES)
def test_aces_go_only_to_the_ace_pile(variant: str) -> None:
    pos = crafted(variant, {**SLOTS, **RESERVES, "g5": ["AS"], "r8": ["AD"], "s": ["7S"]}, dump="s")
    listed = moves_text(pos)
    assert "g5-a" in listed and "r8-a" in listed
    assert not [m for m in listed if m.startswith(("g5-", "r8-")) and not m.endswith("-a")]
    for move in ("g5-g4", "g5-g11", "r8-g4", "g5-r1"):
        with pytest.raises(IllegalMoveError):
            pos.apply(move)
    after = pos.apply("g5-a")
    assert after.pile("a") == ["AS"] and after.pile("g5") == []
    assert after.score == pos.score + 1
    assert after.apply("r8-a").pile("a") == ["AS", "AD"]


@pytest.mark.parametrize("variant", WITH_ACES)
def test_aces_never_go_onto_an_empty_reserve(variant: str) -> None:
    # Stock empty, r1 empty: every variant opens empty reserves now, but not to Aces.
    pos = crafted(variant, {**SLOTS, **RESERVES, "r1": [], "g5": ["AS"], "r8": ["QH"]}, dump="r8")
    assert "g5-r1" not in moves_text(pos)
    assert "g6-r1" in moves_text(pos)
    with pytest.raises(IllegalMoveError):
        pos.apply("g5-r1")


# -- reserves: refill and empty reserves ---------------------------------------------------


@pytest.mark.parametrize("variant", REFILL)
def test_emptied_reserve_is_refilled_from_the_stock(variant: str) -> None:
    pos = sample(variant)
    after = pos.apply("r1-g1")
    assert after.pile("g1") == ["2H", "5H"]
    assert after.pile("r1") == ["7S"]  # the stock's top card, in the same move
    assert after.stock_count == pos.stock_count - 1
    assert after.ply == pos.ply + 1
    # A reserve that still holds cards is not refilled.
    after = pos.apply("r2-g11")
    assert after.pile("r2") == ["KH"]
    assert after.stock_count == pos.stock_count


@pytest.mark.parametrize("variant", REFILL)
def test_refill_with_an_ace_moved_home(variant: str) -> None:
    pos = deal(variant, {25: "AC", 33: "KH"})
    after = pos.apply("r1-a")
    assert after.pile("a") == ["AC"]
    assert after.pile("r1") == ["KH"]
    assert after.stock_count == 71


@pytest.mark.parametrize("variant", REFILL)
def test_the_last_stock_card_refills_then_reserves_open(variant: str) -> None:
    pos = crafted(variant, {**SLOTS, **RESERVES, "s": ["7S"]}, dump="r8")
    assert pos.stock_count == 1
    after = pos.apply("r1-g1")
    assert after.pile("r1") == ["7S"]
    assert after.stock_count == 0
    assert "deal" not in moves_text(after)
    after = after.apply("r3-g9")  # r3 empties; nothing left to refill it
    assert after.pile("r3") == []
    assert "g5-r3" in moves_text(after)  # any free card may go there now


@pytest.mark.parametrize("variant", NO_REFILL)
def test_emptied_reserve_is_not_refilled(variant: str) -> None:
    pos = sample(variant)
    after = pos.apply("r1-g1")
    assert after.pile("r1") == []
    assert after.stock_count == pos.stock_count
    dealt = after.apply("deal")  # it gets a card again with the next deal
    assert dealt.pile("r1") == ["7S"]


def test_royal_parade_empty_reserve_waits_for_the_empty_stock() -> None:
    after = sample("royal-parade").apply("r1-g1")
    assert not [m for m in moves_text(after) if m.endswith("-r1")]
    for move in ("g5-r1", "r2-r1", "g1-r1"):
        with pytest.raises(IllegalMoveError):
            after.apply(move)


def test_mod3_empty_reserve_takes_any_free_card_any_time() -> None:
    after = sample("mod3").apply("r1-g1")
    assert after.stock_count > 0
    listed = moves_text(after)
    assert {"g5-r1", "r2-r1", "g1-r1", "g2-r1", "g3-r1"} <= set(listed)
    assert after.apply("g5-r1").pile("r1") == ["KC"]
    assert after.apply("r2-r1").pile("r1") == ["3D"]


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
def test_empty_reserves_open_once_the_stock_is_empty(variant: str) -> None:
    pos = crafted(variant, {**SLOTS, **RESERVES, "r1": [], "r8": ["QH"]}, dump="r8")
    assert pos.stock_count == 0
    listed = set(moves_text(pos))
    assert {"g5-r1", "r2-r1", "g2-r1", "r8-r1"} <= listed
    assert set(listed) == oracle_moves(pos.to_json())
    after = pos.apply("r2-r1")
    assert after.pile("r1") == ["3D"] and after.pile("r2") == ["KH"]
    with pytest.raises(IllegalMoveError):
        after.apply("g5-r1")  # r1 holds a card now: nothing is built on a reserve


@pytest.mark.parametrize("variant", REFILL)
def test_refill_variants_reject_an_empty_reserve_while_the_stock_lasts(variant: str) -> None:
    with pytest.raises(BadPositionError):
        crafted(variant, {**SLOTS, **RESERVES, "r1": []}, dump="s")


# Stock cards for crafted positions (bottom to top), free of clashes with SLOTS and RESERVES.
STOCK_CARDS = ["9H", "8H", "7H", "6H", "4H", "3H", "TH", "KH", "QH"]

# -- dealing from the stock ----------------------------------------------------------------


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
def test_deal_puts_one_card_on_each_reserve_left_to_right(variant: str) -> None:
    deck = deck_order(variant, 4)
    pos = new_position(variant, seed=4)
    after = pos.apply("deal")
    for i in range(8):
        assert after.pile(f"r{i + 1}") == [deck[24 + i], deck[32 + i]]
    assert after.stock_count == pos.stock_count - 8


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
def test_short_last_row_goes_to_the_leftmost_reserves(variant: str) -> None:
    pos = crafted(variant, {**SLOTS, **RESERVES, "s": ["9H", "8H", "7H"]}, dump="r8")
    assert pos.stock_count == 3
    after = pos.apply("deal")
    assert [after.top(f"r{i}") for i in (1, 2, 3)] == ["7H", "8H", "9H"]
    assert [len(after.pile(f"r{i}")) for i in range(1, 8)] == [2, 3, 2, 1, 1, 1, 1]
    assert after.pile("r8") == pos.pile("r8")
    assert after.stock_count == 0
    assert "deal" not in moves_text(after) and "deal-reverse" not in moves_text(after)


def test_deal_reverse_deals_right_to_left() -> None:
    variant = "picture-gallery-reversed"
    pos = crafted(variant, {**SLOTS, **RESERVES, "s": ["9H", "8H", "7H"]}, dump="r8")
    after = pos.apply("deal-reverse")
    assert [after.top(f"r{i}") for i in (8, 7, 6)] == ["7H", "8H", "9H"]
    assert [after.pile(f"r{i}") for i in range(1, 6)] == [pos.pile(f"r{i}") for i in range(1, 6)]
    assert after.stock_count == 0
    full = crafted(variant, {**SLOTS, **RESERVES, "s": STOCK_CARDS[:8]}, dump="r8")
    assert full.stock_count == 8
    after = full.apply("deal-reverse")
    assert [after.top(f"r{i}") for i in range(8, 0, -1)] == STOCK_CARDS[:8][::-1]


@pytest.mark.parametrize(("stock", "offered"), [(9, False), (8, True), (5, True), (1, True)])
def test_deal_reverse_only_on_the_last_row(stock: int, offered: bool) -> None:
    cards = STOCK_CARDS[:stock]
    for variant in GALLERY_FAMILY:
        pos = crafted(variant, {**SLOTS, **RESERVES, "s": cards}, dump="r8")
        assert pos.stock_count == stock
        allowed = offered and variant == "picture-gallery-reversed"
        assert ("deal-reverse" in moves_text(pos)) is allowed
        assert "deal" in moves_text(pos)
        if allowed:
            pos.apply("deal-reverse")
        else:
            with pytest.raises(IllegalMoveError) as exc:
                pos.apply("deal-reverse")
            assert exc.value.code == "illegal_move"


@pytest.mark.parametrize("variant", REFILL)
def test_short_last_row_after_a_refill(variant: str) -> None:
    pos = deal(variant, {25: "AC"}).apply("r1-a")  # the refill takes one card: stock 71
    for _ in range(7):
        assert "deal-reverse" not in moves_text(pos)
        pos = pos.apply("deal")
    assert pos.stock_count == 15
    assert "deal-reverse" not in moves_text(pos)
    pos = pos.apply("deal")
    assert pos.stock_count == 7
    assert ("deal-reverse" in moves_text(pos)) is (variant == "picture-gallery-reversed")
    row = list(reversed(pos.pile("s")))  # the next cards, first dealt first
    lengths = [len(pos.pile(f"r{i}")) for i in range(1, 9)]
    after = pos.apply("deal")
    assert [after.top(f"r{i}") for i in range(1, 8)] == row
    assert [len(after.pile(f"r{i}")) for i in range(1, 9)] == [n + 1 for n in lengths[:7]] + [
        lengths[7]
    ]
    if variant == "picture-gallery-reversed":
        after = pos.apply("deal-reverse")
        assert [after.top(f"r{i}") for i in range(8, 1, -1)] == row
        assert len(after.pile("r1")) == lengths[0]


# -- won and lost --------------------------------------------------------------------------


def complete_slots() -> dict[str, list[str]]:
    slots = {}
    for row, ranks in enumerate(("258J", "369Q", "47TK")):
        for k, suit in enumerate("CDHSCDHS"):
            slots[f"g{8 * row + k + 1}"] = [r + suit for r in ranks]
    return slots


@pytest.mark.parametrize("variant", WITH_ACES)
def test_won_with_every_slot_complete_and_every_ace_home(variant: str) -> None:
    aces = ["AC", "AD", "AH", "AS"] * 2
    pos = crafted(variant, {**complete_slots(), "a": aces[:-1], "r1": ["AS"]}, dump="r1")
    assert pos.status is Status.PLAYING
    assert pos.score == 103
    assert "r1-a" in moves_text(pos)
    won = pos.apply("r1-a")
    assert won.status is Status.WON and won.is_won and won.is_over
    assert won.score == 104
    assert won.legal_moves == ()
    for move in ("g1-r1", "deal", "r1-a"):
        with pytest.raises(GameOverError) as exc:
            won.apply(move)
        assert exc.value.code == "game_over"
        assert not won.is_legal(move)
    assert Position.from_json(won.to_json()).status is Status.WON


def test_royal_parade_is_won_without_aces() -> None:
    slots = complete_slots()
    slots["g24"] = slots["g24"][:-1]  # KS missing
    pos = crafted("royal-parade", {**slots, "r1": ["KS"]}, dump="r1")
    assert pos.score == 95
    won = pos.apply("r1-g24")
    assert won.status is Status.WON and won.score == 96 == won.variant.card_count
    with pytest.raises(GameOverError):
        won.apply("g24-r1")


def inert_layout() -> dict[str, list[str]]:
    """No empty slot, no correctly started slot, every reserve covered, no free Ace."""
    high = [r + s for r in "89TJQK" for s in "CDHS"]  # 24 cards, all wrong bottoms
    piles = {f"g{i + 1}": [c] for i, c in enumerate(high)}
    for i, c in enumerate(["5C", "5D", "5H", "5S", "6C", "6D", "6H"]):
        piles[f"r{i + 1}"] = [c]
    piles["r8"] = ["7C"]
    return piles


@pytest.mark.parametrize("variant", GALLERY_FAMILY)
def test_lost_when_the_stock_is_empty_and_nothing_moves(variant: str) -> None:
    pos = crafted(variant, inert_layout(), dump="r8")
    assert pos.stock_count == 0
    assert pos.legal_moves == ()
    assert pos.status is Status.LOST and pos.is_over and not pos.is_won
    assert pos.score == 0
    with pytest.raises(GameOverError):
        pos.apply("g1-r1")


@pytest.mark.parametrize(
    ("variant", "last"),
    [(v, "deal") for v in GALLERY_FAMILY] + [("picture-gallery-reversed", "deal-reverse")],
)
def test_lost_after_the_last_deal(variant: str, last: str) -> None:
    pos = crafted(variant, {**inert_layout(), "s": ["9H"]}, dump="r8")
    assert pos.status is Status.PLAYING
    lost = pos.apply(last)
    assert lost.top("r8" if last == "deal-reverse" else "r1") == "9H"
    assert lost.status is Status.LOST
    with pytest.raises(GameOverError) as exc:
        lost.apply("deal")
    assert exc.value.code == "game_over"
