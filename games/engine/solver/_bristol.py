"""The Bristol family (Bristol, Belvedere) as the solver sees it: ranks only.

State: ``(piles, found, dealt, can_deal)``. ``piles`` is a tuple of 11 ``bytes`` of ranks,
bottom to top: fans 0-7, then reserves 8-10 (the engine's indices, so a move's text is
read straight off the state). ``found`` is the sorted tuple of the four foundation top
ranks (0: empty). ``dealt`` counts the stock cards dealt since the root (``stock[dealt:]`` is
still to come, in deal order). ``can_deal`` is the "deal early" flag (rule
``deal-early``): True, False or :data:`DEAL_ONLY`. The rules and why each is safe are
in the package docstring.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, cast

from .. import bristol
from ..bristol import STOCK, BristolPosition
from ..cards import KING, SUITS, rank
from ..position import DEAL_INDEX, TO_FOUNDATION, Position
from ._search import memo

# The engine's layout as plain ints, for the inner loops.
FANS = len(bristol.FANS)  # fans are piles 0..FANS-1, reserves FANS..SOURCES-1
SOURCES = len(bristol.SOURCES)  # fans and reserves: the piles cards leave from
DEAL_SIZE = len(bristol.RESERVES)  # cards a deal puts on the reserves, one each
DEAL = (DEAL_INDEX, DEAL_INDEX)
HOME = TO_FOUNDATION
NAMES = BristolPosition.PILE_IDS[:SOURCES]
ONE = tuple(bytes((r,)) for r in range(KING + 1))
#: A rank above every rank (a pile's lowest rank before any card is seen).
ABOVE_KING = KING + 1
#: Cards of each rank in the deck (one per suit), and foundations.
PER_RANK = len(SUITS)
#: Bit mask of the ranks Ace to Queen.
BELOW_KING = (1 << KING) - 2

#: Most states the relaxed-game search may visit before it gives up; giving up answers
#: "not provably lost", so the limit costs pruning, never soundness. The limit is the
#: same for every search and every state but the root, so whether a state is pruned does
#: not depend on the other searches: a limit that shrank once a quarter of the relaxed
#: searches had given up (a count shared by all the searches of a position) made each
#: depth-first search prune by what the others had met, and Bristol 7146, won by the
#: cautious order alone within 10,000 states, stayed unknown at 400,000 in turns
#: (CHANGELOG.md, the solver journal of 2026-12-02).
RELAXED_LIMIT = 400
#: The limit at the root of each search: one deep look there decides some lost deals at
#: once (a few milliseconds), which the small limits never decide.
RELAXED_ROOT_LIMIT = 20_000

Move = tuple[int, int]
State = tuple[tuple[bytes, ...], tuple[int, ...], int, int]
#: A pile as the relaxed game sees it: its home-only cards bottom to top, each with the
#: ranks of the cards between it and the home-only card below.
PileUnits = tuple[tuple[int, bytes], ...]
#: The flag of a state that may only deal (see ``restrict``); else True (may deal) or
#: False (barred from dealing).
DEAL_ONLY = 2


class BristolGame:
    """A Bristol-family position for :class:`~._search.BestFirst`."""

    #: The relaxed game's search has a fixed budget of its own and is not counted.
    extra_nodes = 0

    def __init__(
        self, position: Position, rules: frozenset[str], memos: dict[str, Any] | None = None
    ) -> None:
        """``memos`` (optional) shares the memo tables between games of one position:
        they hold functions of a state only, whatever the rules."""
        piles = position.piles
        self.root_piles = tuple(bytes(rank(c) for c in p) for p in piles[:SOURCES])
        self.root_found = tuple(
            sorted(rank(piles[fi][-1]) if piles[fi] else 0 for fi in bristol.FOUNDATIONS)
        )
        self.stock = bytes(rank(c) for c in reversed(piles[STOCK]))  # in deal order
        #: rest_mask[dealt]: bit mask of the ranks still in the stock once ``dealt`` cards
        #: are dealt.
        self.rest_mask = [0] * (len(self.stock) + 1)
        for i in range(len(self.stock) - 1, -1, -1):
            self.rest_mask[i] = self.rest_mask[i + 1] | 1 << self.stock[i]
        self.symmetry = "symmetry" in rules
        self.safe_home = "safe-foundation" in rules
        self.lone_fan = "lone-fan" in rules
        self.deal_early = "deal-early" in rules
        self.exposure = "dead-ends" in rules
        self.relaxed = "relaxed-game" in rules
        self.greedy = "greedy" in rules  # the incomplete first pass: every card home at once
        self.dig = "dig" in rules  # the score of the second complete search (``dig-score``)
        self.deal_first = "deal-first" in rules  # a depth-first search's other move order
        self.cautious = "cautious" in rules  # the orders of ``cautious-depth-first``
        self.fans_first = "fans-first" in rules  # ... the second one: fan cards first
        self.deal_last = "deal-last" in rules  # the order of ``deal-last-depth-first``
        self.home_last = "home-last" in rules  # the order of ``home-last-depth-first``
        m = {} if memos is None else memos
        self._masks: dict[bytes, int] = m.setdefault("masks", {})
        self._pile_info: dict[bytes, tuple[int, dict[int, list[int]]]] = m.setdefault(
            "pile_info", {}
        )
        self._stock_waits: list[dict[int, list[int]] | None] = [None] * (len(self.stock) + 1)
        self._units: dict[tuple[bytes, int], tuple[bool, PileUnits]] = m.setdefault("units", {})
        self._relaxed_memo: dict[Hashable, bool] = m.setdefault("relaxed", {})

    # -- the search interface --------------------------------------------------------------

    def start(self) -> tuple[State, tuple[str, ...]]:
        piles = list(self.root_piles)
        found = list(self.root_found)
        autos: list[str] = []
        if self.safe_home:
            _close(piles, found, autos, self.greedy)
        self._root = (tuple(piles), tuple(found), 0, True)
        return self._root, tuple(autos)

    def won(self, state: State) -> bool:
        return state[1][0] == KING

    def key(self, state: State) -> Hashable:
        # The foundations are not part of the key: the cards in the piles and the stock
        # determine how many cards of each rank are home, hence the foundation tops.
        # The stock cards left, not ``dealt``: the same count whatever position of the deal
        # the search started from, so keys proven lost hold across solves (``solve``'s
        # ``lost``).
        piles, _, dealt, can_deal = state
        left = len(self.stock) - dealt
        if not self.symmetry:
            return (piles, left, can_deal)
        fk = tuple(sorted(piles[:FANS]))
        if not left:
            return (fk, tuple(sorted(piles[FANS:])))
        return (fk, piles[FANS:], left, can_deal)

    def restrict(self, state: State, key: Hashable, seen: set[Hashable]) -> State | None:
        """Under ``deal-early`` (see the package docstring): a state barred from dealing
        is dropped once the same position free to deal was seen, and a state free to
        deal keeps only the deal once the same position barred from dealing was seen."""
        piles, found, dealt, can_deal = state
        if not self.deal_early or dealt == len(self.stock) or self.twin(key) not in seen:
            return state
        return (piles, found, dealt, DEAL_ONLY) if can_deal else None

    def twin(self, key: Hashable) -> Hashable:
        """The key of the same position with the other "deal early" flag, to which
        ``restrict`` leaves the moves it cuts (with stock left the key ends with the
        flag, see ``key``)."""
        items = cast(tuple[Hashable, ...], key)
        return (*items[:-1], not items[-1])

    def text(self, move: Move) -> str:
        s, d = move
        if s < 0:
            return "deal"
        return f"{NAMES[s]}-{'f' if d == HOME else NAMES[d]}"

    def score(self, state: State) -> int:
        """How promising: cards home, minus cards lying above a lower card, and under
        ``dig`` minus how deep the cards the foundations take next lie (a stock card
        counts one per deal it waits for), which steers where nothing can go home."""
        piles, found, dealt, _ = state
        need: dict[int, int] = {}  # rank -> foundations waiting for it
        if self.dig:
            for f in found:
                if f < KING:
                    need[f + 1] = need.get(f + 1, 0) + 1
        s = 100 * sum(found)
        depths: dict[int, list[int]] = {r: [] for r in need}
        info = self._pile_info
        for p in piles:
            got = info.get(p)
            if got is None:
                got = _pile_info(p)
                memo(info, p, got)
            n, where = got
            s -= 10 * n
            for r, ds in depths.items():
                d = where.get(r)
                if d:
                    ds.extend(d)
        waits = self._stock_waits[dealt]
        if waits is None:
            waits = self._stock_waits[dealt] = _stock_waits(self.stock[dealt:])
        for r, m in need.items():
            ds = depths[r]
            ds.extend(waits.get(r, ()))
            if len(ds) > m:
                ds.sort()
            s -= 20 * sum(ds[:m])
        return s

    def moves(self, state: State) -> list[Move]:
        piles, found, dealt, can_deal = state
        if can_deal == DEAL_ONLY:
            return [DEAL]
        home, from_reserve, from_fan = self._card_moves(piles, found)
        can = dealt < len(self.stock) and (can_deal or not self.deal_early)
        if self.cautious:
            # Home first only the cards at most two ranks above the lowest foundation, the
            # deal last: the other orders race two foundations to the King and strand a
            # third below a card it needs (rule ``cautious-depth-first``).
            near = found[0] + 2
            low = [m for m in home if piles[m[0]][-1] <= near]
            high = [m for m in home if piles[m[0]][-1] > near]
            onto_fans = from_fan + from_reserve if self.fans_first else from_reserve + from_fan
            return low + onto_fans + high + ([DEAL] if can else [])
        if self.deal_last:
            # Every card home, lowest rank first, then cards onto fans, the deal last: the
            # other orders that play home first deal before the fan cards move (rule
            # ``deal-last-depth-first``).
            home.sort(key=lambda m: piles[m[0]][-1])
            return home + from_reserve + from_fan + ([DEAL] if can else [])
        if self.home_last:
            # Cards onto fans first, then cards home, the deal last: a card kept on a fan
            # can still take a lower one (rule ``home-last-depth-first``).
            return from_reserve + from_fan + home + ([DEAL] if can else [])
        out = home + from_reserve
        if can:
            if self.deal_first:
                return [DEAL, *out, *from_fan]
            out.append(DEAL)
        return out + from_fan

    def _card_moves(
        self, piles: tuple[bytes, ...], found: tuple[int, ...]
    ) -> tuple[list[Move], list[Move], list[Move]]:
        """The card moves, in three lists to order: home, from a reserve onto a fan, and
        from a fan onto another (none off a lone card, under rule ``lone-fan``)."""
        by_top: dict[int, list[int]] = {}
        for d in range(FANS):
            p = piles[d]
            if p:
                by_top.setdefault(p[-1], []).append(d)
        home: list[Move] = []
        from_reserve: list[Move] = []
        from_fan: list[Move] = []
        for s in range(SOURCES):
            p = piles[s]
            if not p:
                continue
            r = p[-1]
            if r - 1 in found:
                home.append((s, HOME))
            targets = by_top.get(r + 1)
            if targets:
                if s >= FANS:
                    from_reserve.extend((s, d) for d in targets)
                elif not (self.lone_fan and len(p) == 1):
                    from_fan.extend((s, d) for d in targets if d != s)
        return home, from_reserve, from_fan

    def play(self, state: State, move: Move) -> tuple[State, tuple[str, ...]]:
        piles = list(state[0])
        found = list(state[1])
        dealt = state[2]
        s, d = move
        # Only a pile whose top changed can offer a new safe play, unless a foundation moved.
        if s < 0:
            stock = self.stock
            for k in range(min(DEAL_SIZE, len(stock) - dealt)):
                piles[FANS + k] += ONE[stock[dealt + k]]
            dealt = min(dealt + DEAL_SIZE, len(stock))
            fresh = piles[FANS:]
        else:
            p = piles[s]
            r = p[-1]
            piles[s] = p[:-1]
            if d == HOME:
                found[found.index(r - 1)] = r
                found.sort()
                fresh = piles
            else:
                piles[d] += ONE[r]
                fresh = piles[s : s + 1]
        autos: list[str] = []
        touched_reserve = s < 0 or s >= FANS
        if self.safe_home:
            limit = found[0] + 1
            for q in fresh:
                if self.greedy or (q and q[-1] <= limit):
                    touched_reserve = _close(piles, found, autos, self.greedy) or touched_reserve
                    break
        return (tuple(piles), tuple(found), dealt, touched_reserve), tuple(autos)

    def dead(self, state: State) -> bool:
        piles, found, dealt, _ = state
        if self.exposure and _never_exposed(piles, found, self.rest_mask[dealt]):
            return True
        root = state is self._root
        return self.relaxed and self._relaxed_lost(piles, found, dealt, root)

    # -- dead ends: the relaxed game -------------------------------------------------------

    def _mask(self, p: bytes) -> int:
        m = self._masks.get(p)
        if m is None:
            m = 0
            for r in p:
                m |= 1 << r
            memo(self._masks, p, m)
        return m

    def _pile_units(self, p: bytes, home_only: int) -> tuple[bool, PileUnits]:
        """The home-only cards of a pile bottom to top, each with the cards between it and
        the one below; and whether one of them lies above a lower card."""
        key = (p, home_only)
        got = self._units.get(key)
        if got is None:
            units = []
            start = 0
            lowest = ABOVE_KING
            inversion = False
            for i, r in enumerate(p):
                if home_only >> r & 1:
                    inversion = inversion or r > lowest
                    units.append((r, p[start:i]))
                    start = i + 1
                lowest = min(lowest, r)
            got = (inversion, tuple(units))
            memo(self._units, key, got)
        return got

    def _relaxed_lost(
        self, piles: tuple[bytes, ...], found: tuple[int, ...], dealt: int, root: bool
    ) -> bool:
        # The memo tables are read inline (this runs for most states); a miss computes.
        masks, pile_units = self._masks, self._units
        in_fans = 0
        for p in piles[:FANS]:
            in_fans |= masks.get(p) or self._mask(p)
        outside = self.rest_mask[dealt]
        for p in piles[FANS:]:
            outside |= masks.get(p) or self._mask(p)
        home_only = _home_only_ranks(in_fans, outside)
        fans: list[PileUnits] = []
        reserves: list[PileUnits] = []
        inversion = False
        for i in range(SOURCES):
            p = piles[i]
            bad, units = pile_units.get((p, home_only)) or self._pile_units(p, home_only)
            inversion = inversion or bad
            if i >= FANS:
                reserves.append(units)
            elif units:
                fans.append(units)
        if not inversion:
            # Without an inversion now or later the relaxed game is won rank by rank.
            # Later ones come from home-only cards dealt above lower home-only cards.
            tops = [u[-1][0] if u else ABOVE_KING for u in reserves]
            rest = self.stock[dealt:]
            for k, r in enumerate(rest):
                if home_only >> r & 1:
                    if r > tops[k % DEAL_SIZE]:
                        inversion = True
                        break
                    tops[k % DEAL_SIZE] = r
            if not inversion:
                return False
        fans.sort()
        key = (found, home_only, tuple(fans), tuple(reserves), dealt)
        lost = self._relaxed_memo.get(key)
        if lost is None:
            limit = RELAXED_ROOT_LIMIT if root else RELAXED_LIMIT
            won = _relaxed_winnable(
                found, home_only, piles, fans, reserves, self.stock[dealt:], limit
            )
            lost = won is False
            memo(self._relaxed_memo, key, lost)
        return lost


def _pile_info(p: bytes) -> tuple[int, dict[int, list[int]]]:
    """For the score: how many cards of a pile lie above a lower card, and for each rank
    the depths of its cards (cards above them), shallowest first."""
    n = 0
    lo = ABOVE_KING
    for r in p:
        if r > lo:
            n += 1
        elif r < lo:
            lo = r
    where: dict[int, list[int]] = {}
    for d in range(len(p)):
        where.setdefault(p[-1 - d], []).append(d)
    return n, where


def _stock_waits(rest: bytes) -> dict[int, list[int]]:
    """For the score: for each rank, the deals its stock cards wait for (1 for the next)."""
    out: dict[int, list[int]] = {}
    for k, r in enumerate(rest):
        out.setdefault(r, []).append(1 + k // DEAL_SIZE)
    return out


def _close(piles: list[bytes], found: list[int], autos: list[str], greedy: bool) -> bool:
    """Play home every top card whose rank is at most one above the lowest foundation
    (every card that fits, when ``greedy``). Returns whether a reserve card went home."""
    from_reserve = False
    moved = True
    while moved:
        moved = False
        for s in range(SOURCES):
            p = piles[s]
            while p and (p[-1] <= found[0] + 1 or (greedy and p[-1] - 1 in found)):
                r = p[-1]
                found[found.index(r - 1)] = r
                found.sort()
                p = p[:-1]
                autos.append(f"{NAMES[s]}-f")
                moved = True
                from_reserve = from_reserve or s >= FANS
            piles[s] = p
    return from_reserve


def _never_exposed(piles: tuple[bytes, ...], found: tuple[int, ...], rest_mask: int) -> bool:
    """True if some card can provably never come to the top of its pile.

    A least fixpoint of optimistic facts, kept as bit masks over ranks: ``ex``, the ranks
    of cards that can come to the top somewhere (stock cards always can); ``exf``, the
    same for fan cards in their fan; ``at``, the ranks a foundation can stand at; ``fan``,
    the ranks a fan can show on top; and how deep each pile can be dug.
    """
    ex, exf = _tops(piles, rest_mask)
    base = 0
    for f in found:
        base |= 1 << f
    depth = [0] * SOURCES
    # The piles that can hold a card that never comes to the top: two cards or more.
    open_piles = [i for i in range(SOURCES) if len(piles[i]) > 1]
    while True:
        # A foundation at k-1 can reach k with a rank-k card that comes to the top; a fan
        # showing k+1 can take a rank-k card that comes to the top.
        at = _climb(base, ex)
        fan = _descend(exf, ex)
        leave = (at << 1) | (fan >> 1)  # ranks that can leave their pile once on top
        changed = False
        still_open = []
        for i in open_piles:
            p = piles[i]
            n = len(p) - 1
            d = depth[i]
            if leave >> p[n - d] & 1:
                changed = True
                while d < n and leave >> p[n - d] & 1:
                    d += 1
                    t = 1 << p[n - d]
                    ex |= t
                    if i < FANS:
                        exf |= t
                depth[i] = d
            if d < n:
                still_open.append(i)
        if not still_open:
            return False
        if not changed:
            return True
        open_piles = still_open


def _tops(piles: tuple[bytes, ...], rest_mask: int) -> tuple[int, int]:
    """Bit masks of the ranks on top: of every pile and the stock's rest, and of the fans."""
    ex = rest_mask
    exf = 0
    for i in range(SOURCES):
        p = piles[i]
        if p:
            t = 1 << p[-1]
            ex |= t
            if i < FANS:
                exf |= t
    return ex, exf


