"""A second proof that a position is lost: exhaustive search on the engine's own rules.

The solver answers "lost" when its search runs out of states, and what it skips rests
on pruning rules (symmetries, safe moves, dead ends, a relaxed game), each argued sound
in its docstring. One of them was once found unsound. This module checks a "lost"
verdict in a way that shares nothing with that search: it walks every position
reachable by the engine's legal moves (:attr:`Position.legal_moves`,
:meth:`Position.apply`), the stock's order included, skipping only exact duplicates
(the same piles, whatever the move count). No rule of the solver is used, not even its
card encoding or its move generator. If no won position is reachable, the loss is
confirmed; if one is, the solver was wrong and the winning line shows it.

In the Bristol family "the same" is read up to the game's own symmetries, which are
exact (each maps the legal moves of a position one to one onto those of its image, and
won positions onto won ones), not pruning: suits never matter there (a card goes on any
card one rank higher, home on any foundation one rank lower), so the key holds ranks
only; the eight fans obey identical rules and the stock never reaches them, so their
order does not matter; a foundation matters only by its height; and once the stock is
empty the three reserves are interchangeable too. Without these a Bristol deal's
positions run into many times more: every arrangement of the fans is a new one.

The price is size: without pruning, the positions of a hard deal run into millions.
``max_states`` bounds the table of positions seen (and so the memory); a proof that
reaches it is ``undecided``, neither confirming nor contradicting.

>>> from games.engine import new_position
>>> from games.engine.solver.proof import prove_lost
>>> proof = prove_lost(new_position("royal-parade", seed=1))   # the solver: lost
>>> proof.outcome.value, proof.states
('confirmed', 9)
>>> deal = new_position("bristol", seed=2)                      # the solver: won
>>> proof = prove_lost(deal)
>>> proof.outcome.value, deal.play(proof.line).is_won
('contradicted', True)
>>> prove_lost(new_position("picture-gallery", seed=3), max_states=1_000).outcome.value
'undecided'
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from .. import bristol
from ..cards import RANK
from ..position import Position
from ..variants import Family

__all__ = ["LossProof", "Proof", "prove_lost"]

#: Positions a proof may keep by default: about a minute and a few GB at the most.
DEFAULT_MAX_STATES = 2_000_000


class Proof(StrEnum):
    """What the exhaustive search found."""

    #: No won position is reachable: the position is lost.
    CONFIRMED = "confirmed"
    #: A won position is reachable (``line`` reaches it): a "lost" verdict was wrong.
    CONTRADICTED = "contradicted"
    #: The state limit came first.
    UNDECIDED = "undecided"


@dataclass(frozen=True, slots=True)
class LossProof:
    """The answer for one position: the outcome, the distinct positions visited, and a
    winning line in the spec's notation when the outcome is ``contradicted``."""

    outcome: Proof
    states: int
    line: tuple[str, ...] = ()


def prove_lost(position: Position, *, max_states: int = DEFAULT_MAX_STATES) -> LossProof:
    """Search every position reachable from ``position`` for a won one (depth first).

    Depth first keeps the current line on the stack, so a win found is returned with
    its moves without a table of parents; the table of seen keys is the only memory
    that grows, and ``max_states`` bounds it.
    """
    if position.is_won:
        return LossProof(Proof.CONTRADICTED, 1)
    key = _key_of(position)
    seen = {key(position)}
    stack = [_children(position)]
    line: list[str] = []  # line[i] led from the position of stack[i] to that of stack[i + 1]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            if line:
                line.pop()
            continue
        move, child = step
        k = key(child)
        if k in seen:
            continue
        if child.is_won:
            return LossProof(Proof.CONTRADICTED, len(seen) + 1, (*line, move))
        if len(seen) >= max_states:
            return LossProof(Proof.UNDECIDED, len(seen))
        seen.add(k)
        stack.append(_children(child))
        line.append(move)
    return LossProof(Proof.CONFIRMED, len(seen))


def _key_of(position: Position) -> Callable[[Position], Hashable]:
    """The duplicate key for positions of ``position``'s family (see the module
    docstring): the piles themselves, or in the Bristol family the piles up to the
    game's symmetries."""
    if position.variant.family is Family.BRISTOL:
        return _bristol_key
    return _piles


def _piles(position: Position) -> Hashable:
    return position.piles


#: Card code -> rank, for ``bytes.translate`` (card codes are small ints).
_RANK_OF = bytes(RANK) + bytes(256 - len(RANK))
_FANS = slice(bristol.FANS.start, bristol.FANS.stop)
_RESERVES = slice(bristol.RESERVES.start, bristol.RESERVES.stop)
_FOUNDATIONS = slice(bristol.FOUNDATIONS.start, bristol.FOUNDATIONS.stop)


def _bristol_key(position: Position) -> Hashable:
    """Ranks only, the fans as a sorted tuple, the foundations by their sorted heights,
    and the reserves sorted too once the stock is empty."""
    piles = position.piles
    ranks = [bytes(p).translate(_RANK_OF) for p in piles]
    stock = ranks[bristol.STOCK]
    reserves = ranks[_RESERVES]
    if not stock:
        reserves.sort()
    heights = sorted(len(p) for p in piles[_FOUNDATIONS])
    return (tuple(sorted(ranks[_FANS])), tuple(reserves), tuple(heights), stock)


def _children(position: Position) -> Iterator[tuple[str, Position]]:
    """The positions one legal move away, most cards home first.

    The order only makes a win, where there is one, come sooner; every child is visited
    before the search gives up, so it cannot change a confirmed loss.
    """
    children = [(str(move), position.apply(move)) for move in position.legal_moves]
    children.sort(key=lambda step: -step[1].score)
    return iter(children)
