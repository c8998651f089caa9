"""The Picture Gallery family (Picture Gallery, Royal Parade, last row reversed, Mod3).

State: ``(piles, dealt, home)``. ``piles`` is a tuple of 32 ``bytes`` of the engine's card
codes, bottom to top: slots 0-23, then reserves 24-31 (the engine's indices, so a move's
text is read straight off the state). ``dealt`` counts the stock cards dealt or used for
refills since the root; ``home`` counts the cards on the ace pile or in a slot built on its
row's start card (the engine's score): the state is won when it reaches the card count.
The rules and why each is safe are in the package docstring.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import Any

from .. import gallery
from ..cards import ACE, KING, RANK_STEP, SUITS, card_of
from ..gallery import (
    ACE_PILE,
    BUILD_STEP,
    LAST_ROW,
    ROW,
    ROW_START,
    SLOT_SIZE,
    START_RANKS,
    STOCK,
    GalleryPosition,
)
from ..position import DEAL_INDEX, DEAL_REVERSE_INDEX, Position
from ._search import memo

# The engine's layout as plain ints, for the inner loops.
SLOTS = len(gallery.SLOTS)  # slots are piles 0..SLOTS-1, reserves FIRST_RESERVE..SOURCES-1
SOURCES = len(gallery.SOURCES)  # slots and reserves: the piles cards leave from
FIRST_RESERVE = gallery.RESERVES.start
ROWS = len(START_RANKS)
FIRST_START = START_RANKS[0]
LAST_START = START_RANKS[-1]
#: The slots of each row, as slices of the piles.
ROW1, ROW2, ROW3 = (slice(row * ROW, (row + 1) * ROW) for row in range(ROWS))
DEAL = (DEAL_INDEX, DEAL_INDEX)
DEAL_REVERSE = (DEAL_REVERSE_INDEX, DEAL_REVERSE_INDEX)
NAMES = GalleryPosition.PILE_IDS[: ACE_PILE + 1]
ONE = tuple(bytes((c,)) for c in range((KING + 1) * RANK_STEP))

Move = tuple[int, int]
State = tuple[tuple[bytes, ...], int, int]
#: A row's empty slots; for each card, the built slots of the row that take it next; bit
#: masks of the codes in its built slots and of the top codes of its other slots, each as
#: (codes with at least one copy there, codes with both copies there), and of the codes
#: its built slots take next.
RowTargets = tuple[list[int], dict[int, list[int]], tuple[int, int, int, int, int]]


#: Bit masks over card codes: the start cards (2, 3, 4) and the Aces.
STARTS = sum(1 << card_of(r, s) for r in START_RANKS for s in range(len(SUITS)))
ACES = sum(1 << card_of(ACE, s) for s in range(len(SUITS)))
ROW_STARTS = tuple(sum(1 << card_of(r, s) for s in range(len(SUITS))) for r in START_RANKS)


def _offered_starts(rows: tuple[tuple[bool, int], ...], leave: int) -> int:
    """The start cards of the rows that can offer a slot (for ``_no_reserve_can_empty``):
    one is empty, or a card on top of a slot not built can leave."""
    (empty1, loose1), (empty2, loose2), (empty3, loose3) = rows
    return (
        (ROW_STARTS[0] if empty1 or loose1 & leave else 0)
        | (ROW_STARTS[1] if empty2 or loose2 & leave else 0)
        | (ROW_STARTS[2] if empty3 or loose3 & leave else 0)
    )


def _with_tops(reserves: tuple[bytes, ...], ex: tuple[int, int], counted: bool) -> tuple[int, int]:
    """``ex`` with the reserves' top cards added (for ``_no_reserve_can_empty``)."""
    ex1, ex2 = ex
    for p in reserves:
        if p:
            bit = 1 << p[-1]
            ex2 |= ex1 & bit if counted else bit
            ex1 |= bit
    return ex1, ex2