def _climb(ranks: int, ex: int) -> int:
    """``ranks`` and each rank above one of them, up the chain of ranks in ``ex``."""
    while True:
        nxt = ranks | ((ranks << 1) & ex)
        if nxt == ranks:
            return ranks
        ranks = nxt


def _descend(ranks: int, ex: int) -> int:
    """``ranks`` and each rank below one of them, down the chain of ranks in ``ex``."""
    while True:
        nxt = ranks | ((ranks >> 1) & ex)
        if nxt == ranks:
            return ranks
        ranks = nxt


def _home_only_ranks(in_fans: int, outside: int) -> int:
    """Bit mask of the ranks whose cards can never again go onto a fan (Kings always).

    ``in_fans`` and ``outside`` are the ranks lying in fans and elsewhere (reserves,
    stock). A rank can show on a fan later only if a card of it lies in a fan now, or
    one lies elsewhere and the rank above can show on a fan (an over-estimate, as needed).
    """
    can_top = _descend(in_fans, outside)
    return (~(can_top >> 1) & BELOW_KING) | (1 << KING)


#: A unit of the relaxed game: a home-only card's rank, the ranks of the cards below it
#: down to the next home-only card, and the unit's id.
Unit = tuple[int, bytes, int]


class _TooBig(Exception):
    pass


