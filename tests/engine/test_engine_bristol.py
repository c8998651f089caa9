"""Bristol family rules (Bristol, Belvedere), one test per rule of the spec."""

from __future__ import annotations

import pytest

from games.engine import (
    BadNotationError,
    GameOverError,
    IllegalMoveError,
    Position,
    Status,
    deck_order,
    new_position,
)
from tests.engine.helpers import crafted, deal, deck_with, moves_text

NON_ACES = [r + s for r in "23456789TJQ" for s in "CDHS"]  # 44 cards, no Ace, no King


def is_king(code: str) -> bool:
    return code[0] == "K"


# -- dealing -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 7, 42, 2**64 - 1])
def test_bristol_layout_from_deck_order(seed: int) -> None:
    deck = deck_order("bristol", seed)
    pos = Position.from_deck("bristol", deck)
    for i in range(8):
        fan = deck[3 * i : 3 * i + 3]
        kings_first = [c for c in fan if is_king(c)] + [c for c in fan if not is_king(c)]
        assert pos.pile(f"t{i + 1}") == kings_first
    assert [pos.pile(f"r{i}") for i in (1, 2, 3)] == [[deck[24]], [deck[25]], [deck[26]]]
    assert all(pos.pile(f"f{i}") == [] for i in range(1, 5))
    stock = pos.pile("s")
    assert len(stock) == pos.stock_count == 25
    assert stock[-1] == deck[27]  # card 28 is on top, dealt next
    assert stock == list(reversed(deck[27:]))


@pytest.mark.parametrize(
    ("dealt", "fan"),
    [
        # no King: unchanged
        (["5C", "9D", "2H"], ["5C", "9D", "2H"]),
        # one King: X,Y,K -> K,X,Y, wherever it lies
        (["5C", "9D", "KH"], ["KH", "5C", "9D"]),
        (["5C", "KH", "9D"], ["KH", "5C", "9D"]),
        (["KH", "5C", "9D"], ["KH", "5C", "9D"]),
        # two Kings: both to the bottom, in their dealt order
        (["KS", "5C", "KH"], ["KS", "KH", "5C"]),
        (["5C", "KH", "KS"], ["KH", "KS", "5C"]),
        (["5C", "KD", "KC"], ["KD", "KC", "5C"]),
        (["KD", "KC", "5C"], ["KD", "KC", "5C"]),
        # three Kings: unchanged (their order is kept, not sorted)
        (["KH", "KC", "KD"], ["KH", "KC", "KD"]),
        (["KS", "KD", "KC"], ["KS", "KD", "KC"]),
    ],
)
@pytest.mark.parametrize(
    ("variant", "ace", "first", "pile"),
    [
        ("bristol", None, 1, "t1"),
        ("bristol", None, 22, "t8"),
        # Belvedere: the Ace at position 1 goes to f1, so positions 5-7 are the second fan.
        ("belvedere", "AC", 5, "t2"),
    ],
)
def test_kings_go_to_the_bottom_of_their_fan(
    variant: str, ace: str | None, first: int, pile: str, dealt: list[str], fan: list[str]
) -> None:
    placed = {first + k: c for k, c in enumerate(dealt)}
    if ace:
        placed[1] = ace
    pos = deal(variant, placed, fill=[c for c in NON_ACES if c not in dealt])
    assert pos.pile(pile) == fan
    if ace:
        assert pos.pile("f1") == [ace]


def test_kings_outside_the_fans_stay_put() -> None:
    pos = deal("bristol", {24: "KC", 25: "KD", 28: "KH"}, fill=NON_ACES)
    assert pos.pile("t8")[0] == "KC"  # moved to the bottom of its fan
    assert pos.pile("r1") == ["KD"]  # reserves keep their card
    assert pos.pile("s")[-1] == "KH"  # the stock is not rearranged