def _no_reserve_can_empty(
    reserves: tuple[bytes, ...],
    ex: tuple[int, int],
    now: tuple[int, int],
    rows: tuple[tuple[bool, int], ...] | None,
    future: tuple[int, ...] | None = None,
) -> bool:
    """True if no reserve can ever become empty by building alone (package docstring).

    A least fixpoint of optimistic facts, as bit masks over card codes, each kept as two
    masks, codes with at least one copy and codes with both (rule ``counted-dead-ends``;
    without it, ``rows`` is None and one copy stands for both). ``ex``: the copies
    outside the built slots that can come to the top of their pile (given: the stock's
    and the tops of slots not built; the reserves' tops are added here); ``now``: the
    copies in built slots now; ``rows``: for each row, whether it has an empty slot, and
    the codes on top of its slots not built. ``b1``/``b2``: how many copies of a code can
    stand in built slots at once: those there now, or copies that can come to the top if
    the code is a start card of a row that can offer a slot, or as many copies of the
    code below it can stand built. A card leaves by building when it is an Ace, such a
    start card, or more copies of the code below it can stand built than its own code
    has built now; in a reserve that brings the card below it to the top, in a slot not
    built it frees the slot for a start card of its row.

    ``future`` (rule ``dealt-columns``, Royal Parade): for each reserve, the mask of the
    stock cards the deals still to come put on it. No card can be put on an empty reserve
    before the stock is empty there, so the reserve emptied first must have lost its
    stock cards too: each is on top when dealt, and leaves only by building.
    """
    counted = rows is not None
    if any(not p and (future is None or not future[j]) for j, p in enumerate(reserves)):
        return False  # empty, with no card to come
    ex1, ex2 = _with_tops(reserves, ex, counted)
    now1, now2 = now
    depth = [0] * len(reserves)
    b1, b2 = now1, now2
    starts = STARTS
    leave = 0
    while True:
        if rows is not None:
            starts = _offered_starts(rows, leave)
        t1 = now1 | ex1  # a copy built now or able to come to the top
        t2 = now2 | (now1 & ex1) | ex2  # two such copies
        while True:
            n1 = b1 | (t1 & (starts | (b1 << BUILD_STEP)))
            n2 = b2 | (t2 & (starts | (b2 << BUILD_STEP)))
            if n1 == b1 and n2 == b2:
                break
            b1, b2 = n1, n2
        was = leave
        leave = ACES | starts | ((b1 << BUILD_STEP) & ~now1) | ((b2 << BUILD_STEP) & now1)
        changed = leave != was
        for j, p in enumerate(reserves):
            n = len(p)
            d = depth[j]
            while d < n and leave >> p[n - 1 - d] & 1:
                d += 1
                if d < n:
                    bit = 1 << p[n - 1 - d]
                    ex2 |= ex1 & bit if counted else bit
                    ex1 |= bit
            if d == n and (future is None or not future[j] & ~leave):
                return False  # this reserve can be emptied
            changed = changed or d != depth[j]
            depth[j] = d
        if not changed:
            return True


#: States the search of rule ``no-exit`` may visit before it gives up (answers "not dead").
EXIT_STATES = 2_000
#: Cards left in the stock up to which the search of rule ``no-exit`` runs before the
#: stock is empty (Royal Parade), and the states it may visit there.
EXIT_STOCK = 24
DEALT_EXIT_STATES = 5_000


def _symmetric_key(piles: tuple[bytes, ...] | list[bytes], left: int) -> Hashable:
    """The key of a position under rule ``symmetry``, ``left`` cards in the stock: each
    row's slots sorted (equal slots of a row are interchangeable), and the reserves too
    once no deal is to come."""
    rows = (tuple(sorted(piles[ROW1])), tuple(sorted(piles[ROW2])), tuple(sorted(piles[ROW3])))
    if not left:
        return (rows, tuple(sorted(piles[FIRST_RESERVE:])))
    return (rows, tuple(piles[FIRST_RESERVE:]), left)


def _built(s: int, p: bytes) -> bool:
    """Whether pile ``s`` is a slot built on its row's start card (``p`` non-empty)."""
    return s < SLOTS and p[0] >> 2 == ROW_START[s]


def _destinations(rows: Sequence[RowTargets], c: int) -> list[int] | None:
    """The slots that take card ``c`` (not an Ace) as ``rows`` (``_slot_targets``) has
    them: an empty slot of its row for a start card, else a built slot wanting it."""
    r = c >> 2
    empty, wants, _ = rows[(r - FIRST_START) % ROWS]
    return empty if r <= LAST_START else wants.get(c)


