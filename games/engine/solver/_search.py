"""The family-independent part of the solver: a resumable best-first search.

A family (:mod:`._bristol`, :mod:`._gallery`) supplies a small interface:

- ``start() -> (state, autos)``: the root state after its forced safe moves;
- ``won(state) -> bool``;
- ``key(state)``: a hashable canonical key (positions equal up to a symmetry share it);
- ``moves(state) -> list``: the moves worth trying, best first;
- ``play(state, move) -> (state, autos)``: a child state after the move and its forced
  safe moves; ``autos`` are their texts;
- ``text(move) -> str``: the spec's text of a move;
- ``score(state) -> int``: how promising a state looks (higher first);
- ``dead(state) -> bool``: True only if the state provably cannot be won;
- ``restrict(state, key, seen)``: the state (whose key is ``key``) with only the moves
  whose children no state in ``seen`` (the keys seen so far) also has among its own,
  or None when none is left.
  A seen state is expanded sooner or later, so the children it shares need not be
  generated twice; a family without such knowledge returns ``state``;
- ``twin(key)``: the key of the one state whose moves ``restrict`` may count on for a
  state of key ``key`` (None if it never restricts): the depth-first search treats it as
  that state's successor when it proves states lost (below).

The question is reachability (can a won state be reached from the root?), so the table
is a plain visited set keyed by the canonical key: a state seen before is never expanded
again, which also breaks every cycle. The order of expansion (best score first, the
newest first among equals) only decides how soon a win is found; when the frontier runs
out without a win, every visited state is lost, the root included.

Searches of one position under the same rules explore the same graph in different
orders, so they share a table (a set) of keys *proven lost*. A depth-first search
proves states lost as it goes: it finds the strongly connected components of the graph
it walks (Tarjan's algorithm), and a component it leaves without a win, whose edges all
lead to states inside it or proven lost, cannot reach a win. Every search skips a child
whose key is in the table, and a best-first search also drops a frontier state that got
there. A state that ``dead`` drops goes into the table too, so the other searches skip
it without asking again (the check is the costliest step of a state). The table is
sound whichever search filled it (a lost state is lost for all), so the searches keep
every guarantee they had alone, and once they share it their work on a lost position
adds up instead of being repeated by each.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

#: How many new states between two looks at the clock.
CLOCK_EVERY = 256
#: Entries a family's memo table may hold before it is emptied (bounds memory).
MEMO_LIMIT = 200_000


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def memo(table: dict[K, V], key: K, value: V) -> None:
    """Store ``value`` in a memo table, emptying the table first when it is full."""
    if len(table) >= MEMO_LIMIT:
        table.clear()
    table[key] = value


class Game(Protocol):
    """What the search needs from a family."""

    def start(self) -> tuple[Any, tuple[str, ...]]: ...
    def won(self, state: Any) -> bool: ...
    def key(self, state: Any) -> Hashable: ...
    def moves(self, state: Any) -> list[Any]: ...
    def play(self, state: Any, move: Any) -> tuple[Any, tuple[str, ...]]: ...
    def text(self, move: Any) -> str: ...
    def score(self, state: Any) -> int: ...
    def dead(self, state: Any) -> bool: ...
    def restrict(self, state: Any, key: Hashable, seen: set[Hashable]) -> Any: ...
    def twin(self, key: Hashable) -> Hashable | None: ...

    #: States the family's own rules visited (a dead-end rule's inner search): they count
    #: in the budget like the states the search generates.
    extra_nodes: int


class _Budget:
    """The limits of one ``run``: ``max_nodes`` more states and a ``perf_counter``
    deadline, whose clock is read every ``CLOCK_EVERY`` states."""

    __slots__ = ("stop", "deadline", "next_clock")

    def __init__(self, nodes: int, max_nodes: int | None, deadline: float | None) -> None:
        self.stop = nodes + max_nodes if max_nodes is not None else None
        self.deadline = deadline
        self.next_clock = nodes + CLOCK_EVERY

    def spent(self, nodes: int) -> bool:
        """Whether the run must stop, ``nodes`` states generated in all."""
        if self.stop is not None and nodes >= self.stop:
            return True
        if nodes >= self.next_clock:
            self.next_clock = nodes + CLOCK_EVERY
            return self.deadline is not None and time.perf_counter() >= self.deadline
        return False


@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished search: ``verdict`` is ``won`` (with ``line``) or ``lost``."""

    verdict: str
    line: tuple[str, ...]


