"""Bristol family rules (Bristol, Belvedere).

Layout: fans ``t1``-``t8`` (indices 0-7), reserves ``r1``-``r3`` (8-10),
foundations ``f1``-``f4`` (11-14), stock ``s`` (15). Building is by rank only:
down by one on a fan, up by one on a foundation. Moves onto a foundation are
written ``f``; the card goes to the leftmost foundation that takes it.
"""

from __future__ import annotations

from typing import ClassVar

from .cards import ACE, KING, RANK, Card, card_text, rank
from .errors import BadPositionError
from .moves import DEAL, Move
from .position import (
    DEAL_INDEX,
    DEAL_REVERSE_INDEX,
    TO_FOUNDATION,
    Piles,
    Position,
)
from .variants import Family, Variant

FANS = range(0, 8)
RESERVES = range(8, 11)
FOUNDATIONS = range(11, 15)
#: The piles cards leave from: the fans and the reserves.
SOURCES = range(FANS.start, RESERVES.stop)
STOCK = 15
#: Cards dealt to each fan at the start.
FAN_SIZE = 3
_FOUNDATION_PILES = slice(FOUNDATIONS.start, FOUNDATIONS.stop)
_F1, _F2, _F3, _F4 = FOUNDATIONS


class BristolPosition(Position):
    """A position of the Bristol family."""

    __slots__ = ()

    FAMILY = Family.BRISTOL
    PILE_IDS: ClassVar[tuple[str, ...]] = (
        *(f"t{n}" for n in range(1, len(FANS) + 1)),
        *(f"r{n}" for n in range(1, len(RESERVES) + 1)),
        *(f"f{n}" for n in range(1, len(FOUNDATIONS) + 1)),
        "s",
    )
    EXTRA_DESTINATIONS: ClassVar[dict[str, int]] = {"f": TO_FOUNDATION}
    #: A card goes home as ``f``: the foundations are never named as destinations.
    NOT_DESTINATIONS: ClassVar[frozenset[str]] = frozenset(PILE_IDS[_FOUNDATION_PILES])

    @classmethod
    def _deal(cls, variant: Variant, deck: list[Card]) -> Piles:
        cards = list(deck)
        found: list[tuple[Card, ...]] = [(), (), (), ()]
        if variant.first_ace_on_foundation:
            ace = next(c for c in cards if rank(c) == ACE)
            cards.remove(ace)
            found[0] = (ace,)
        fans = []
        for i in FANS:
            fan = cards[FAN_SIZE * i : FAN_SIZE * (i + 1)]
            # Kings to the bottom: a stable partition, Kings first.
            fans.append(
                tuple([c for c in fan if rank(c) == KING] + [c for c in fan if rank(c) != KING])
            )
        dealt = FAN_SIZE * len(FANS)
        reserves = [(c,) for c in cards[dealt : dealt + len(RESERVES)]]
        stock = tuple(reversed(cards[dealt + len(RESERVES) :]))
        return (*fans, *reserves, *found, stock)

    def _foundation_for(self, card: Card) -> int | None:
        """Index of the leftmost foundation that takes ``card``, if any."""
        need = rank(card) - 1
        piles = self.piles
        for fi in FOUNDATIONS:
            f = piles[fi]
            if (rank(f[-1]) if f else 0) == need:
                return fi
        return None

    def _generate(self) -> list[Move]:
        piles = self.piles
        out: list[Move] = []
        rank_of = RANK
        needs = {rank_of[f[-1]] + 1 if f else ACE for f in piles[_FOUNDATION_PILES]}
        fans_by_top: dict[int, list[int]] = {}
        for i in FANS:
            p = piles[i]
            if p:
                fans_by_top.setdefault(rank_of[p[-1]], []).append(i)
        table = _MOVES
        for si in SOURCES:
            p = piles[si]
            if not p:
                continue
            r = rank_of[p[-1]]
            row = table[si]
            for di in fans_by_top.get(r + 1, ()):
                if di != si:
                    out.append(row[di])
            if r in needs:
                out.append(row[-1])
        if piles[STOCK]:
            out.append(DEAL)
        return out

    def _why_illegal(self, si: int, di: int) -> str | None:
        piles = self.piles
        if si == DEAL_INDEX:
            return None if piles[STOCK] else "the stock is empty"
        if si == DEAL_REVERSE_INDEX:
            return "deal-reverse is not part of Bristol"
        if si >= FOUNDATIONS.start:
            return f"cards never leave the {'stock that way' if si == STOCK else 'foundations'}"
        src = piles[si]
        if not src:
            return f"{self.PILE_IDS[si]} is empty"
        card = src[-1]
        if di == TO_FOUNDATION:
            if self._foundation_for(card) is None:
                return f"no foundation takes {card_text(card)}"
            return None
        if di >= RESERVES.start:
            return "nothing is moved onto a reserve, a foundation or the stock"
        if di == si:
            return "source and destination are the same pile"
        dst = piles[di]
        if not dst:
            return f"{self.PILE_IDS[di]} is empty, and an emptied fan stays empty"
        if rank(dst[-1]) != rank(card) + 1:
            return (
                f"{card_text(card)} goes only on a card one rank higher, not {card_text(dst[-1])}"
            )
        return None

    def _after(self, si: int, di: int) -> Piles:
        piles = list(self.piles)
        if si == DEAL_INDEX:
            stock = piles[STOCK]
            n = min(len(RESERVES), len(stock))
            for k, ri in zip(range(n), RESERVES, strict=False):
                piles[ri] = (*piles[ri], stock[-1 - k])
            piles[STOCK] = stock[:-n]
            return tuple(piles)
        card = piles[si][-1]
        if di == TO_FOUNDATION:
            home = self._foundation_for(card)
            assert home is not None, "a legal move home has a foundation"
            di = home
        piles[si] = piles[si][:-1]
        piles[di] = (*piles[di], card)
        return tuple(piles)

    @property
    def score(self) -> int:
        """Cards on the foundations."""
        p = self.piles
        return len(p[_F1]) + len(p[_F2]) + len(p[_F3]) + len(p[_F4])

    def _validate(self) -> None:
        for fi in FOUNDATIONS:
            ranks = [rank(c) for c in self.piles[fi]]
            if ranks != list(range(1, len(ranks) + 1)):
                raise BadPositionError(f"{self.PILE_IDS[fi]} must run from Ace upward by one rank")
        if self.variant.first_ace_on_foundation and not self.piles[FOUNDATIONS[0]]:
            raise BadPositionError("in belvedere f1 always holds the first Ace")


def _move_rows() -> list[list[Move]]:
    """``_MOVES[si][di]`` is the Move object for source ``si`` to fan ``di`` (-1: ``f``)."""
    ids = BristolPosition.PILE_IDS
    rows = []
    for si in SOURCES:
        row = [Move(ids[si], ids[di]) for di in FANS]
        row.append(Move(ids[si], "f"))
        rows.append(row)
    return rows


_MOVES = _move_rows()
