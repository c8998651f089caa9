"""The six variants of the spec: keys, families, rule options, decks."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from games.engine import (
    VARIANTS,
    BristolPosition,
    Family,
    GalleryPosition,
    UnknownVariantError,
    Variant,
    get_variant,
    new_position,
)
from games.engine.cards import rank
from tests.engine.helpers import ALL_VARIANTS


def test_exactly_the_six_variants() -> None:
    assert set(VARIANTS) == {
        "bristol",
        "belvedere",
        "picture-gallery",
        "royal-parade",
        "picture-gallery-reversed",
        "mod3",
    }
    for key, v in VARIANTS.items():
        assert v.key == key == str(v)
        assert get_variant(key) is v
        assert get_variant(v) is v


# key: (family, decks, aces_removed, first_ace_on_foundation, refill, open anytime, reversible)
OPTIONS = {
    "bristol": (Family.BRISTOL, 1, False, False, False, False, False),
    "belvedere": (Family.BRISTOL, 1, False, True, False, False, False),
    "picture-gallery": (Family.GALLERY, 2, False, False, True, False, False),
    "royal-parade": (Family.GALLERY, 2, True, False, False, False, False),
    "picture-gallery-reversed": (Family.GALLERY, 2, False, False, True, False, True),
    "mod3": (Family.GALLERY, 2, False, False, False, True, False),
}


@pytest.mark.parametrize("key", ALL_VARIANTS)
def test_variant_options(key: str) -> None:
    v = get_variant(key)
    assert (
        v.family,
        v.decks,
        v.aces_removed,
        v.first_ace_on_foundation,
        v.refill_reserves,
        v.reserves_open_anytime,
        v.reversible_last_row,
    ) == OPTIONS[key]


@pytest.mark.parametrize("key", ALL_VARIANTS)
def test_variant_is_frozen(key: str) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        get_variant(key).refill_reserves = True  # type: ignore[misc]
    assert hash(get_variant(key)) == hash(get_variant(key))


@pytest.mark.parametrize(
    ("key", "cards", "aces"),
    [
        ("bristol", 52, 4),
        ("belvedere", 52, 4),
        ("picture-gallery", 104, 8),
        ("royal-parade", 96, 0),
        ("picture-gallery-reversed", 104, 8),
        ("mod3", 104, 8),
    ],
)
def test_variant_decks(key: str, cards: int, aces: int) -> None:
    v = get_variant(key)
    deck = v.deck()
    assert len(deck) == v.card_count == cards
    assert sum(1 for c in deck if rank(c) == 1) == aces
    assert max(Counter(deck).values()) == v.decks


@pytest.mark.parametrize(
    ("key", "cls", "stock"),
    [
        ("bristol", BristolPosition, 25),
        ("belvedere", BristolPosition, 24),
        ("picture-gallery", GalleryPosition, 72),
        ("royal-parade", GalleryPosition, 64),
        ("picture-gallery-reversed", GalleryPosition, 72),
        ("mod3", GalleryPosition, 72),
    ],
)
def test_variant_starting_position(key: str, cls: type, stock: int) -> None:
    pos = new_position(key, seed=3)
    assert type(pos) is cls
    assert pos.stock_count == stock
    assert pos.ply == 0
    assert pos.status.value == "playing"


@pytest.mark.parametrize("bad", ["Bristol", "klondike", "", None, 3, "picture_gallery"])
def test_unknown_variant(bad: object) -> None:
    with pytest.raises(UnknownVariantError) as exc:
        get_variant(bad)  # type: ignore[arg-type]
    assert exc.value.code == "unknown_variant"
    with pytest.raises(UnknownVariantError):
        new_position(bad, seed=1)  # type: ignore[arg-type]


def test_options_combine_without_new_code() -> None:
    """A new combination of options plays with the existing code paths."""
    combo = Variant(
        "combo", "Combo", Family.GALLERY, decks=2, aces_removed=True, reversible_last_row=True
    )
    pos = new_position(combo, seed=5)
    assert pos.stock_count == 64
    assert len(pos.variant.deck()) == 96