class _Search:
    """What the searches share: the game, the table of states proven lost, the states
    generated so far and the outcome once found."""

    def __init__(self, game: Game, lost: set[Hashable] | None) -> None:
        self.game = game
        self.generated = 0
        self.outcome: Outcome | None = None
        self._lost: set[Hashable] = set() if lost is None else lost

    @property
    def nodes(self) -> int:
        """The states this search generated, and those its game's rules visited for it."""
        return self.generated + self.game.extra_nodes


class BestFirst(_Search):
    """Best-first search that can be run in slices (:meth:`run`) and resumed.

    ``lost`` is the table of keys proven lost that it shares with the other searches of
    the same graph (see the module docstring); it adds the states ``dead`` drops, so the
    other searches skip them without asking again.
    """

    def __init__(self, game: Game, lost: set[Hashable] | None = None) -> None:
        super().__init__(game, lost)
        state, autos = game.start()
        # parents[i] = (parent index, move, autos): how node i was reached; the texts are
        # written only for the winning line
        self._parents: list[tuple[int, Any, tuple[str, ...]]] = [(-1, None, autos)]
        root_key = game.key(state)
        self._seen = {root_key}
        self._heap: list[tuple[int, int, int, Any, Hashable]] = [
            (-game.score(state), 0, 0, state, root_key)
        ]
        if game.won(state):
            self.outcome = Outcome("won", autos)

    def _line(self, idx: int, move: Any, autos: tuple[str, ...]) -> tuple[str, ...]:
        text = self.game.text
        parts = [(text(move), *autos)]
        while idx >= 0:
            idx, move, autos = self._parents[idx]
            parts.append(autos if move is None else (text(move), *autos))
        return tuple(t for texts in reversed(parts) for t in texts)

    def run(self, max_nodes: int | None = None, deadline: float | None = None) -> Outcome | None:
        """Search until done, ``max_nodes`` more states, or the ``perf_counter`` deadline.

        Returns the outcome once the search is finished, else None (call again to resume).
        """
        if self.outcome is not None:
            return self.outcome
        game = self.game
        moves_of, play, won, key = game.moves, game.play, game.won, game.key
        dead, score, restrict = game.dead, game.score, game.restrict
        seen, lost, parents, heap = self._seen, self._lost, self._parents, self._heap
        push, pop = heapq.heappush, heapq.heappop
        budget = _Budget(self.nodes, max_nodes, deadline)
        nodes = self.generated
        try:
            while heap:
                if budget.spent(nodes + game.extra_nodes):
                    return None
                _, _, idx, st, sk = pop(heap)
                if sk in lost:
                    continue
                if dead(st):
                    lost.add(sk)
                    continue
                for move in moves_of(st):
                    child, autos = play(st, move)
                    nodes += 1
                    if won(child):
                        self.outcome = Outcome("won", self._line(idx, move, autos))
                        return self.outcome
                    k = key(child)
                    if k in seen or k in lost:
                        continue
                    child = restrict(child, k, seen)
                    if child is None:
                        continue
                    seen.add(k)
                    parents.append((idx, move, autos))
                    n = len(parents) - 1
                    push(heap, (-score(child), -n, n, child, k))
            self.outcome = Outcome("lost", ())
            return self.outcome
        finally:
            self.generated = nodes


def _spell(
    text: Callable[[Any], str],
    root_autos: tuple[str, ...],
    steps: list[tuple[Any, tuple[str, ...]]],
) -> tuple[str, ...]:
    """The texts of a line walked from the root: the root's forced moves, then each
    step's move and the forced moves that followed it."""
    out = list(root_autos)
    for move, autos in steps:
        out.append(text(move))
        out.extend(autos)
    return tuple(out)


