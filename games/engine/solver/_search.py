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
  generated twice; a family without such knowledge returns ``state``.

The question is reachability (can a won state be reached from the root?), so the table
is a plain visited set keyed by the canonical key: a state seen before is never expanded
again, which also breaks every cycle. The order of expansion (best score first, the
newest first among equals) only decides how soon a win is found; when the frontier runs
out without a win, every visited state is lost, the root included.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Hashable, Iterator
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


@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished search: ``verdict`` is ``won`` (with ``line``) or ``lost``."""

    verdict: str
    line: tuple[str, ...]


class BestFirst:
    """Best-first search that can be run in slices (:meth:`run`) and resumed."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.nodes = 0  # states generated so far
        self.outcome: Outcome | None = None
        state, autos = game.start()
        # parents[i] = (parent index, move, autos): how node i was reached; the texts are
        # written only for the winning line
        self._parents: list[tuple[int, Any, tuple[str, ...]]] = [(-1, None, autos)]
        self._seen = {game.key(state)}
        self._heap: list[tuple[int, int, int, Any]] = [(-game.score(state), 0, 0, state)]
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
        seen, parents, heap = self._seen, self._parents, self._heap
        push, pop = heapq.heappush, heapq.heappop
        stop = self.nodes + max_nodes if max_nodes is not None else None
        next_clock = self.nodes + CLOCK_EVERY
        nodes = self.nodes
        try:
            while heap:
                if stop is not None and nodes >= stop:
                    return None
                if nodes >= next_clock:
                    next_clock = nodes + CLOCK_EVERY
                    if deadline is not None and time.perf_counter() >= deadline:
                        return None
                entry = pop(heap)
                idx, st = entry[2], entry[3]
                if dead(st):
                    continue
                for move in moves_of(st):
                    child, autos = play(st, move)
                    nodes += 1
                    if won(child):
                        self.outcome = Outcome("won", self._line(idx, move, autos))
                        return self.outcome
                    k = key(child)
                    if k in seen:
                        continue
                    child = restrict(child, k, seen)
                    if child is None:
                        continue
                    seen.add(k)
                    parents.append((idx, move, autos))
                    n = len(parents) - 1
                    push(heap, (-score(child), -n, n, child))
            self.outcome = Outcome("lost", ())
            return self.outcome
        finally:
            self.nodes = nodes


class DepthFirst:
    """Depth-first search over the same game, resumable like :class:`BestFirst`.

    It tries each state's moves in the family's order (best first) and follows the
    first new child at once, so it plays a line on deep where the best-first search
    keeps weighing the frontier's alternatives: some deals that a score misleads fall
    to it within hundreds of states. It is complete for the same reason: every state
    it sees is expanded before it gives up, so when the stack runs out every seen state
    is lost.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.nodes = 0
        self.outcome: Outcome | None = None
        state, autos = game.start()
        self._root_autos = autos
        self._seen = {game.key(state)}
        # stack[i]: (state, its moves not yet tried); path[i]: (move, autos) that led from
        # stack[i]'s state to stack[i + 1]'s
        self._stack: list[tuple[Any, Iterator[Any]]] = []
        self._path: list[tuple[Any, tuple[str, ...]]] = []
        if game.won(state):
            self.outcome = Outcome("won", autos)
        else:
            self._push(state)

    def _push(self, state: Any) -> None:
        moves = () if self.game.dead(state) else self.game.moves(state)
        self._stack.append((state, iter(moves)))

    def _line(self, move: Any, autos: tuple[str, ...]) -> tuple[str, ...]:
        text = self.game.text
        out = list(self._root_autos)
        for m, a in (*self._path, (move, autos)):
            out.append(text(m))
            out.extend(a)
        return tuple(out)

    def run(self, max_nodes: int | None = None, deadline: float | None = None) -> Outcome | None:
        """Search until done, ``max_nodes`` more states, or the ``perf_counter`` deadline.

        Returns the outcome once the search is finished, else None (call again to resume).
        """
        if self.outcome is not None:
            return self.outcome
        game = self.game
        play, won, key, restrict = game.play, game.won, game.key, game.restrict
        seen, stack, path = self._seen, self._stack, self._path
        stop = self.nodes + max_nodes if max_nodes is not None else None
        next_clock = self.nodes + CLOCK_EVERY
        nodes = self.nodes
        try:
            while stack:
                if stop is not None and nodes >= stop:
                    return None
                if nodes >= next_clock:
                    next_clock = nodes + CLOCK_EVERY
                    if deadline is not None and time.perf_counter() >= deadline:
                        return None
                state, moves = stack[-1]
                move = next(moves, None)
                if move is None:
                    stack.pop()
                    if path:
                        path.pop()
                    continue
                child, autos = play(state, move)
                nodes += 1
                if won(child):
                    self.outcome = Outcome("won", self._line(move, autos))
                    return self.outcome
                k = key(child)
                if k in seen:
                    continue
                child = restrict(child, k, seen)
                if child is None:
                    continue
                seen.add(k)
                path.append((move, autos))
                self._push(child)
            self.outcome = Outcome("lost", ())
            return self.outcome
        finally:
            self.nodes = nodes
