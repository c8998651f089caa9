"""Cards as small integers, and their two-character text codes.

A card is ``rank * 4 + suit`` with rank 1 (Ace) .. 13 (King) and suit 0..3 for
C, D, H, S. Integers keep the hot paths (move generation, the solver) cheap:
``card >> 2`` is the rank, ``card & 3`` the suit, and the card three ranks higher
in the same suit is ``card + 12``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .errors import BadNotationError

RANKS = "A23456789TJQK"
SUITS = "CDHS"
ACE, JACK, QUEEN, KING = 1, 11, 12, 13

Card = int

_CODES: dict[str, Card] = {
    r + s: (ri + 1) * 4 + si for ri, r in enumerate(RANKS) for si, s in enumerate(SUITS)
}
_TEXT: dict[Card, str] = {v: k for k, v in _CODES.items()}


def rank(card: Card) -> int:
    """Rank 1..13 of a card."""
    return card >> 2


def suit(card: Card) -> int:
    """Suit index 0..3 (C, D, H, S) of a card."""
    return card & 3


def parse_card(code: str) -> Card:
    """Card from its code such as ``"TH"``; raises :class:`BadNotationError`."""
    try:
        return _CODES[code]
    except (KeyError, TypeError):
        raise BadNotationError(
            f"{code!r} is not a card code (rank A23456789TJQK then suit CDHS, e.g. 'TH')"
        ) from None


def card_text(card: Card) -> str:
    """Two-character code of a card."""
    return _TEXT[card]


def parse_cards(codes: Iterable[str]) -> tuple[Card, ...]:
    """Cards from a sequence of codes."""
    return tuple(parse_card(c) for c in codes)


def cards_text(cards: Sequence[Card]) -> list[str]:
    """Codes of a sequence of cards, in the same order."""
    return [_TEXT[c] for c in cards]


def standard_deck(*, decks: int = 1, aces: bool = True) -> list[Card]:
    """The canonical unshuffled order: per deck, suits C D H S, each Ace to King."""
    one = [r * 4 + s for s in range(4) for r in range(1, 14) if aces or r != ACE]
    return one * decks