class _Frame:
    """A state on the depth-first search's path, with its place in Tarjan's algorithm."""

    __slots__ = ("state", "moves", "key", "index", "low", "via")

    def __init__(
        self,
        state: Any,
        moves: Iterator[Any],
        key: Hashable,
        index: int,
        via: tuple[Any, tuple[str, ...]] | None,
    ) -> None:
        self.state = state
        self.moves = moves
        self.key = key
        self.index = index  # order of discovery
        self.low = index  # the lowest index of an open state it is known to reach
        self.via = via  # (move, autos) that led from the parent here; None at the root


class DepthFirst(_Search):
    """Depth-first search over the same game, resumable like :class:`BestFirst`.

    It tries each state's moves in the family's order (best first) and follows the
    first new child at once, so it plays a line on deep where the best-first search
    keeps weighing the frontier's alternatives: some deals that a score misleads fall
    to it within hundreds of states. It is complete for the same reason: every state
    it sees is expanded before it gives up, so when the stack runs out every seen state
    is lost.

    It also proves states lost on the way and adds their keys to ``lost`` (shared with
    the other searches of the graph): each strongly connected component of the states it
    walked, once left without a win (Tarjan's algorithm, the ``low`` of each frame). A
    state that ``restrict`` cut down counts the state named by ``twin`` among its
    successors, since it leaves those moves to it.
    """

    def __init__(self, game: Game, lost: set[Hashable] | None = None) -> None:
        super().__init__(game, lost)
        state, autos = game.start()
        self._root_autos = autos
        key = game.key(state)
        self._seen = {key}
        self._path: list[_Frame] = []  # the states from the root to the current one
        self._open: dict[Hashable, int] = {}  # key -> index: seen, component not yet left
        self._component: list[Hashable] = []  # Tarjan's stack of those keys
        self._count = 0  # indices given so far
        if game.won(state):
            self.outcome = Outcome("won", autos)
        else:
            self._push(state, key, None)

    def _push(self, state: Any, key: Hashable, via: tuple[Any, tuple[str, ...]] | None) -> _Frame:
        moves = () if self.game.dead(state) else self.game.moves(state)
        frame = _Frame(state, iter(moves), key, self._count, via)
        self._count += 1
        self._open[key] = frame.index
        self._component.append(key)
        self._path.append(frame)
        return frame

    def _line(self, move: Any, autos: tuple[str, ...]) -> tuple[str, ...]:
        steps = [f.via for f in self._path[1:] if f.via is not None]
        return _spell(self.game.text, self._root_autos, [*steps, (move, autos)])

    def _leave(self) -> None:
        """Pop the current state; close its component if it is the component's root."""
        frame = self._path.pop()
        if frame.low == frame.index:
            comp, opened, lost = self._component, self._open, self._lost
            while True:
                k = comp.pop()
                del opened[k]
                lost.add(k)
                if k == frame.key:
                    break
        elif self._path:
            parent = self._path[-1]
            if frame.low < parent.low:
                parent.low = frame.low

    def run(self, max_nodes: int | None = None, deadline: float | None = None) -> Outcome | None:
        """Search until done, ``max_nodes`` more states, or the ``perf_counter`` deadline.

        Returns the outcome once the search is finished, else None (call again to resume).
        """
        if self.outcome is not None:
            return self.outcome
        game = self.game
        play, won, key, restrict, twin = game.play, game.won, game.key, game.restrict, game.twin
        seen, lost, path, opened = self._seen, self._lost, self._path, self._open
        budget = _Budget(self.nodes, max_nodes, deadline)
        nodes = self.generated
        try:
            while path:
                if budget.spent(nodes + game.extra_nodes):
                    return None
                frame = path[-1]
                move = next(frame.moves, None)
                if move is None:
                    self._leave()
                    continue
                child, autos = play(frame.state, move)
                nodes += 1
                if won(child):
                    self.outcome = Outcome("won", self._line(move, autos))
                    return self.outcome
                k = key(child)
                if k in lost:
                    continue
                if k in seen:
                    # Seen and not proven lost: its component is still open.
                    i = opened[k]
                    if i < frame.low:
                        frame.low = i
                    continue
                cut = restrict(child, k, seen)
                # The moves cut are left to the twin (seen, so proven lost or open).
                tied = None if cut is child else opened.get(twin(k))
                if cut is None:
                    if tied is not None and tied < frame.low:
                        frame.low = tied
                    continue
                seen.add(k)
                pushed = self._push(cut, k, (move, autos))
                if tied is not None and tied < pushed.low:
                    pushed.low = tied
            self.outcome = Outcome("lost", ())
            return self.outcome
        finally:
            self.generated = nodes