def _relaxed_winnable(
    found: tuple[int, ...],
    home_only: int,
    piles: tuple[bytes, ...],
    fans: list[PileUnits],
    reserves: list[PileUnits],
    rest: bytes,
    limit: int,
) -> bool | None:
    """Search the relaxed game: True if it is won, False if lost, None if the search
    would visit more than ``limit`` states.

    ``h[k]`` counts the rank-k cards home (``h[0]`` is ``PER_RANK``); ``free[k]`` the free rank-k
    cards; each stack holds a pile's units (home-only card, cards freed when it goes
    home); ``rem[k]`` counts the home-only rank-k cards still in units or in the stock.
    Uncontested plays are made at once; only contested plays and deals branch.
    """
    h0 = [PER_RANK] + [sum(1 for f in found if f >= k) for k in range(1, KING + 1)]
    free0 = [0] * (KING + 1)
    for p in piles:
        for r in p:
            free0[r] += 1
    rem0 = [0] * (KING + 1)
    # Units get ids (their bit in ``gone``, the set of units gone home): the stacks only
    # lose their tops and gain units at deals, so (h, gone, dealt) identifies a state.
    stacks0: list[tuple[Unit, ...]] = []
    uid = 0
    for units in (*fans, *reserves):
        stack = []
        for q, seg in units:
            stack.append((q, seg, uid))
            uid += 1
            free0[q] -= 1
            rem0[q] += 1
            for x in seg:
                free0[x] -= 1
        stacks0.append(tuple(stack))
    for r in rest:
        if home_only >> r & 1:
            rem0[r] += 1
    search = _RelaxedSearch(rest, home_only, len(fans), uid, limit)
    try:
        return search.won(h0, free0, stacks0, rem0, 0, 0)
    except _TooBig:
        return None