def test_belvedere_first_ace_starts_f1() -> None:
    # The first Ace of the deck order is AH at position 30 (in the stock part of the order).
    placed = {30: "AH", 35: "AC", 40: "AD"}
    fill = NON_ACES[:29]
    deck = deck_with("belvedere", placed, fill=fill)
    pos = Position.from_deck("belvedere", deck)
    assert pos.pile("f1") == ["AH"]
    rest = [c for c in deck if c != "AH"]
    assert len(rest) == 51
    assert pos.pile("t1") == rest[0:3]
    assert pos.pile("r1") == [rest[24]]
    assert pos.stock_count == 24
    assert pos.pile("s") == list(reversed(rest[27:]))
    assert "AC" in pos.pile("s") and "AD" in pos.pile("s")
    assert pos.score == 1


def test_belvedere_only_the_first_ace_moves() -> None:
    pos = deal("belvedere", {2: "AS", 3: "AD"}, fill=NON_ACES)
    assert pos.pile("f1") == ["AS"]
    # The remaining 51 cards are dealt as in Bristol: AD is now the second card of t1.
    assert pos.pile("t1") == ["2C", "AD", "2D"]


@pytest.mark.parametrize("seed", [0, 3, 2**64 - 1])
def test_bristol_eight_deals_of_three_then_one_card_onto_r1(seed: int) -> None:
    deck = deck_order("bristol", seed)
    pos = new_position("bristol", seed=seed)
    for k in range(8):
        assert "deal" in moves_text(pos)
        before = [len(pos.pile(f"r{i}")) for i in (1, 2, 3)]
        pos = pos.apply("deal")
        assert [len(pos.pile(f"r{i}")) for i in (1, 2, 3)] == [n + 1 for n in before]
        assert [pos.top(f"r{i}") for i in (1, 2, 3)] == deck[27 + 3 * k : 30 + 3 * k]
        assert pos.stock_count == 25 - 3 * (k + 1)
    assert pos.stock_count == 1
    pos = pos.apply("deal")
    assert pos.stock_count == 0
    assert pos.pile("r1") == [deck[24], *deck[27:52:3]]
    assert pos.pile("r1")[-1] == deck[51]
    assert pos.pile("r2") == [deck[25], *deck[28:52:3]]
    assert pos.pile("r3") == [deck[26], *deck[29:52:3]]
    assert [len(pos.pile(f"r{i}")) for i in (1, 2, 3)] == [10, 9, 9]
    assert "deal" not in moves_text(pos)
    with pytest.raises(IllegalMoveError):
        pos.apply("deal")


@pytest.mark.parametrize("seed", [0, 5])
def test_belvedere_eight_full_deals(seed: int) -> None:
    pos = new_position("belvedere", seed=seed)
    assert pos.stock_count == 24
    for k in range(8):
        pos = pos.apply("deal")
        assert [len(pos.pile(f"r{i}")) for i in (1, 2, 3)] == [k + 2] * 3
    assert pos.stock_count == 0
    assert "deal" not in moves_text(pos)


# -- moves ---------------------------------------------------------------------------------

# t1 ..9C 7H | t2 8S | t3 8D | t4 empty | t5 6C | t6 2H | t7 AS | t8 3S
# r1 7C | r2 empty | r3 KD | f1 AC 2C | f2 AD | f3, f4 empty | the rest in the stock
SAMPLE = {
    "t1": ["9C", "7H"],
    "t2": ["8S"],
    "t3": ["8D"],
    "t5": ["6C"],
    "t6": ["2H"],
    "t7": ["AS"],
    "t8": ["3S"],
    "r1": ["7C"],
    "r3": ["KD"],
    "f1": ["AC", "2C"],
    "f2": ["AD"],
}


@pytest.fixture(params=["bristol", "belvedere"])
def sample(request: pytest.FixtureRequest) -> Position:
    return crafted(request.param, SAMPLE, dump="s")


