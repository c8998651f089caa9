"""Perfect-information solver for all six variants: won with a line, lost, or unknown.

The solver sees every card, the stock's order included, and decides whether a position
can still be won. It works from any position (a start or the middle of a game) and
answers with a :class:`SolveResult`: ``won`` with a winning line in the spec's move
notation (checked by replaying it through the engine before it is returned), ``lost``
when the whole search space was exhausted, or ``unknown`` when a limit (states and/or
seconds) stopped it first.

>>> from games.engine import new_position
>>> from games.engine.solver import solve
>>> pos = new_position("bristol", seed=7)
>>> result = solve(pos, max_nodes=100_000)
>>> result.verdict.value, pos.play(result.line).is_won
('won', True)

Deterministic answers need ``max_nodes`` (a count of generated states): a time limit
depends on the machine and its load. Pure standard library; no Django.

How it searches
===============

Best-first search over states with a table of visited *canonical* keys, so a state that
differs from a visited one only by a symmetry is not searched again, and cycles end.
The question is reachability of a won state, so the table is a plain visited set: when
the frontier runs out without a win, every visited state is lost, the root included.
Searches take turns in slices that double in size (iterative limits): a *greedy*
first pass that plays far more moves at once than is safe, and is therefore incomplete
(its wins are real, its failures mean nothing), and the complete search, whose rules
are all proven safe below, each with its share of slices a round (``SHARES``: Bristol
family 3 and 3, 2 for the second complete search of ``dig-score``, 1 for each
depth-first search of ``depth-first``, ``cautious-depth-first`` and
``deal-last-depth-first`` and ``home-last-depth-first``; Gallery family 1
and 2, 1 for each depth-first search where it runs, and 1 for the search of
``discrepancy-search``). Many won deals fall to the
greedy pass within a few hundred states; only a complete search can answer ``lost``.

The complete searches of a position walk one graph (the same rules, other orders), so
they share a table of states *proven lost* (``_search``): each depth-first search adds
every strongly connected component of the states it walked once it has left it without
a win (Tarjan's algorithm; a state that ``deal-early`` cut down counts the twin it leaves
its moves to as a successor), and every complete search skips the states in it. Sound
whichever search proved them, so each search keeps its guarantees, while the proof of a
lost position is shared instead of repeated by each search: Bristol 441, lost, took
391,316 states before and 251,813 with the table. The greedy pass plays other moves,
walks another graph, and has no part in it.

``dig-score`` (Bristol family)
    A second complete search takes turns with the greedy pass and the first complete
    search, under a score that also counts how deep the cards the foundations take next
    lie. The states a best-first search visits before a win depend a lot on its score,
    and no single score suits every deal (the one without depths wanders where nothing
    can go home; the one with them is misled on other deals). Both complete searches
    have the same rules, so either can answer ``lost``. A greedy pass under this score
    was tried as well and dropped: its share given to the plain greedy pass decides more
    deals in the same time. The Gallery family has no second score (none tried helped
    there). ``SHARES`` sets how many slices of states each search gets a round.

``depth-first``
    Two depth-first searches take turns with the others: each follows its first new
    child at once, so it plays a line on deep where a best-first search keeps weighing
    the alternatives of its whole frontier. Some deals that every score misleads fall to
    them within hundreds of states (Bristol 8586: won after about 300 states depth first,
    unknown after 400,000 best first; Royal Parade 54, 103 and 112 within 600). They
    differ in the choice between dealing and playing on: one tries the moves in the
    family's order (Bristol: cards home, reserve cards, the deal, fan cards; Gallery:
    Aces, builds, parks, the deal, unbuilds), the other deals first (Belvedere 5098 and
    Royal Parade 138 fall to it only). Both are complete under the same rules: every
    state they see is expanded before they give up, so either can answer ``lost``.
    In the Gallery family they run only in the variants without refills (Royal Parade,
    Mod3): in Picture Gallery and last row reversed they decided nothing more, and the
    states they take from the best-first searches left Picture Gallery 74 (won at
    612,000 states) unknown at 1,000,000. Shuffled move orders with restarts were tried
    on Royal Parade's hard deals and won none of them.

``cautious-depth-first`` (Bristol family)
    Two more depth-first searches, whose orders do not race the foundations: they send
    home first only the cards at most two ranks above the lowest foundation, then try
    cards onto fans (one the reserve cards first, the other the fan cards), then the
    other cards home, and the deal last. The orders of ``depth-first`` play every card
    home at once, drive two foundations to the King and leave a third stuck below a card
    it needs, and the best-first scores follow that too; some deals they leave unknown at
    400,000 states fall to these orders within a few thousand (Bristol 3223, 5028;
    Belvedere 3441, 4423 within 17,000). Complete under the same rules as the others,
    like every depth-first search: either can answer ``lost`` as well.

``deal-last-depth-first`` (Bristol family)
    A fifth depth-first search: every card home first, lowest rank first, then reserve
    cards and fan cards onto fans, and the deal last. The order of ``depth-first`` that
    plays home first deals before any fan card moves, and the cautious ones send the
    higher cards home only after the fan moves. Alone, this one wins Bristol 7146 and
    Belvedere 5268 within a few hundred states, deals the solver without it left unknown
    at 400,000. Complete like the others: it only orders the same moves.

``home-last-depth-first`` (Bristol family)
    A sixth depth-first search: cards onto fans first (reserve cards, then fan cards),
    then cards home, and the deal last. Every other order sends a card home as soon as
    it can go, so a card that a lower card still needed as its base on a fan leaves
    first. Alone it wins Bristol 2271 within 44,000 states, 5231 within 86,000 and
    Belvedere 1403 within 107,000, deals every other search left unknown at 400,000
    states; in turns it wins the two Bristol deals within that limit. Complete like
    the others.

``discrepancy-search`` (Gallery family)
    A limited discrepancy search takes turns with the others: in rounds ``d = 0, 1, 2,
    ...`` it walks every line that leaves the family's order (Aces, builds, parks, the
    deal, unbuilds) at most ``d`` times, wherever on the line. A depth-first search
    trusts its order most at the top, where it backtracks last, so one early wrong
    choice hides a win under a subtree it never leaves; here an early discrepancy costs
    no more than a late one. It wins many deals that every other search leaves unknown
    (Royal Parade 373 within 1,400 states, 80 within 1,200; Picture Gallery 669 within
    7,400), and it is incomplete: its rounds walk states again, and its failures mean
    nothing. In the Bristol family it won 2 of the 20 deals unknown at 400,000 states
    alone (3057 within 46,000 states, 7706 within 160,000) but none more in turns at
    that limit, where its share would come out of the others', so it runs there not.

Every rule has a name; ``solve(..., rules=...)`` takes any subset of :data:`RULES`
(the tests compare the verdicts with rules on and off). With ``rules=frozenset()`` the
search is a plain exhaustive search of the game.

Bristol family (Bristol, Belvedere)
-----------------------------------

Suits never matter in Bristol, so the solver keeps ranks only, and the foundations as
the sorted tuple of their top ranks (``t3-f`` sends a card to whichever foundation takes
it; the foundations are interchangeable). Write ``h(k)`` for the number of rank-k cards
home; a card of rank k can go home exactly when ``h(k-1) > h(k)``.

``symmetry``
    The eight fans obey identical rules and the stock never reaches them, so positions
    that differ by a permutation of the fans are equivalent: the key sorts the fans. Once
    the stock is empty the three reserves are interchangeable too and are sorted as well.
    Only such true symmetries (relabellings that map moves to moves) may share a key.
    Positions that are merely reachable from each other, such as two arrangements of
    a run moved card by card between fans, must not: the search expands the first one
    it meets and skips the other, whose own moves may be the only way to win.
``safe-foundation``
    A card of rank k is played home at once when every rank-(k-1) card is home (Aces
    always). Safe: no card can ever be put on it again (only rank k-1 cards could be), so
    in any winning line its later moves can be dropped and every other move stays legal;
    and since ``h(k-1) = 4``, every other rank-k card still has a free foundation whenever
    the winning line sends it home (``h(k) <= 2`` then, with this card and that one out).
    A card only one rank above *some* foundation is not safe: two cards of rank k can
    compete for one foundation while the other one needed is buried.
``lone-fan``
    The only card of a fan is never moved onto another fan: the fan would stay empty for
    good, and the position before the move can do everything the position after can
    (read the fan as if it were stacked on the other one).
``deal-early``
    A deal is tried only at the root, right after a deal, or right after a move that
    involved a reserve (its own source or a card its follow-up safe plays sent home).
    Safe: a move that touches no reserve commutes with a deal (the deal changes only the
    reserves), and the safe plays that follow reach the same position in either order, so
    every winning line can be rearranged to deal before such moves.
    The flag is part of the key; a move leads to the same child whatever the flag, and
    the state free to deal has the moves of the one barred from dealing and the deal.
    So a state barred from dealing is dropped once the same position free to deal has
    been seen (that one reaches all it reaches), and a state free to deal keeps only the
    deal once the same position barred from dealing has been seen (that one makes the
    other moves); see the search's ``restrict``.
``dead-ends``
    A position is dropped when some card can never come to the top of its pile. Computed
    as the least fixpoint of optimistic facts: which ranks can come to the top somewhere
    (stock cards always can), at which ranks a foundation can stand (a foundation at k-1
    reaches k with such a card), which ranks a fan can show on top (a fan card that comes
    to the top, or such a card put on a fan showing one rank higher), and so how deep each
    pile can be dug (a top card leaves if a foundation can stand one below it or a fan can
    show one above it). Every event of a real winning line is derived by these rules, so
    if the fixpoint leaves a card buried, no winning line exists.
``relaxed-game``
    A rank is *home-only* when no fan can ever again show the rank above it on top (Kings
    always; Queens when no fan holds a King, and so on): its cards can only go home. In the
    relaxed game every other card may go home whenever its foundation allows (as if the
    fans could always take it), while a home-only card stays in its pile, and so keeps the
    cards below it there, until it goes home; the stock is dealt in its order onto the
    reserves. Every winning line of the real game sends cards home in an order the relaxed
    game allows, so if the relaxed game is lost, so is the position. It is searched
    exactly with a small budget (giving up answers "not lost"; the budget is the same for
    every search and state, so a state's pruning does not depend on what the other
    searches met, and fifty times larger at the search's root, where one deep look
    decides some lost deals at once), playing at once the
    uncontested plays: a home-only card whose rank has at least as many free foundations
    as home-only cards of that rank still out, and a free card whose rank has more. It
    runs only when a home-only card lies, or will be dealt, above a lower card.

Picture Gallery family (Picture Gallery, Royal Parade, last row reversed, Mod3)
-------------------------------------------------------------------------------

``symmetry``
    The eight slots of a row obey identical rules, so the key sorts each row's slots, and
    of several empty slots of a row or several built slots taking the same card, only the
    first is tried (two built slots taking the same card hold the same cards). Once the
    stock is empty the reserves are interchangeable: the key sorts them and only the
    first empty reserve is tried.
``safe-aces``
    An Ace is played to the ace pile at once when that triggers no refill: always from a
    slot, from a reserve holding other cards below it, and from a reserve of its own when
    the variant does not refill or the stock is empty. Safe: an Ace can only ever go to
    the ace pile, nothing is built on it, and the pile it leaves can do everything it could
    before (an empty slot only gains the start card, a reserve keeps its cards). An Ace
    alone on a reserve with a refill pending is left to the search: playing it deals the
    next stock card there at once, which changes every later deal.
``null-moves``
    Moves whose result equals the position up to the symmetries above are never tried:
    the top card of a built slot onto another built slot (the two slots just swap),
    a start card alone in its slot to an empty slot of its row, and, with the stock empty,
    a lone reserve card to another empty reserve, and (with ``lone-builds``) the top card
    of a built slot to an empty reserve: it comes straight back, or its twin takes its
    place. The one exception is tried: a start card alone in its slot, when a lone start
    card of another suit lies on a reserve before the empty one and takes the slot first.
    In a lost Royal Parade endgame these moves were a third of the states generated.
``dead-ends``
    A position is dropped when no reserve can ever be emptied by building alone. A won
    game ends with every reserve empty, and a card can be put on an empty reserve only
    once some reserve is empty; so in any winning line, before the first card is put on
    an empty reserve, all the cards now in some reserve have left it by building (to a
    slot or the ace pile). Which cards can do that is over-estimated by a least fixpoint
    over card codes: a code can stand in a built slot if it does now, or if a card of it
    can come to the top (stock cards and slot tops always can) and it is a start card
    or follows a code that can; a reserve card leaves by building if it is an Ace, a
    start card, or follows such a code, which brings the card below it to the top.
``counted-dead-ends``
    The dead-end rule above, counting copies and slots. Each card in a built slot sits on
    its own copy of the code three ranks below, and until the first reserve is emptied
    only a deal can put cards onto a reserve, so no card leaves the built slots (one can
    only move to another built slot, or a lone start card to another empty slot). Hence
    a code's copies that can stand built at once are at most those of the code below it,
    a card leaves by building only if more copies of the code below it can stand built
    than its own code has built now, and the fixpoint keeps two masks, codes with one
    copy and codes with both. A start card leaves only for a row that can offer it a
    slot: one empty now, or one whose card (of another row) can leave by building (a
    slot is freed no other way before a reserve is emptied). Still an over-estimate of
    what can happen before the first reserve is emptied, so a position it drops is lost.
``dealt-columns``
    The dead-end rule above, in Royal Parade, where nothing goes onto an empty reserve
    before the stock is empty and no refill comes. The reserve emptied first then has
    taken every card the deals still to come put on it (each deal puts one on every
    reserve, leftmost first), and each such card has left it by building: it lies on top
    when dealt, and no other way off a reserve is open before then. So a reserve counts
    as one that can be emptied only if, besides its cards now, every stock card dealt
    onto it can leave by building too (without this rule, an empty reserve with cards
    still to come counts as one emptied, and so does one that can be dug to its bottom
    now).
``lone-builds``
    With the stock empty, a card alone on a reserve that a slot takes (a built slot, or an
    empty slot for a start card) is played there at once. Safe because it can be undone:
    its reserve is then empty, and any card may go onto an empty reserve. Take a winning
    line from the position before: the moves touching neither the card, its reserve nor
    the slot commute with this one. At the first that does, the card goes to that slot
    (the same), to an equal slot (the same up to symmetry) or to an empty reserve (move it
    there from the slot instead); or another card goes onto the slot (its twin or another
    start card: move the card back to its reserve first, or put that other card on the
    reserve: equal codes are equal cards); or the slot's top card leaves (move the card
    back to its reserve first). Nothing can be put on its reserve while it is there.
``uncontested-builds`` (Royal Parade)
    A build that no other card contends for is played at once: a card (not a start
    card) on top of a reserve or of a slot not built, onto a built slot, when its twin
    is in a built slot already or both slots built to the code below it take it; and a
    start card into an empty slot of a row whose slots are all built or empty (such a
    row has as many empty slots as start cards out of it, and keeps that). A card goes
    onto a lone start card this way only when every slot of its row is built.
    Safe: take a winning line of the search without this rule, where by ``null-moves``
    and ``lone-builds`` no card leaves a built slot (but a lone start card, for one of
    another suit: never in a row with every slot built, as every start card is in a
    slot) and none moves to an equal slot. Play it without the card's first move. Until
    then nothing goes where the card now lies but a card of the same code, which goes to
    the other slot that takes it (its twin to the twin slot, or a start card to another
    empty slot of the row: there is one, as both are out), equal up to ``symmetry``;
    nothing leaves from under the card; a deal onto the card's old pile covers the card
    below instead, and nothing else goes onto that pile while the card lies there (a
    reserve takes no card before the stock is empty; an empty slot takes only start
    cards). The card's first move takes it to a slot like the one it is on (the same
    position, up to symmetry) or, with the stock empty, onto an empty reserve: take it
    there from the slot. Only in Royal Parade: with refills a card leaving a reserve
    brings the next stock card, and in Mod3 cards go onto empty reserves at any time.
    The analyses of a day's 84 Royal Parade games (docs/analysis.md) took 16% fewer
    states with it, some a twentieth (485,000 states without, 19,000 with); of 2,411
    positions of greedy players' games (140 deals) decided both with and without it,
    none differ.
``no-exit``
    With the stock empty and no reserve empty, nothing can go onto a reserve: until a
    reserve is emptied, the only moves are Aces and builds (a card joins a built slot, a
    start card an empty slot). A won game empties every reserve, so when no line of such
    moves empties one, the position is lost. A small exhaustive search decides it (giving
    up, "not lost", after ``EXIT_STATES`` states), playing at once the uncontested moves:
    an Ace; a card whose twin is built, or that both slots built to the code below it
    would take; a start card in a row whose slots hold no card of another row (so every
    start card still out has an empty slot). Such a move never stops a line of these moves
    from emptying a reserve: it commutes with the moves that do not touch it; nothing but
    its twin could be put where it goes, and the twin has a slot of its own (or is built
    already, where moving it is a null move); no card can leave the slot it fills except
    to an equal slot; and while no reserve is empty, it can go nowhere else.
    It runs only in the variants without refills (Royal Parade, Mod3): in Picture
    Gallery a few mid-game hints took seconds more with it.

    In Royal Parade it runs before the stock is empty too, once ``EXIT_STOCK`` cards or
    fewer are left: there nothing goes onto a reserve, empty or not, until the stock is
    empty, so until then the only moves are builds and deals, and a won game passes a
    position with the stock empty and a reserve empty. The search deals as well, and an
    emptied reserve counts only once the stock is empty. The uncontested moves stay
    safe: played before a deal, such a move only takes a card off a pile the deal would
    cover, so every pile of the line that plays it holds a part of the same pile of the
    line that does not, and empties no later. Here the search may visit more states
    (``DEALT_EXIT_STATES``) before it gives up. It runs in the complete searches only:
    on a position that can be won it costs more than it saves, and the searches that
    only look for wins (the greedy pass, the discrepancy search) do without it. A proof
    of a mid-game Royal Parade position that walked every choice of builds before each
    deal (Royal Parade 20261204 after a greedy player's 53 moves: 177,000 states) takes
    about 30,000 with it, its own states counted.

    No move of this search comes back to a state (each adds a card to a slot, or deals),
    so a state all of whose children are done has no exit, and it is kept in a memo
    table at once; a search that gives up keeps what it proved. Its states count in the
    solver's budget (``nodes``) like the states the search generates, so a budget of
    states bounds the CPU time.

What is *not* played at once, and why: a card that fits a built slot is not always
safe, because of the two decks. Both copies of a card may be free while only one slot
takes it, and the copy that should go is the one covering something; a built card may
even have to step down to a reserve so that a start card of another suit can take its
slot. The greedy first pass plays such moves anyway, which is why it is incomplete.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..errors import EngineError
from ..position import Position, new_position
from ..variants import Family
from ._bristol import BristolGame
from ._gallery import GalleryGame
from ._search import BestFirst, DepthFirst, Discrepancies

__all__ = [
    "RULES",
    "SolveResult",
    "Verdict",
    "solve",
    "solve_seed",
]

#: Every rule of the complete search (see the module docstring), plus ``greedy-first``,
#: the incomplete first pass that takes turns with it, ``dig-score``, a second complete
#: search under another score, and ``depth-first``, ``cautious-depth-first``,
#: ``deal-last-depth-first`` and ``home-last-depth-first``, complete depth-first searches.
RULES: frozenset[str] = frozenset(
    {
        "symmetry",
        "safe-foundation",
        "lone-fan",
        "deal-early",
        "dead-ends",
        "counted-dead-ends",
        "dealt-columns",
        "lone-builds",
        "no-exit",
        "relaxed-game",
        "safe-aces",
        "null-moves",
        "uncontested-builds",
        "greedy-first",
        "dig-score",
        "depth-first",
        "cautious-depth-first",
        "deal-last-depth-first",
        "home-last-depth-first",
        "discrepancy-search",
    }
)

#: States in one slice of the first round (see ``SHARES``); slices double each round.
FIRST_SLICE = 500


class Verdict(StrEnum):
    """What the solver found: the position can be won, cannot, or the limit came first."""

    WON = "won"
    LOST = "lost"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class SolveResult:
    """The answer for one position.

    ``line`` holds the moves, in the spec's notation, that win from the given position
    (empty unless ``verdict`` is ``won``; also empty for a position already won);
    ``nodes`` counts the states generated; ``seconds`` is the wall-clock time taken.
    """

    verdict: Verdict
    line: tuple[str, ...]
    nodes: int
    seconds: float

    @property
    def decided(self) -> bool:
        """True unless the verdict is ``unknown``."""
        return self.verdict is not Verdict.UNKNOWN

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "verdict": self.verdict.value,
            "line": list(self.line),
            "nodes": self.nodes,
            "seconds": round(self.seconds, 6),
        }


def _game(position: Position, rules: frozenset[str], memos: dict[str, Any]) -> Any:
    if position.variant.family is Family.BRISTOL:
        return BristolGame(position, rules, memos)
    return GalleryGame(position, rules, memos)


def solve(
    position: Position,
    *,
    max_nodes: int | None = None,
    max_seconds: float | None = None,
    rules: frozenset[str] = RULES,
    lost: set[Hashable] | None = None,
    memos: dict[str, Any] | None = None,
) -> SolveResult:
    """Decide whether ``position`` can be won; see the module docstring.

    ``max_nodes`` bounds the states generated (deterministic), ``max_seconds`` the wall-
    clock time; with neither, the search runs until it decides. ``rules`` selects the
    pruning rules (a subset of :data:`RULES`); fewer rules give the same verdicts, slower.
    ``lost`` is the table of states proven lost to share: pass one set to the solves of
    positions of one deal, by the same rules (a game's positions, analysed one after
    another), and each reads what the others proved, instead of proving it again. A
    state's key names its position within its deal whatever the root (it counts the
    stock cards left, not those dealt since the root), so a state lost in one search is
    lost in all. ``memos`` holds the searches' memo tables (functions of a state within
    its deal), to share with the same solves as ``lost``.
    """
    t0 = time.perf_counter()
    deadline = None if max_seconds is None else t0 + max_seconds
    rules = frozenset(rules)
    unknown_rules = rules - RULES
    if unknown_rules:
        raise ValueError(f"unknown solver rules: {', '.join(sorted(unknown_rules))}")

    def result(verdict: Verdict, line: tuple[str, ...], nodes: int) -> SolveResult:
        return SolveResult(verdict, line, nodes, time.perf_counter() - t0)

    if position.is_won:
        return result(Verdict.WON, (), 0)
    if not position.legal_moves:
        return result(Verdict.LOST, (), 0)
    memos = {} if memos is None else memos  # shared by all passes
    # Keys proven lost, shared by the complete searches: they walk one graph (the greedy
    # pass plays other moves, so it walks another and neither reads nor fills it).
    lost = set() if lost is None else lost
    # (search, complete?, share): the complete searches can answer "lost"; the greedy
    # one only "won". They take turns, each with ``share`` slices of states a round.
    turns = [
        (
            _search(extra)(
                _game(position, rules | extra, memos), None if "greedy" in extra else lost
            ),
            not extra & {"greedy", "lds"},
            share,
        )
        for extra, share in _passes(position, rules)
    ]
    retired = 0  # states generated by a greedy pass that has run out
    piece = FIRST_SLICE
    while True:
        for turn in list(turns):
            search, complete, share = turn
            budget = share * piece
            if max_nodes is not None:
                budget = min(budget, max_nodes - retired - sum(t[0].nodes for t in turns))
            out = search.run(max(budget, 0), deadline)
            spent = retired + sum(t[0].nodes for t in turns)
            if out is not None and out.verdict == "won":
                _check(position, out.line)
                return result(Verdict.WON, out.line, spent)
            if out is not None and complete:
                return result(Verdict.LOST, (), spent)
            if out is not None:
                turns.remove(turn)
                retired += search.nodes
        spent = retired + sum(t[0].nodes for t in turns)
        if (max_nodes is not None and spent >= max_nodes) or (
            deadline is not None and time.perf_counter() >= deadline
        ):
            return result(Verdict.UNKNOWN, (), spent)
        piece *= 2


def _search(extra: frozenset[str]) -> type[BestFirst | DepthFirst | Discrepancies]:
    """The search that walks a pass, by the options ``_passes`` gives it."""
    if "deep" in extra:
        return DepthFirst
    return Discrepancies if "lds" in extra else BestFirst


#: Each search's share of a round, in slices, by what it adds to the rules (see
#: ``_passes``). The first three were chosen on Bristol seeds 0..5999 (no other split
#: tried decided more deals within 1 s on each third of them, CHANGELOG.md); the
#: depth-first searches got one slice each (here and in the Gallery family), not tuned
#: (two for ``home-last`` won Bristol 2271 sooner but lost Belvedere 4423, see
#: CHANGELOG.md, the solver journal).
SHARES = {
    "greedy": 3,
    "dig": 2,
    "plain": 3,
    "deep": 1,
    "deep-deal": 1,
    "cautious": 1,
    "cautious-fans": 1,
    "deal-last": 1,
    "home-last": 1,
}
#: The same for the Gallery family, which has no second score (the depth-first searches
#: only in the variants without refills, see ``depth-first``).
GALLERY_SHARES = {"greedy": 1, "plain": 2, "deep": 1, "deep-deal": 1, "lds": 1}


def _passes(position: Position, rules: frozenset[str]) -> list[tuple[frozenset[str], int]]:
    """The options each search adds to ``rules`` and its share of a round, in turn order:
    the greedy pass first."""
    bristol = position.variant.family is Family.BRISTOL
    shares = SHARES if bristol else GALLERY_SHARES
    out = [(frozenset({"greedy"}), shares["greedy"])] if "greedy-first" in rules else []
    if bristol and "dig-score" in rules:
        out.append((frozenset({"dig"}), shares["dig"]))
    out.append((frozenset(), shares["plain"]))
    if "depth-first" in rules and (bristol or not position.variant.refill_reserves):
        out.append((frozenset({"deep"}), shares["deep"]))
        out.append((frozenset({"deep", "deal-first"}), shares["deep-deal"]))
    if bristol and "cautious-depth-first" in rules:
        out.append((frozenset({"deep", "cautious"}), shares["cautious"]))
        out.append((frozenset({"deep", "cautious", "fans-first"}), shares["cautious-fans"]))
    if bristol and "deal-last-depth-first" in rules:
        out.append((frozenset({"deep", "deal-last"}), shares["deal-last"]))
    if bristol and "home-last-depth-first" in rules:
        out.append((frozenset({"deep", "home-last"}), shares["home-last"]))
    if not bristol and "discrepancy-search" in rules:
        out.append((frozenset({"lds"}), shares["lds"]))
    return out


def _check(position: Position, line: tuple[str, ...]) -> None:
    """Replay a winning line through the engine; a failure is a solver bug."""
    try:
        end = position.play(line)
    except EngineError as exc:
        raise AssertionError(f"solver line does not replay: {exc}") from exc
    if not end.is_won:
        raise AssertionError("solver line does not end in a won position")


def solve_seed(variant: str, seed: int, **limits: Any) -> SolveResult:
    """:func:`solve` for the starting position that ``seed`` deals in ``variant``."""
    return solve(new_position(variant, seed=seed), **limits)
