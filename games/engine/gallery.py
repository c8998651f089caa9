"""Picture Gallery family rules (Picture Gallery, Royal Parade, last row reversed, Mod3).

Layout: slots ``g1``-``g24`` (indices 0-23; rows of eight starting with 2, 3
and 4), reserves ``r1``-``r8`` (24-31), ace pile ``a`` (32), stock ``s`` (33).
A slot is built in its start card's suit in steps of three ranks
(2-5-8-J, 3-6-9-Q, 4-7-10-K); with the card encoding, the card that goes on
``top`` is simply ``top + BUILD_STEP``.
"""

from __future__ import annotations

from typing import ClassVar

from .cards import ACE, RANK, RANK_STEP, Card, card_text, rank
from .errors import BadPositionError
from .moves import DEAL, DEAL_REVERSE, Move
from .position import DEAL_INDEX, DEAL_REVERSE_INDEX, Piles, Position
from .variants import Family, Variant

SLOTS = range(0, 24)
RESERVES = range(24, 32)
#: The piles cards leave from: the slots and the reserves.
SOURCES = range(SLOTS.start, RESERVES.stop)
ACE_PILE = 32
STOCK = 33
#: Slots in each row of the layout.
ROW = 8
#: The start cards' ranks, one per row.
START_RANKS = (2, 3, 4)
_ROW1_START, _ROW2_START, _LAST_START = START_RANKS
#: Start rank of each slot's row: 2 for g1-g8, 3 for g9-g16, 4 for g17-g24.
ROW_START: tuple[int, ...] = tuple(START_RANKS[i // ROW] for i in SLOTS)
#: Cards left in the stock when the last row is dealt (``deal-reverse`` may deal it).
LAST_ROW = len(RESERVES)
#: Cards a slot holds once complete (its start card and three more).
SLOT_SIZE = 4
#: Code difference between a card and the next one a slot takes (same suit, three ranks up).
BUILD_STEP = 3 * RANK_STEP
_RESERVE_PILES = slice(RESERVES.start, RESERVES.stop)


class GalleryPosition(Position):
    """A position of the Picture Gallery family."""

    __slots__ = ()

    FAMILY = Family.GALLERY
    PILE_IDS: ClassVar[tuple[str, ...]] = (
        *(f"g{n}" for n in range(1, len(SLOTS) + 1)),
        *(f"r{n}" for n in range(1, len(RESERVES) + 1)),
        "a",
        "s",
    )

    @classmethod
    def _deal(cls, variant: Variant, deck: list[Card]) -> Piles:
        slots = [(c,) for c in deck[: len(SLOTS)]]
        reserves = [(c,) for c in deck[_RESERVE_PILES]]
        return (*slots, *reserves, (), tuple(reversed(deck[RESERVES.stop :])))

    def _reserves_open(self) -> bool:
        """Whether a free card may go onto an empty reserve now."""
        return self.variant.reserves_open_anytime or not self.piles[STOCK]

    def _generate(self) -> list[Move]:
        piles = self.piles
        out: list[Move] = []
        empty_for_start: dict[int, list[int]] = {_ROW1_START: [], _ROW2_START: [], _LAST_START: []}
        wanted: dict[Card, list[int]] = {}
        rank_of = RANK
        for di in SLOTS:
            p = piles[di]
            if not p:
                empty_for_start[ROW_START[di]].append(di)
            elif rank_of[p[0]] == ROW_START[di] and len(p) < SLOT_SIZE:
                wanted.setdefault(p[-1] + BUILD_STEP, []).append(di)
        open_reserves = [di for di in RESERVES if not piles[di]] if self._reserves_open() else []
        table = _MOVES
        for si in SOURCES:
            p = piles[si]
            if not p:
                continue
            c = p[-1]
            r = rank_of[c]
            row = table[si]
            if r == ACE:
                out.append(row[ACE_PILE])
                continue
            # A card is either a start card (2-4) or a building card (5-K), never both,
            # so each source's destinations come out in pile order.
            for di in empty_for_start[r] if r <= _LAST_START else wanted.get(c, ()):
                out.append(row[di])
            for di in open_reserves:
                if di != si:
                    out.append(row[di])
        stock = len(piles[STOCK])
        if stock:
            out.append(DEAL)
            if self.variant.reversible_last_row and stock <= LAST_ROW:
                out.append(DEAL_REVERSE)
        return out

    def _why_illegal(self, si: int, di: int) -> str | None:
        piles = self.piles
        if si < 0:
            return self._why_deal_illegal(si)
        if si >= ACE_PILE:
            return "cards never leave the ace pile or the stock that way"
        src = piles[si]
        if not src:
            return f"{self.PILE_IDS[si]} is empty"
        c = src[-1]
        if di == si:
            return "source and destination are the same pile"
        if rank(c) == ACE:
            return None if di == ACE_PILE else "an Ace goes only to the ace pile"
        if di == ACE_PILE:
            return "only Aces go to the ace pile"
        if di == STOCK:
            return "nothing is moved onto the stock"
        return self._why_not_onto(c, di)

    def _why_deal_illegal(self, si: int) -> str | None:
        """Why a deal (``si`` is DEAL_INDEX or DEAL_REVERSE_INDEX) is illegal, if it is."""
        stock = len(self.piles[STOCK])
        if si == DEAL_INDEX:
            return None if stock else "the stock is empty"
        if not self.variant.reversible_last_row:
            return f"deal-reverse is not part of {self.variant.key}"
        if not stock:
            return "the stock is empty"
        if stock > LAST_ROW:
            return f"deal-reverse only deals the last row (the stock holds {stock} cards)"
        return None

    def _why_not_onto(self, c: Card, di: int) -> str | None:
        """Why card ``c`` (no Ace) may not go onto reserve or slot ``di``, if it may not."""
        dst = self.piles[di]
        if di >= RESERVES.start:
            if dst:
                return "nothing is built on a reserve"
            if not self._reserves_open():
                return "an empty reserve takes a card only once the stock is empty"
            return None
        start = ROW_START[di]
        if not dst:
            if rank(c) != start:
                return f"an empty slot of this row takes only a {start}, not {card_text(c)}"
            return None
        if rank(dst[0]) != start:
            return f"nothing is built on {self.PILE_IDS[di]}: its bottom card is not a {start}"
        if c != dst[-1] + BUILD_STEP:
            return (
                f"{card_text(c)} does not go on {card_text(dst[-1])} "
                "(same suit, three ranks higher)"
            )
        return None

    def _after(self, si: int, di: int) -> Piles:
        piles = list(self.piles)
        if si < 0:
            stock = piles[STOCK]
            n = min(LAST_ROW, len(stock))
            reverse = si == DEAL_REVERSE_INDEX
            for k in range(n):
                ri = RESERVES[-1 - k] if reverse else RESERVES[k]
                piles[ri] = (*piles[ri], stock[-1 - k])
            piles[STOCK] = stock[:-n]
            return tuple(piles)
        card = piles[si][-1]
        piles[si] = piles[si][:-1]
        piles[di] = (*piles[di], card)
        if si >= RESERVES.start and not piles[si] and self.variant.refill_reserves and piles[STOCK]:
            piles[si] = (piles[STOCK][-1],)
            piles[STOCK] = piles[STOCK][:-1]
        return tuple(piles)

    @property
    def score(self) -> int:
        """Aces on the ace pile plus the cards of slots built on their row's start card."""
        piles = self.piles
        total = len(piles[ACE_PILE])
        rank_of = RANK
        for di in SLOTS:
            p = piles[di]
            if p and rank_of[p[0]] == ROW_START[di]:
                total += len(p)
        return total

    @property
    def is_won(self) -> bool:
        """All slots complete and all Aces out (only possible once the stock is empty)."""
        piles = self.piles
        return (
            not piles[STOCK]
            and not any(piles[_RESERVE_PILES])
            and self.score == self.variant.card_count
        )

    def _validate(self) -> None:
        piles = self.piles
        if any(rank(c) != ACE for c in piles[ACE_PILE]):
            raise BadPositionError("the ace pile holds only Aces")
        for di in SLOTS:
            p = piles[di]
            if len(p) <= 1:
                continue
            if rank(p[0]) != ROW_START[di] or any(
                b != a + BUILD_STEP for a, b in zip(p, p[1:], strict=False)
            ):
                raise BadPositionError(
                    f"{self.PILE_IDS[di]} must be built from a {ROW_START[di]} "
                    "in one suit, three ranks at a time"
                )
        if self.variant.refill_reserves and piles[STOCK] and any(not piles[ri] for ri in RESERVES):
            raise BadPositionError(
                f"in {self.variant.key} an emptied reserve is refilled while the stock lasts"
            )


def _move_rows() -> list[list[Move]]:
    """``_MOVES[si][di]`` is the Move object from source ``si`` to pile ``di``."""
    ids = GalleryPosition.PILE_IDS
    return [[Move(ids[si], ids[di]) for di in range(ACE_PILE + 1)] for si in SOURCES]


_MOVES = _move_rows()