def test_legal_moves_are_exactly_the_spec_set(sample: Position) -> None:
    assert sorted(moves_text(sample)) == sorted(
        [
            "t1-t2",  # 7H on 8S: any suit, one rank lower
            "t1-t3",
            "t5-t1",  # 6C on 7H
            "t6-t8",  # 2H on 3S
            "t6-f",  # 2H on AD (f2)
            "t7-t6",  # AS on 2H
            "t7-f",  # AS onto the empty f3
            "t8-f",  # 3S on 2C (f1)
            "r1-t2",  # reserves are sources
            "r1-t3",
            "deal",
        ]
    )
    assert len(set(sample.legal_moves)) == len(sample.legal_moves)
    assert sample.status is Status.PLAYING


def test_fan_to_fan_any_suit(sample: Position) -> None:
    after = sample.apply("t1-t2")
    assert after.pile("t2") == ["8S", "7H"]
    assert after.pile("t1") == ["9C"]
    assert after.ply == sample.ply + 1
    after = sample.apply("r1-t3")
    assert after.pile("t3") == ["8D", "7C"]
    assert after.pile("r1") == []


def test_emptied_reserve_waits_for_the_next_deal(sample: Position) -> None:
    after = sample.apply("r1-t3")
    assert after.pile("r1") == []
    assert after.stock_count == sample.stock_count  # no refill in Bristol
    top = sample.pile("s")[-1]
    dealt = after.apply("deal")
    assert dealt.pile("r1") == [top]


@pytest.mark.parametrize(
    ("move", "foundation", "pile"),
    [
        ("t8-f", "f1", ["AC", "2C", "3S"]),  # 3 only fits on f1's 2
        ("t6-f", "f2", ["AD", "2H"]),  # 2 only fits on f2's Ace
        ("t7-f", "f3", ["AS"]),  # an Ace starts the leftmost empty foundation
    ],
)
def test_foundation_moves(sample: Position, move: str, foundation: str, pile: list[str]) -> None:
    after = sample.apply(move)
    assert after.pile(foundation) == pile
    assert after.score == sample.score + 1


def test_foundation_is_the_leftmost_that_accepts() -> None:
    pos = crafted(
        "bristol",
        {
            "t1": ["4S"],
            "t2": ["2S"],
            "t3": ["AS"],
            "f1": ["AC"],
            "f2": ["AD", "2D", "3D"],
            "f3": ["AH", "2H", "3H"],
        },
        dump="s",
    )
    assert pos.apply("t1-f").pile("f2") == ["AD", "2D", "3D", "4S"]
    assert pos.apply("t2-f").pile("f1") == ["AC", "2S"]
    assert pos.apply("t3-f").pile("f4") == ["AS"]


def test_ace_goes_to_the_leftmost_empty_foundation() -> None:
    pos = crafted("bristol", {"t1": ["AS"], "f2": ["AD"], "f4": ["AH"]}, dump="s")
    assert pos.apply("t1-f").pile("f1") == ["AS"]
    pos = crafted("bristol", {"t1": ["AS"], "f1": ["AD"], "f2": ["AH"]}, dump="s")
    assert pos.apply("t1-f").pile("f3") == ["AS"]


@pytest.mark.parametrize(
    "move",
    [
        "t1-t4",  # onto an empty fan: an emptied fan stays empty
        "t5-r2",  # onto a reserve, even an empty one
        "t1-r1",  # onto a reserve
        "r1-r3",
        "t2-t3",  # 8 onto 8
        "t5-t2",  # 6 onto 8
        "t1-t5",  # 7 onto 6: fans build down
        "r3-f",  # King with no Queen home
        "t2-f",
        "f1-t1",  # nothing leaves a foundation
        "f2-f",
        "s-t1",  # nor the stock (except by deal)
        "t1-s",
        "t4-t1",  # empty source
        "r2-f",
        "t1-t1",
        "deal-reverse",  # not part of Bristol
    ],
)
def test_illegal_moves_are_refused_and_change_nothing(sample: Position, move: str) -> None:
    before = sample.to_json()
    with pytest.raises(IllegalMoveError) as exc:
        sample.apply(move)
    assert exc.value.code == "illegal_move"
    assert not sample.is_legal(move)
    assert sample.to_json() == before


