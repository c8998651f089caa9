"""Cards, the portable shuffle and golden deck orders (spec: Cards and piles; Dealing)."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from games.engine import (
    SEED_LIMIT,
    BadNotationError,
    BadPositionError,
    card_text,
    deck_order,
    new_position,
    parse_card,
)
from games.engine.cards import rank, standard_deck, suit
from games.engine.shuffle import shuffled, splitmix64
from tests.engine.helpers import ALL_VARIANTS, canonical_deck

MASK = (1 << 64) - 1


# -- cards ---------------------------------------------------------------------------------


def test_card_codes_rank_then_suit() -> None:
    codes = [r + s for r in "A23456789TJQK" for s in "CDHS"]
    assert len({parse_card(c) for c in codes}) == 52
    for c in codes:
        assert card_text(parse_card(c)) == c
    assert rank(parse_card("AS")) == 1
    assert rank(parse_card("TH")) == 10
    assert rank(parse_card("KD")) == 13
    assert [suit(parse_card(f"Q{s}")) for s in "CDHS"] == [0, 1, 2, 3]


@pytest.mark.parametrize("bad", ["", "10H", "1H", "th", "TX", "HT", "T", "TH ", None, 10, ["TH"]])
def test_bad_card_code_is_bad_notation(bad: object) -> None:
    with pytest.raises(BadNotationError) as exc:
        parse_card(bad)  # type: ignore[arg-type]
    assert exc.value.code == "bad_notation"


def test_standard_decks() -> None:
    one = standard_deck()
    assert len(one) == len(set(one)) == 52
    two = standard_deck(decks=2)
    assert len(two) == 104 and all(n == 2 for n in Counter(two).values())
    no_aces = standard_deck(decks=2, aces=False)
    assert len(no_aces) == 96 and all(rank(c) != 1 for c in no_aces)


# -- splitmix64 and the shuffle ------------------------------------------------------------


def reference_splitmix64(seed: int, n: int) -> list[int]:
    """Straight from the docstring of games/engine/shuffle.py."""
    out = []
    x = seed
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) % 2**64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        out.append(z ^ (z >> 31))
    return out


def reference_shuffle(items: list, seed: int) -> list:
    """Fisher-Yates driven by splitmix64 with rejection sampling, as documented."""
    state = {"x": seed}

    def draw() -> int:
        state["x"] = (state["x"] + 0x9E3779B97F4A7C15) % 2**64
        z = state["x"]
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)

    out = list(items)
    i = len(out) - 1
    while i >= 1:
        n = i + 1
        d = draw()
        while d >= 2**64 - (2**64 % n):
            d = draw()
        j = d % n
        out[i], out[j] = out[j], out[i]
        i -= 1
    return out


# The first draws for seed 0 (they also match the published SplitMix64 reference output).
SPLITMIX64_SEED0 = [
    0xE220A8397B1DCDAF,
    0x6E789E6AA1B965F4,
    0x06C45D188009454F,
    0xF88BB8A8724C81EC,
    0x1B39896A51A8749B,
]


def test_splitmix64_golden_seed0() -> None:
    stream = splitmix64(0)
    got = [next(stream) for _ in range(5)]
    assert got == reference_splitmix64(0, 5)
    assert got == SPLITMIX64_SEED0


@pytest.mark.parametrize("seed", [0, 1, 7, 12345, 2**63, 2**64 - 1])
def test_splitmix64_matches_documented_algorithm(seed: int) -> None:
    stream = splitmix64(seed)
    got = [next(stream) for _ in range(50)]
    assert got == reference_splitmix64(seed, 50)
    assert all(0 <= d <= MASK for d in got)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
@pytest.mark.parametrize("seed", [0, 1, 7, 99, 2**64 - 1])
def test_deck_order_matches_documented_shuffle(variant: str, seed: int) -> None:
    assert deck_order(variant, seed) == reference_shuffle(canonical_deck(variant), seed)


def test_shuffle_leaves_input_alone() -> None:
    items = list(range(30))
    out = shuffled(items, 5)
    assert items == list(range(30))
    assert sorted(out) == items and out != items


@pytest.mark.parametrize("bad", [-1, 2**64, 2**70, True, 1.0, "7", None])
def test_bad_seed_is_bad_position(bad: object) -> None:
    with pytest.raises(BadPositionError) as exc:
        deck_order("bristol", bad)  # type: ignore[arg-type]
    assert exc.value.code == "bad_position"
    with pytest.raises(BadPositionError):
        new_position("mod3", seed=bad)  # type: ignore[arg-type]


def test_seed_limit() -> None:
    assert SEED_LIMIT == 2**64
    assert len(deck_order("bristol", SEED_LIMIT - 1)) == 52


# -- golden deck orders --------------------------------------------------------------------

# variant -> seed -> (first ten cards dealt, sha256 of ",".join(whole order)).
# Variants with the same deck share the order of a seed (the seed only orders the deck).
_BRISTOL_DECK = {
    0: (
        ["8S", "JH", "9C", "2S", "2D", "QD", "6S", "TC", "3D", "AC"],
        "e1ffa3d3001f2fcf4adb578600c27aee82fe123aa6238633cd4dd571ae3e349d",
    ),
    1: (
        ["7D", "9C", "4D", "8H", "8D", "5S", "JD", "6D", "9S", "JC"],
        "ef0ea5579c9009b6d265ec921b05d6282f3c565545fbdd8109f0269aa263aa76",
    ),
    7: (
        ["4D", "5C", "JH", "3S", "4H", "TH", "KS", "6D", "4S", "7H"],
        "c6c394af3b01fd4641c82a2b8d530cd6921ae509eacf564d8bb3e6b5b2bb771d",
    ),
    2**64 - 1: (
        ["JC", "KS", "7S", "4C", "AD", "JH", "5D", "2H", "AH", "7D"],
        "c4ff80713378049f0b050c077472cd068e086108ff9b5143b641e48b95884adb",
    ),
}
_TWO_DECKS = {
    0: (
        ["3D", "8S", "JC", "6C", "4D", "2H", "TC", "7D", "AH", "8D"],
        "23309fab4ff775916de1715a62bc6cd1b87b706c4132deedc7c129083a20b720",
    ),
    1: (
        ["6H", "7H", "JC", "8C", "KS", "7D", "6S", "8C", "6C", "9C"],
        "a92b5acffa44beb7a79ab7a522ab4586b84ec048683d802d7488fef56b7da71a",
    ),
    7: (
        ["9C", "2S", "AC", "KD", "4S", "KS", "8S", "4D", "TS", "8S"],
        "ea45043127f627b1c71b1dec68d7ebf49cda9858d685e1a5a4eb07c71fb56598",
    ),
    2**64 - 1: (
        ["9H", "3C", "9C", "AC", "6D", "TS", "2S", "QC", "KH", "6D"],
        "32f38b2961c23aff8c8be7a34a21cac386addf3aba9f1e71e9ec14cd736004e9",
    ),
}
_ROYAL_PARADE = {
    0: (
        ["9D", "QD", "8D", "TS", "4S", "7D", "7H", "6H", "4S", "4H"],
        "6b57d08217048eb838a7bc844466c937384e2f0aa7ef483c25209d890c6155f3",
    ),
    1: (
        ["6H", "5D", "9D", "4H", "8D", "9H", "QH", "8S", "6H", "6D"],
        "1986e491e179026e8722096346791cef0e6b08443d1021eb96a9c08bdb5a9b53",
    ),
    7: (
        ["7C", "6D", "9S", "3C", "7C", "2D", "5H", "2S", "KD", "TD"],
        "1af74062732e8e5f92ecef317cbe47ee655146f335caf1c61891e4c485318371",
    ),
    2**64 - 1: (
        ["8C", "8D", "2D", "6D", "7H", "4H", "2C", "JH", "5H", "QD"],
        "d07aad2c948c3a1c3f1145791d89db5ab58adb3e6b499f8eacf44d64fc42d810",
    ),
}
GOLDEN = {
    "bristol": _BRISTOL_DECK,
    "belvedere": _BRISTOL_DECK,
    "picture-gallery": _TWO_DECKS,
    "picture-gallery-reversed": _TWO_DECKS,
    "mod3": _TWO_DECKS,
    "royal-parade": _ROYAL_PARADE,
}


@pytest.mark.parametrize(
    ("variant", "seed"), [(v, s) for v, by_seed in GOLDEN.items() for s in by_seed]
)
def test_golden_deck_orders(variant: str, seed: int) -> None:
    head, digest = GOLDEN[variant][seed]
    order = deck_order(variant, seed)
    assert order[:10] == head
    assert hashlib.sha256(",".join(order).encode()).hexdigest() == digest
    assert Counter(order) == Counter(canonical_deck(variant))
    # The seeded position is the deal of exactly that order.
    assert new_position(variant, seed=seed) == new_position(variant, deck=order)


def test_golden_tables_cover_every_variant() -> None:
    assert set(GOLDEN) == set(ALL_VARIANTS)