class Discrepancies(_Search):
    """Limited discrepancy search: lines that leave the family's order only a few times.

    A depth-first search trusts its order most at the top, where it backtracks last:
    one wrong early choice (dealing on where a line must first play a reserve card, say)
    buries the win under a subtree it never leaves. This search walks, in rounds
    ``d = 0, 1, 2, ...``, every line that takes a move other than the first of its state
    at most ``d`` times, wherever on the line, so an early discrepancy costs no more
    than a late one. A state is walked again in a round only when reached with more
    discrepancies left than before. The solver counts it incomplete (its rounds walk
    states again, so it cannot prove much within a budget): its wins are real, it ends
    with "lost" only after a round that left no move out, and it skips states the
    complete searches proved lost (``lost``), and adds the states ``dead`` drops.
    """

    def __init__(self, game: Game, lost: set[Hashable] | None = None) -> None:
        super().__init__(game, lost)
        self._root, self._root_autos = game.start()
        self.round = -1
        self._cut = True  # whether the last round skipped a move for want of discrepancies
        # path[i]: (state, its moves not yet tried with their order, discrepancies left,
        # the (move, autos) that led to it)
        self._path: list[tuple[Any, Iterator[tuple[int, Any]], int, Any]] = []
        self._best: dict[Hashable, int] = {}
        if game.won(self._root):
            self.outcome = Outcome("won", self._root_autos)

    def _line(self, move: Any, autos: tuple[str, ...]) -> tuple[str, ...]:
        steps = [step[3] for step in self._path[1:]]
        return _spell(self.game.text, self._root_autos, [*steps, (move, autos)])

    def _next_round(self) -> bool:
        """Start the next round from the root; False once a round cut nothing."""
        if not self._cut:
            return False
        self._cut = False
        self.round += 1
        self._best = {self.game.key(self._root): self.round}
        moves = () if self.game.dead(self._root) else self.game.moves(self._root)
        self._path = [(self._root, iter(enumerate(moves)), self.round, None)]
        return True

    def _moves(self, state: Any, key: Hashable) -> list[Any]:
        """The moves to walk from a new state: none when it is dead (then proven lost)."""
        if self.game.dead(state):
            self._lost.add(key)
            return []
        return self.game.moves(state)

    def run(self, max_nodes: int | None = None, deadline: float | None = None) -> Outcome | None:
        """Search until a win, ``max_nodes`` more states, or the ``perf_counter`` deadline;
        after a round that cut nothing every line was walked: the outcome is "lost"
        (which the caller must not take for a proof: see the class docstring).

        Returns the outcome once the search is finished, else None (call again to resume).
        """
        if self.outcome is not None:
            return self.outcome
        game = self.game
        play, won, key = game.play, game.won, game.key
        lost = self._lost
        budget = _Budget(self.nodes, max_nodes, deadline)
        nodes = self.generated
        try:
            while True:
                path = self._path
                if not path:
                    if not self._next_round():
                        self.outcome = Outcome("lost", ())
                        return self.outcome
                    path = self._path
                best = self._best
                while path:
                    if budget.spent(nodes + game.extra_nodes):
                        return None
                    state, moves, left, _ = path[-1]
                    nxt = next(moves, None)
                    if nxt is None:
                        path.pop()
                        continue
                    i, move = nxt
                    if i:
                        if not left:
                            # The rest of the moves are discrepancies too.
                            self._cut = True
                            path.pop()
                            continue
                        left -= 1
                    child, autos = play(state, move)
                    nodes += 1
                    if won(child):
                        self.outcome = Outcome("won", self._line(move, autos))
                        return self.outcome
                    k = key(child)
                    if best.get(k, -1) >= left or k in lost:
                        continue
                    best[k] = left
                    todo = self._moves(child, k)
                    path.append((child, iter(enumerate(todo)), left, (move, autos)))
        finally:
            self.generated = nodes