@pytest.mark.parametrize(
    "move",
    ["t1-f1", "t1-f4", "t9-t1", "t0-t1", "t1-g1", "g1-a", "f-t1", "x", "", "T1-T2", "t1 -t2"],
)
def test_bad_notation_in_bristol(sample: Position, move: str) -> None:
    before = sample.to_json()
    with pytest.raises(BadNotationError) as exc:
        sample.apply(move)
    assert exc.value.code == "bad_notation"
    assert sample.to_json() == before


def test_emptied_fan_takes_nothing(sample: Position) -> None:
    after = sample.apply("t6-f")  # t6 held only 2H
    assert after.pile("t6") == []
    assert "t7-t6" not in moves_text(after)
    with pytest.raises(IllegalMoveError):
        after.apply("t7-t6")


# -- won, lost, score ----------------------------------------------------------------------


def full_suit(suit: str) -> list[str]:
    return [r + suit for r in "A23456789TJQK"]


@pytest.mark.parametrize("variant", ["bristol", "belvedere"])
def test_won_when_all_cards_are_home(variant: str) -> None:
    pos = crafted(
        variant,
        {
            "f1": full_suit("C"),
            "f2": full_suit("D"),
            "f3": full_suit("H"),
            "f4": full_suit("S")[:-1],
            "t1": ["KS"],
        },
        dump="s",
    )
    assert pos.stock_count == 0
    assert moves_text(pos) == ["t1-f"]
    assert pos.score == 51
    won = pos.apply("t1-f")
    assert won.status is Status.WON
    assert won.is_won and won.is_over
    assert won.score == 52
    assert won.legal_moves == ()
    for move in ("t1-f", "deal", "t1-t2"):
        with pytest.raises(GameOverError) as exc:
            won.apply(move)
        assert exc.value.code == "game_over"
    with pytest.raises(BadNotationError):
        won.apply("nonsense")


def test_lost_when_the_stock_is_empty_and_nothing_moves() -> None:
    pos = crafted("bristol", {"t1": ["KS"], "s": ["9C"]}, dump="t1")
    assert pos.stock_count == 1
    assert moves_text(pos) == ["deal"]
    assert pos.status is Status.PLAYING  # the stock still holds a card
    lost = pos.apply("deal")
    assert lost.pile("r1") == ["9C"]
    assert lost.legal_moves == ()
    assert lost.status is Status.LOST
    assert lost.is_over and not lost.is_won
    assert lost.score == 0
    for move in ("deal", "r1-f", "r1-t1"):
        with pytest.raises(GameOverError) as exc:
            lost.apply(move)
        assert exc.value.code == "game_over"


def test_score_counts_foundation_cards() -> None:
    assert new_position("bristol", seed=1).score == 0
    assert new_position("belvedere", seed=1).score == 1
    pos = crafted("bristol", {"f1": ["AC", "2D"], "f3": ["AS", "2S", "3S"]}, dump="s")
    assert pos.score == 5


def test_a_won_game_from_random_play() -> None:
    """Play Bristol deals at random until one is won: the engine gets there by its own moves."""
    import random

    for seed in range(50):
        rng = random.Random(seed)
        pos = new_position("bristol", seed=seed)
        moves: list[str] = []
        while not pos.is_over and len(moves) < 300:
            move = rng.choice(pos.legal_moves)
            moves.append(str(move))
            pos = pos.apply(move)
        if pos.is_won:
            break
    assert pos.status is Status.WON and pos.score == 52
    assert all(len(pos.pile(f"f{i}")) == 13 for i in range(1, 5))
