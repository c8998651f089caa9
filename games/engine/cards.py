"""Cards as small integers, and their two-character text codes.

A card is ``rank * 4 + suit`` with rank 1 (Ace) .. 13 (King) and suit 0..3 for
C, D, H, S. Integers keep the hot paths (move generation, the solver) cheap:
:func:`rank` and :func:`suit` read a card, and the card ``n`` ranks higher in the
same suit is ``card + n * RANK_STEP``.

>>> c = card_of(10, SUITS.index("H"))
>>> card_text(c), rank(c), SUITS[suit(c)], card_text(c + 3 * RANK_STEP)
('TH', 10, 'H', 'KH')
>>> all(RANK[c] == rank(c) for c in range(len(RANK)))
True
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import BadNotationError

RANKS = "A23456789TJQK"
SUITS = "CDHS"
ACE, KING = 1, 13

Card = int
#: Difference between the codes of two cards of one suit and consecutive ranks.
RANK_STEP = 4


def card_of(rank: int, suit: int) -> Card:
    """The card of a rank 1..13 and a suit index 0..3."""
    return rank * RANK_STEP + suit


_CODES: dict[str, Card] = {
    r + s: card_of(ri + 1, suit_index)
    for ri, r in enumerate(RANKS)
    for suit_index, s in enumerate(SUITS)
}
_TEXT: dict[Card, str] = {v: k for k, v in _CODES.items()}


def rank(card: Card) -> int:
    """Rank 1..13 of a card."""
    return card >> 2


#: ``RANK[card] == rank(card)`` for every card: the move generators' loops index this
#: table, which costs less than a call there (bench/engine.py).
RANK: tuple[int, ...] = tuple(rank(c) for c in range(card_of(KING + 1, 0)))


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


def cards_text(cards: Sequence[Card]) -> list[str]:
    """Codes of a sequence of cards, in the same order."""
    return [_TEXT[c] for c in cards]


def standard_deck(*, decks: int = 1, aces: bool = True) -> list[Card]:
    """The canonical unshuffled order: per deck, suits C D H S, each Ace to King."""
    one = [
        card_of(r, s) for s in range(len(SUITS)) for r in range(ACE, KING + 1) if aces or r != ACE
    ]
    return one * decks