def _first_uncontested(
    piles: Sequence[bytes], rows: Sequence[RowTargets], now1: int, now2: int, strict: bool
) -> int:
    """The first pile (a reserve or a slot not built) whose top card no other card
    contends for, or -1: an Ace; a card whose twin is built, or that both slots built to
    the code below it take; a start card in a row whose slots are all built or empty (as
    many empty slots as start cards out). ``now1``/``now2``: the codes in built slots
    (one copy, both). ``strict`` (rule ``uncontested-builds``): no Ace, and no card onto
    a lone start card while a slot of its row is not built (a start card may swap)."""
    free = 0 if strict else ACES
    twins = now1 | now2 << BUILD_STEP
    for row, (empty, _, masks) in enumerate(rows):
        wanted = twins & masks[4]
        if strict and (empty or masks[2]):
            wanted &= ~(ROW_STARTS[row] << BUILD_STEP)
        if empty and not masks[2]:
            wanted |= ROW_STARTS[row]
        free |= wanted
    for s in range(SOURCES):
        p = piles[s]
        if p and free >> p[-1] & 1 and not _built(s, p):
            return s
    return -1


class GalleryGame:
    """A Picture Gallery-family position for :class:`~._search.BestFirst`."""

    def __init__(
        self, position: Position, rules: frozenset[str], memos: dict[str, Any] | None = None
    ) -> None:
        """``memos`` (optional) shares the memo tables between games of one position:
        they hold functions of a state only, whatever the rules (but ``symmetry``)."""
        v = position.variant
        piles = position.piles
        self.root_piles = tuple(bytes(p) for p in piles[:SOURCES])
        self.root_home = position.score
        self.total = v.card_count
        self.stock = bytes(reversed(piles[STOCK]))  # in deal order
        self.refill = v.refill_reserves
        self.open_anytime = v.reserves_open_anytime
        self.reversible = v.reversible_last_row
        self.has_aces = not v.aces_removed
        self.symmetry = "symmetry" in rules
        self.safe_aces = "safe-aces" in rules
        self.null_moves = "null-moves" in rules
        self.dead_ends = "dead-ends" in rules
        self.counted = "counted-dead-ends" in rules
        self.lone_builds = "lone-builds" in rules
        #: Only where nothing goes onto an empty reserve before the stock is empty and no
        #: refill comes (Royal Parade): see ``_no_reserve_can_empty``.
        self.columns = (
            "dealt-columns" in rules and not v.refill_reserves and not v.reserves_open_anytime
        )
        #: Only without refills (Royal Parade, Mod3): in Picture Gallery it cost hints
        #: seconds (bench/README.md).
        self.no_exit = "no-exit" in rules and not v.refill_reserves
        #: ``no-exit`` before the stock is empty too, where nothing goes onto an empty
        #: reserve until then (Royal Parade): the search deals as well.
        #: Not in the searches that only look for wins (the greedy pass, the discrepancy
        #: search): on a position that can be won it costs more than it prunes.
        self.exit_dealing = (
            self.no_exit and not v.reserves_open_anytime and not rules & {"greedy", "lds"}
        )
        self.deal_first = "deal-first" in rules  # a depth-first search's other move order
        #: The incomplete first pass: Aces, builds and start cards played at once when
        #: they trigger no refill.
        self.greedy = "greedy" in rules
        #: Rule ``safe-aces`` (the greedy pass plays its Aces itself).
        self.aces_at_once = self.safe_aces and self.has_aces and not self.greedy
        #: With the stock empty, a card of a built slot put onto an empty reserve goes
        #: straight back (rule ``lone-builds``; or its twin does): the child's key is its
        #: parent's, so the move is not tried (``null-moves``). A start card alone in its
        #: slot may let a lone start card of another suit in first (``_swaps``).
        self.unbuild_returns = (
            self.null_moves and self.lone_builds and self.symmetry and not self.greedy
        )
        #: Rule ``uncontested-builds`` (Royal Parade): its proof stands on the lines of the
        #: search with ``null-moves`` and ``lone-builds``, where built cards stay put.
        self.uncontested = "uncontested-builds" in rules and self.columns and self.unbuild_returns
        self.extra_nodes = 0  # states the searches of rule ``no-exit`` visited
        m = {} if memos is None else memos
        self._targets: list[dict[tuple[bytes, ...], RowTargets]] = [
            m.setdefault(f"targets{self.symmetry}{row}", {}) for row in range(ROWS)
        ]
        self._penalty: dict[bytes, int] = m.setdefault("penalty", {})
        self._exits: dict[Hashable, bool] = m.setdefault(f"exits{self.symmetry}", {})
        #: rest[dealt]: bit masks of the codes still in the stock once dealt cards are used
        #: (at least one copy, both copies).
        self.rest = [(0, 0)] * (len(self.stock) + 1)
        for i in range(len(self.stock) - 1, -1, -1):
            one, two = self.rest[i + 1]
            bit = 1 << self.stock[i]
            self.rest[i] = (one | bit, two | (one & bit))
        #: future[dealt]: for each reserve, the mask of the codes the deals still to come
        #: put on it (every deal but the last deals one card onto each reserve).
        self.future = (
            [
                tuple(
                    sum(1 << c for c in self.stock[dealt + j :: LAST_ROW])
                    for j in range(SOURCES - FIRST_RESERVE)
                )
                for dealt in range(len(self.stock) + 1)
            ]
            if self.columns
            else []
        )

    # -- the search interface --------------------------------------------------------------

    def start(self) -> tuple[State, tuple[str, ...]]:
        piles = list(self.root_piles)
        dealt, home, autos = self._at_once(piles, 0, self.root_home, range(SOURCES))
        return (tuple(piles), dealt, home), autos

    def won(self, state: State) -> bool:
        return state[2] == self.total

    def key(self, state: State) -> Hashable:
        # ``home`` is not part of the key: the piles determine it. The stock cards left,
        # not ``dealt``: the same count whatever position of the deal the search started
        # from, so keys proven lost hold across solves (``solve``'s ``lost``).
        piles, dealt, _ = state
        left = len(self.stock) - dealt
        if not self.symmetry:
            return (piles, left)
        return _symmetric_key(piles, left)

    def text(self, move: Move) -> str:
        s, d = move
        if s < 0:
            return "deal-reverse" if move == DEAL_REVERSE else "deal"
        return f"{NAMES[s]}-{NAMES[d]}"

    def score(self, state: State) -> int:
        """How promising: cards home, minus reserve cards lying above one of their own
        predecessors (same suit and row, lower rank) and reserve cards lying above any."""
        piles, _, home = state
        penalty = self._penalty
        s = 20 * home
        for p in piles[FIRST_RESERVE:]:
            if len(p) > 1:
                n = penalty.get(p)
                if n is None:
                    n = len(p) - 1
                    for a in range(len(p) - 1):
                        x = p[a]
                        for y in p[a + 1 :]:
                            if y > x and (y - x) % BUILD_STEP == 0:
                                n += 6
                                break
                    memo(penalty, p, n)
                s -= n
        return s

    def dead(self, state: State) -> bool:
        if not self.dead_ends:
            return False
        piles, dealt, _ = state
        if self._cannot_empty(piles, dealt):
            return True
        if not self.no_exit:
            return False
        left = len(self.stock) - dealt
        if not left:
            return all(piles[FIRST_RESERVE:]) and self._no_exit(piles, dealt)
        return self.exit_dealing and left <= EXIT_STOCK and self._no_exit(piles, dealt)

    def _cannot_empty(
        self,
        piles: tuple[bytes, ...] | list[bytes],
        dealt: int,
        rows: Sequence[RowTargets] | None = None,
    ) -> bool:
        """The dead-end rule (``counted-dead-ends`` or not) on these piles (``rows``: their
        ``_slot_targets``, when known)."""
        ex1, ex2 = self.rest[dealt]
        now1 = now2 = 0
        loose = []
        for empty, _, (built1, built2, loose1, loose2, _) in rows or self._slot_targets(piles):
            now1 |= built1
            now2 |= built2
            ex2 |= loose2 | (ex1 & loose1)
            ex1 |= loose1
            loose.append((bool(empty), loose1))
        reserves = tuple(piles[FIRST_RESERVE:])
        future = self.future[dealt] if self.columns else None
        if not self.counted:  # one copy stands for both, every row offers a slot
            return _no_reserve_can_empty(reserves, (ex1, ex1), (now1, now1), None, future)
        return _no_reserve_can_empty(reserves, (ex1, ex2), (now1, now2), tuple(loose), future)

    def _no_exit(self, piles: tuple[bytes, ...], dealt: int) -> bool:
        """Rule ``no-exit``: True if no line of builds (and deals) empties a reserve once
        the stock is empty (an exhaustive search of those lines, the uncontested moves
        played at once); False also when it gives up (``EXIT_STATES``, before the stock
        is empty ``DEALT_EXIT_STATES``)."""
        first = list(piles)
        first_rows = list(self._slot_targets(first))
        out = dealt == len(self.stock)
        if not self._uncontested(first, first_rows, out):
            return False
        root = _symmetric_key(first, len(self.stock) - dealt)
        got = self._exits.get(root)
        if got is not None:
            return got
        limit = EXIT_STATES if out else DEALT_EXIT_STATES
        return self._no_exit_from(first, first_rows, dealt, root, limit)

    def _no_exit_from(
        self, first: list[bytes], rows: list[RowTargets], dealt: int, root: Hashable, limit: int
    ) -> bool:
        """The search of :meth:`_no_exit` from its root (key ``root``), depth first.

        Every move adds a card to a slot or deals, so no line comes back to a state: a
        state whose children all have no exit has none, and it goes into the memo table
        as soon as its last child is done; the states on the path to an exit go in as
        having one. A search that gives up after ``limit`` new states keeps what it
        proved. A child differs from its parent in at most two rows, so it takes the
        parent's ``_slot_targets`` and looks up only those rows again."""
        table = self._exits
        path = [(root, self._exit_children(first, rows, dealt))]
        new = 0
        while path:
            key, children = path[-1]
            for child, child_rows, child_dealt in children:
                self.extra_nodes += 1
                if self._exit_found(child, child_rows, child_dealt):
                    got: bool | None = False
                else:
                    k = _symmetric_key(child, len(self.stock) - child_dealt)
                    got = table.get(k)
                if got is False:
                    for on_path, _ in path:
                        memo(table, on_path, False)
                    return False
                if got:
                    continue
                if self._cannot_empty(child, child_dealt, child_rows):
                    memo(table, k, True)
                    continue
                new += 1
                if new >= limit:
                    return False  # gave up: "not dead"
                path.append((k, self._exit_children(child, child_rows, child_dealt)))
                break
            else:
                path.pop()
                memo(table, key, True)
        return True

    def _exit_found(self, child: list[bytes], rows: list[RowTargets], dealt: int) -> bool:
        """Whether a child in the search of rule ``no-exit`` has a reserve empty with the
        stock empty, or reaches one by its uncontested moves (played in place)."""
        out = dealt == len(self.stock)
        if out and not all(child[FIRST_RESERVE:]):
            return True
        return not self._uncontested(child, rows, out)

    def _exit_children(
        self, p: list[bytes], rows: list[RowTargets], dealt: int
    ) -> Iterator[tuple[list[bytes], list[RowTargets], int]]:
        """The children of a state of the ``no-exit`` search: each build, then the deal."""
        for s in range(SOURCES):
            q = p[s]
            if not q or _built(s, q):
                continue  # empty, or a built slot (its top only moves to a twin)
            c = q[-1]
            targets = _destinations(rows, c)
            if not targets:
                continue
            d = targets[0]
            child = list(p)
            child[s] = q[:-1]
            child[d] += ONE[c]
            child_rows = list(rows)
            self._renew_row(child, child_rows, d)
            if s < SLOTS:
                self._renew_row(child, child_rows, s)
            yield child, child_rows, dealt
        if dealt < len(self.stock):
            child = list(p)
            n = min(LAST_ROW, len(self.stock) - dealt)
            for k in range(n):
                child[FIRST_RESERVE + k] += ONE[self.stock[dealt + k]]
            yield child, list(rows), dealt + n

    def _renew_row(self, p: list[bytes], rows: list[RowTargets], s: int) -> None:
        """Look up again the targets of the row of slot ``s`` after a move changed it."""
        row = s // ROW
        rows[row] = self._row_targets(row, tuple(p[row * ROW : row * ROW + ROW]))

    def _uncontested(
        self,
        p: list[bytes],
        rows: list[RowTargets],
        out: bool = True,
        autos: list[str] | None = None,
    ) -> bool:
        """Play at once, in the search of rule ``no-exit``, the moves no other move
        contends with: an Ace; a card whose twin is built, or that both slots built to the
        code below it would take; a start card in a row with no card of another row in
        its slots. ``p`` and its ``rows`` (``_slot_targets``) are updated in place; False
        once a reserve is emptied while the stock is empty (``out``). With ``autos``,
        rule ``uncontested-builds`` instead (``_first_uncontested``'s ``strict``): the
        moves are added to it.

        Each such move stays uncontested whatever the others do, so the order they are
        played in does not change the end; each look picks them out by a mask of codes."""
        now1 = now2 = 0
        for _, _, masks in rows:
            now1 |= masks[0]
            now2 |= masks[1]
        while True:
            s = _first_uncontested(p, rows, now1, now2, strict=autos is not None)
            if s < 0:
                return True
            q = p[s]
            c = q[-1]
            r = c >> 2
            if r == ACE:
                d = ACE_PILE
            else:
                empty, wants, _ = rows[(r - FIRST_START) % ROWS]
                d = empty[0] if r <= LAST_START else wants[c][0]
                now2 |= now1 & 1 << c
                now1 |= 1 << c
            if out and s >= FIRST_RESERVE and len(q) == 1:
                return False
            p[s] = q[:-1]
            if autos is not None:
                autos.append(f"{NAMES[s]}-{NAMES[d]}")
            if d != ACE_PILE:
                p[d] += ONE[c]
                self._renew_row(p, rows, d)
            if s < SLOTS:
                self._renew_row(p, rows, s)

    def restrict(self, state: State, key: Hashable, seen: set[Hashable]) -> State:
        """Every move stays (see :mod:`._search`): no rule of this family knows better."""
        return state

    def twin(self, key: Hashable) -> None:
        """No state restricts its moves here, so none leaves them to a twin."""
        return None

    def moves(self, state: State) -> list[Move]:
        piles, dealt, _ = state
        stock_left = len(self.stock) - dealt
        rows = self._slot_targets(piles)
        empty_res: list[int] = []
        if self.open_anytime or not stock_left:
            empty_res = [j for j in range(FIRST_RESERVE, SOURCES) if not piles[j]]
            if self.symmetry and not stock_left:
                empty_res = empty_res[:1]  # no deal to come: the reserves are interchangeable
        aces, builds, parks, unbuilds = self._card_moves(piles, rows, empty_res, stock_left)
        deals: list[Move] = []
        if stock_left:
            deals.append(DEAL)
            if self.reversible and stock_left <= LAST_ROW:
                deals.append(DEAL_REVERSE)
        if self.deal_first:
            return deals + aces + builds + parks + unbuilds
        return aces + builds + parks + deals + unbuilds

    def _card_moves(
        self,
        piles: tuple[bytes, ...],
        rows: tuple[RowTargets, RowTargets, RowTargets],
        empty_res: list[int],
        stock_left: int,
    ) -> tuple[list[Move], list[Move], list[Move], list[Move]]:
        """The card moves, in four lists to order: Aces home, builds onto slots, parks
        into the empty reserves ``empty_res``, and built slots' cards taken into them."""
        aces: list[Move] = []
        builds: list[Move] = []
        parks: list[Move] = []
        unbuilds: list[Move] = []
        null = self.null_moves
        lone_stays = null and not stock_left  # a lone reserve card is not parked again
        returns = self.unbuild_returns and not stock_left  # nor a card unbuilt from a pile
        for s in range(SOURCES):
            p = piles[s]
            if not p:
                continue
            c = p[-1]
            r = c >> 2
            if r == ACE:
                aces.append((s, ACE_PILE))
                continue
            built = s < SLOTS and p[0] >> 2 == ROW_START[s]
            if not (null and built):
                targets = _destinations(rows, c)
                if targets:
                    for d in targets:
                        if d != s:
                            builds.append((s, d))
            if empty_res and not (
                (lone_stays and s >= FIRST_RESERVE and len(p) == 1)
                or (returns and built and not self._swaps(piles, s, c, empty_res[0]))
            ):
                into = unbuilds if built else parks
                for d in empty_res:
                    if d != s:
                        into.append((s, d))
        return aces, builds, parks, unbuilds

    @staticmethod
    def _swaps(piles: tuple[bytes, ...], s: int, c: int, into: int) -> bool:
        """Whether a start card ``c`` alone in slot ``s``, put onto the empty reserve
        ``into``, leaves the slot to a lone start card of another suit: rule
        ``lone-builds`` plays the first lone card a slot takes, and reserves before
        ``into`` come first."""
        if len(piles[s]) > 1:
            return False
        rank = c >> 2
        return any(
            len(p) == 1 and p[0] >> 2 == rank and p[0] != c for p in piles[FIRST_RESERVE:into]
        )

    def _slot_targets(
        self, piles: tuple[bytes, ...] | list[bytes]
    ) -> tuple[RowTargets, RowTargets, RowTargets]:
        """For each row: its empty slots, its built slots that take each card next, and
        the masks the dead-end rule starts from (:data:`RowTargets`).

        A card of rank ``r`` goes to row ``(r - FIRST_START) % ROWS`` only (a start card to an empty
        slot there, any other card onto a built slot there), so rows are looked up apart,
        each in its own memo table: a move changes at most two rows."""
        return (
            self._row_targets(0, tuple(piles[ROW1])),
            self._row_targets(1, tuple(piles[ROW2])),
            self._row_targets(2, tuple(piles[ROW3])),
        )

    def _row_targets(self, row: int, slots: tuple[bytes, ...]) -> RowTargets:
        table = self._targets[row]
        got = table.get(slots)
        if got is not None:
            return got
        empty: list[int] = []
        wants: dict[int, list[int]] = {}
        built1 = built2 = loose1 = loose2 = 0  # codes in built slots; on top of other slots
        base = ROW * row
        start = START_RANKS[row]
        for j, p in enumerate(slots):
            if not p:
                empty.append(base + j)
            elif p[0] >> 2 == start:
                if len(p) < SLOT_SIZE:
                    wants.setdefault(p[-1] + BUILD_STEP, []).append(base + j)
                for c in p:
                    built2 |= built1 & 1 << c
                    built1 |= 1 << c
            else:
                loose2 |= loose1 & 1 << p[-1]
                loose1 |= 1 << p[-1]
        if self.symmetry:
            # Equal slots of a row are interchangeable: one destination of each kind.
            empty = empty[:1]
            wants = {c: x[:1] for c, x in wants.items()}
        got = (empty, wants, (built1, built2, loose1, loose2, sum(1 << c for c in wants)))
        memo(table, slots, got)
        return got

    def play(self, state: State, move: Move) -> tuple[State, tuple[str, ...]]:
        piles = list(state[0])
        dealt = state[1]
        home = state[2]
        s, d = move
        stock = self.stock
        if s < 0:
            n = min(LAST_ROW, len(stock) - dealt)
            for k in range(n):
                j = SOURCES - 1 - k if move == DEAL_REVERSE else FIRST_RESERVE + k
                piles[j] += ONE[stock[dealt + k]]
            dealt += n
        else:
            p = piles[s]
            c = p[-1]
            piles[s] = p[:-1]
            if _built(s, p):
                home -= 1
            if d != ACE_PILE:
                piles[d] += ONE[c]
            if d < SLOTS or d == ACE_PILE:
                home += 1  # onto the ace pile, onto a built slot, or starting one
            if s >= FIRST_RESERVE and len(p) == 1 and self.refill and dealt < len(stock):
                piles[s] = ONE[stock[dealt]]
                dealt += 1
        if not self.aces_at_once:
            fresh: range | tuple[int, ...] = ()
        elif dealt == len(stock) and state[1] < len(stock):
            fresh = range(SOURCES)  # no refill pending any more
        elif s < 0:
            fresh = range(FIRST_RESERVE, SOURCES)
        else:
            fresh = (s,)
        dealt, home, autos = self._at_once(piles, dealt, home, fresh)
        return (tuple(piles), dealt, home), autos

    # -- moves played at once --------------------------------------------------------------

    def _at_once(
        self, piles: list[bytes], dealt: int, home: int, fresh: Iterable[int]
    ) -> tuple[int, int, tuple[str, ...]]:
        """Play in place the moves the rules play at once (the Aces looked for only on
        the ``fresh`` piles); the new ``dealt`` and ``home``, and the moves played."""
        autos: list[str] = []
        if self.greedy:
            dealt, home = self._greedy(piles, dealt, home, autos)
        elif self.aces_at_once:
            home = self._play_aces(piles, dealt, home, autos, fresh)
        if self.uncontested:
            home = self._play_uncontested(piles, home, autos)
        if self.lone_builds and not self.greedy and dealt == len(self.stock):
            home = self._play_lone(piles, home, autos)
        return dealt, home, tuple(autos)

    def _play_aces(
        self, piles: list[bytes], dealt: int, home: int, autos: list[str], fresh: Iterable[int]
    ) -> int:
        """Play the Aces that provably never hurt, looking only at the ``fresh`` piles (the
        others were looked at before)."""
        refill_pending = self.refill and dealt < len(self.stock)
        for s in fresh:
            p = piles[s]
            while p and p[-1] >> 2 == ACE and (s < SLOTS or len(p) > 1 or not refill_pending):
                p = p[:-1]
                home += 1
                autos.append(f"{NAMES[s]}-a")
            piles[s] = p
        return home

    def _play_uncontested(self, piles: list[bytes], home: int, autos: list[str]) -> int:
        """Play every uncontested build (rule ``uncontested-builds``) until none is left:
        a free card, not a start card, whose twin is built or that both slots built to
        the code below it take, onto a built slot whose top is not a lone start card
        unless every slot of its row is built."""
        played = len(autos)
        self._uncontested(piles, list(self._slot_targets(piles)), out=False, autos=autos)
        return home + len(autos) - played

    def _play_lone(self, piles: list[bytes], home: int, autos: list[str]) -> int:
        """With the stock empty, play every card alone on a reserve that a slot takes
        (rule ``lone-builds``), until none is left."""
        moved = True
        while moved:
            moved = False
            rows = self._slot_targets(piles)
            for s in range(FIRST_RESERVE, SOURCES):
                p = piles[s]
                if len(p) != 1 or p[0] >> 2 == ACE:
                    continue
                targets = _destinations(rows, p[0])
                if not targets:
                    continue
                d = targets[0]
                piles[s] = b""
                piles[d] += p
                home += 1
                autos.append(f"{NAMES[s]}-{NAMES[d]}")
                moved = True
                break
        return home

    def _greedy(
        self, piles: list[bytes], dealt: int, home: int, autos: list[str]
    ) -> tuple[int, int]:
        """Play every Ace, build and start card that triggers no refill (not always safe:
        the first pass only)."""
        stock = self.stock
        moved = True
        while moved:
            moved = False
            rows = self._slot_targets(piles)
            refill_pending = self.refill and dealt < len(stock)
            for s in range(SOURCES):
                p = piles[s]
                if not p or _built(s, p):
                    continue
                if refill_pending and s >= FIRST_RESERVE and len(p) == 1:
                    continue
                c = p[-1]
                r = c >> 2
                if r == ACE:
                    d = ACE_PILE
                else:
                    targets = _destinations(rows, c)
                    if not targets:
                        continue
                    d = targets[0]
                piles[s] = p[:-1]
                if d != ACE_PILE:
                    piles[d] += ONE[c]
                home += 1
                autos.append(f"{NAMES[s]}-{NAMES[d]}")
                moved = True
                break
        return dealt, home