class _RelaxedSearch:
    """The relaxed game's search from one position, by depth-first recursion: a state is
    ``h``, ``free``, ``rem`` (as in :func:`_relaxed_winnable`), the stacks of units, how
    many stock cards are dealt and the bit set of the units gone home."""

    __slots__ = ("rest", "home_only", "first_reserve", "uid", "seen", "budget")

    def __init__(
        self, rest: bytes, home_only: int, first_reserve: int, uid: int, limit: int
    ) -> None:
        self.rest = rest
        self.home_only = home_only
        self.first_reserve = first_reserve
        self.uid = uid  # the id of the first unit a deal makes
        self.seen: set[Hashable] = set()
        self.budget = limit

    def won(
        self,
        h: list[int],
        free: list[int],
        stacks: list[tuple[Unit, ...]],
        rem: list[int],
        dealt: int,
        gone: int,
    ) -> bool:
        """True if the relaxed game is won from this state (raises _TooBig past the limit)."""
        # The lists are this call's own (the caller copied them); the stacks are tuples,
        # so a copy of the list of stacks is shallow and a changed stack a new tuple.
        gone = _relaxed_settle(h, free, stacks, rem, gone)
        if h[KING] == PER_RANK:
            return True
        if not self._first_visit((tuple(h), gone, dealt)):
            return False
        # A contested play (a unit or a free card home), or the deal.
        for i, st in enumerate(stacks):
            if st:
                q, seg, u = st[-1]
                if h[q - 1] > h[q]:
                    h2, f2, r2 = h[:], free[:], rem[:]
                    s2 = stacks[:]
                    s2[i] = st[:-1]
                    h2[q] += 1
                    r2[q] -= 1
                    for x in seg:
                        f2[x] += 1
                    if self.won(h2, f2, s2, r2, dealt, gone | 1 << u):
                        return True
        for r in range(1, KING + 1):
            if free[r] and h[r - 1] > h[r]:
                h2, f2 = h[:], free[:]
                h2[r] += 1
                f2[r] -= 1
                if self.won(h2, f2, stacks[:], rem[:], dealt, gone):
                    return True
        if dealt < len(self.rest):
            f2, s2, n = self._dealt(free, stacks, dealt)
            return self.won(h[:], f2, s2, rem[:], dealt + n, gone)
        return False

    def _first_visit(self, key: Hashable) -> bool:
        """True the first time the search meets a state (raises _TooBig past the limit)."""
        seen = self.seen
        if key in seen:
            return False
        seen.add(key)
        self.budget -= 1
        if self.budget < 0:
            raise _TooBig
        return True

    def _dealt(
        self, free: list[int], stacks: list[tuple[Unit, ...]], dealt: int
    ) -> tuple[list[int], list[tuple[Unit, ...]], int]:
        """The free cards and stacks after the next deal, and how many cards it dealt: a
        home-only card becomes a unit on its reserve, any other a free card."""
        rest, home_only, first_reserve, uid = (
            self.rest,
            self.home_only,
            self.first_reserve,
            self.uid,
        )
        f2 = free[:]
        s2 = stacks[:]
        n = min(DEAL_SIZE, len(rest) - dealt)
        for k in range(n):
            r = rest[dealt + k]
            if home_only >> r & 1:
                s2[first_reserve + k] += ((r, b"", uid + dealt + k),)
            else:
                f2[r] += 1
        return f2, s2, n


def _relaxed_settle(
    h: list[int], free: list[int], stacks: list[tuple[Unit, ...]], rem: list[int], gone: int
) -> int:
    """Make the relaxed game's uncontested plays in place; the units gone home after them."""
    progress = True
    while progress:
        progress = False
        for i, st in enumerate(stacks):
            popped = False
            while st:
                q, seg, u = st[-1]
                cap = h[q - 1] - h[q]
                if cap < 1 or cap < rem[q]:
                    break
                st = st[:-1]
                popped = True
                gone |= 1 << u
                h[q] += 1
                rem[q] -= 1
                for x in seg:
                    free[x] += 1
            if popped:
                stacks[i] = st
                progress = True
        for r in range(1, KING + 1):
            f = free[r]
            if f:
                room = h[r - 1] - h[r] - rem[r]  # free foundations left over
                if room > 0:
                    k = f if f < room else room
                    h[r] += k
                    free[r] = f - k
                    progress = True
    return gone
