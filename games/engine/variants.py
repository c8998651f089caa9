"""The six variants, each a frozen set of rule options, and their registry.

Options rather than subclasses: the engine branches on options only, so options
can be combined into new variants without new code paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .cards import Card, standard_deck
from .errors import UnknownVariantError


class Family(StrEnum):
    """Layout family: decides the piles and the building rules."""

    BRISTOL = "bristol"
    GALLERY = "gallery"


@dataclass(frozen=True, slots=True)
class Variant:
    """A named combination of rule options.

    - ``decks``: number of 52-card decks shuffled together.
    - ``aces_removed``: the Aces are taken out before the shuffle (Royal Parade).
    - ``first_ace_on_foundation``: the first Ace of the deck order starts ``f1`` (Belvedere).
    - ``refill_reserves``: a reserve emptied by a move takes the stock's top card at once.
    - ``reserves_open_anytime``: any free card may go onto an empty reserve even while
      the stock holds cards (otherwise only once the stock is empty).
    - ``reversible_last_row``: the last row may be dealt right to left (``deal-reverse``).
    """

    key: str
    name: str
    family: Family
    decks: int = 1
    aces_removed: bool = False
    first_ace_on_foundation: bool = False
    refill_reserves: bool = False
    reserves_open_anytime: bool = False
    reversible_last_row: bool = False

    def deck(self) -> list[Card]:
        """The canonical unshuffled deck of this variant."""
        return standard_deck(decks=self.decks, aces=not self.aces_removed)

    @property
    def card_count(self) -> int:
        """Number of cards in play; also the score of a won game."""
        return self.decks * (48 if self.aces_removed else 52)

    def __str__(self) -> str:
        return self.key


BRISTOL = Variant("bristol", "Bristol", Family.BRISTOL)
BELVEDERE = Variant("belvedere", "Belvedere", Family.BRISTOL, first_ace_on_foundation=True)
PICTURE_GALLERY = Variant(
    "picture-gallery", "Picture Gallery", Family.GALLERY, decks=2, refill_reserves=True
)
ROYAL_PARADE = Variant("royal-parade", "Royal Parade", Family.GALLERY, decks=2, aces_removed=True)
PICTURE_GALLERY_REVERSED = Variant(
    "picture-gallery-reversed",
    "Picture Gallery, last row reversed",
    Family.GALLERY,
    decks=2,
    refill_reserves=True,
    reversible_last_row=True,
)
MOD3 = Variant("mod3", "Mod3", Family.GALLERY, decks=2, reserves_open_anytime=True)

VARIANTS: dict[str, Variant] = {
    v.key: v
    for v in (BRISTOL, BELVEDERE, PICTURE_GALLERY, ROYAL_PARADE, PICTURE_GALLERY_REVERSED, MOD3)
}


def get_variant(key: str | Variant) -> Variant:
    """The variant for a key (a :class:`Variant` passes through)."""
    if isinstance(key, Variant):
        return key
    try:
        return VARIANTS[key]
    except (KeyError, TypeError):
        known = ", ".join(VARIANTS)
        raise UnknownVariantError(f"unknown variant {key!r}; known: {known}") from None
