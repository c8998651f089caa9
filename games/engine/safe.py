"""Moves home that give nothing up, and the line that ends a game already won out.

A page may play :func:`safe_moves` for its player (the "cards home automatically"
setting) and offer :func:`finish_line` as one "Finish" click: both are ordinary
moves that a server checks like any other. Neither searches: each is a rule that
can be argued in the terms of ``shared/spec/rules-and-notation.md``.
"""

from __future__ import annotations

from .bristol import FOUNDATIONS, BristolPosition
from .bristol import SOURCES as BRISTOL_SOURCES
from .cards import ACE, RANK, rank
from .gallery import (
    ACE_PILE,
    RESERVES,
    ROW_START,
    SLOTS,
    STOCK,
    GalleryPosition,
)
from .moves import Move
from .position import Position

#: A Bristol foundation holds one rank each of Ace..King: four foundations, four of each rank.
_RANK_COPIES = len(FOUNDATIONS)


def safe_moves(position: Position) -> tuple[Move, ...]:
    """The legal moves home that no winning line can be worse for, in pile order.

    Bristol (a card of rank *r* to ``f``): safe when *r* is an Ace or all four
    cards of rank *r - 1* are already on the foundations. The argument: building is
    by rank only, any suit, and foundations are interchangeable, so a card's only use
    off the foundations is as the base a rank *r - 1* card is put on (a fan whose top
    is one rank higher). When every *r - 1* is home, nothing will ever be put on it,
    so the only move it can still make is home, and making it now only uncovers the
    card below. An Ace is the base of nothing (there is no rank 0).

    Gallery (an Ace to ``a``): an Ace's only legal move ever is to the ace pile, and
    nothing is ever put on an Ace (it is not a start card, not three ranks above any
    card, and a reserve holding it is not empty), so moving it only uncovers or
    empties its pile: every line of the old position can be played in the new one.
    The one exception is a reserve that the move empties while the stock still has
    cards in a refilling variant (``picture-gallery``, ``-reversed``): there the move
    also deals the stock's top card onto that reserve, which changes where the later
    deals fall; so that move is not safe. Building moves are never called safe here:
    with two decks, which copy goes on which slot, and what its source uncovers,
    are real choices.
    """
    if position.is_over:
        return ()
    legal = position.legal_moves
    if isinstance(position, BristolPosition):
        return tuple(m for m in legal if m.dst == "f" and _bristol_safe(position, m))
    if isinstance(position, GalleryPosition):
        return tuple(m for m in legal if m.dst == "a" and _gallery_ace_safe(position, m))
    return ()


def _bristol_safe(position: BristolPosition, move: Move) -> bool:
    card = position.piles[position._INDEX[move.src]][-1]
    r = rank(card)
    if r == ACE:
        return True
    home = sum(1 for fi in FOUNDATIONS if len(position.piles[fi]) >= r - 1)
    return home == _RANK_COPIES


def _gallery_ace_safe(position: GalleryPosition, move: Move) -> bool:
    si = position._INDEX[move.src]
    piles = position.piles
    refills = (
        si in RESERVES
        and len(piles[si]) == 1
        and position.variant.refill_reserves
        and bool(piles[STOCK])
    )
    return not refills


def finish_line(position: Position) -> tuple[Move, ...]:
    """The moves that win a game already won out, or ``()`` when it is not.

    Won out: the stock is empty and playing only moves home, in pile order, wins;
    no card is hidden and no choice is left to make. Home is a foundation in Bristol;
    in the Gallery it is the ace pile or a slot built on its row's start card (a move
    onto an empty slot of a start card counts, one out of a built slot does not), so
    every move raises the score by one and the line ends. A game that needs a move
    between fans, a deal or a choice between two copies of a card is not won out:
    the line stops short of the win and ``()`` is the answer.
    """
    if position.is_over or position.stock_count:
        return ()
    line: list[Move] = []
    pos = position
    while not pos.is_won:
        step = next((m for m in pos.legal_moves if _goes_home(pos, m)), None)
        if step is None:
            return ()
        line.append(step)
        pos = pos.apply(step)
    return tuple(line)


def _goes_home(position: Position, move: Move) -> bool:
    """Whether ``move`` puts a card home (and does not take one from home)."""
    if move.is_deal:
        return False
    if isinstance(position, BristolPosition):
        return move.dst == "f" and position._INDEX[move.src] in BRISTOL_SOURCES
    piles = position.piles
    si, di = position._INDEX[move.src], position._INDEX[move.dst]
    if di == ACE_PILE:
        return True
    return di in SLOTS and not _built(piles[si], si)


def _built(pile: tuple[int, ...], index: int) -> bool:
    """A gallery slot standing on its row's start card (its cards are home)."""
    return index in SLOTS and bool(pile) and RANK[pile[0]] == ROW_START[index]
