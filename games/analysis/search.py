"""Where a game was lost: the solver's verdicts over a finished game's positions.

Pure: no Django (it runs in the analysis worker process, see ``games.analysis.queue``).

In patience a lost position stays lost whatever is played after it, and a position
before a won one was won too (it leads there). So along a game's positions ``P0 ..
Pn`` the verdicts are a run of ``won``, then a run of ``lost``, and the first
position proven lost is well defined: the move into it is the **fatal move**. A
binary search finds it with about ``log2(n)`` solves. The solver may answer
``unknown`` (its budget ran out); such a position is never counted as lost. It splits
the open range all the same: the next probes at that budget bisect the stretches on
either side of it (the positions far from the boundary are decided in a few hundred
states, the ones near it may take hundreds of thousands). Only when a few probes at
one budget stayed unknown do the next get a larger budget (``Limits``), so the extra
budget goes near the boundary; a position asked again gets the solver's complete
searches only (``PROOF_RULES``). When the budget of the whole game runs out first, the
answer is a range: the last position proven won and the first proven lost.

Reuse: a verdict already known (``cache``, shared across games by ``verdict_key``)
costs no solve; a winning line that the player's next moves follow proves those
positions won as well; and the solves of one game share the solver's table of states
proven lost and its memo tables (``solve(..., lost=..., memos=...)``), so a position
near the boundary reads the part of its proof that a later position's solve has done
already (in Royal Parade mostly the searches of rule ``no-exit``).

>>> from games.engine import new_position
>>> start = new_position("belvedere", seed=3)
>>> report = analyse(start, [], Limits(first_nodes=20_000, max_nodes=20_000, game_nodes=40_000))
>>> report.summary, report.verdicts
('still_winnable', ['won'])
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.engine import UNDO, GameLog, Position
from games.engine.solver import RULES, Verdict, solve

#: Unknown answers at one budget before the next probe gets a larger one.
PROBES_PER_LEVEL = 3
#: Each budget level is this many times the one before.
LEVEL_FACTOR = 4
#: The solver's rules of a position asked again (unknown at a smaller budget): its
#: complete searches only (the same graph, so they share ``lost``).
#: Most such positions are lost, and the incomplete searches (the greedy pass, the
#: discrepancy search) can only find wins: their turns would take a third of the states
#: of a proof in Royal Parade, half in the variants with refills.
PROOF_RULES = RULES - {"greedy-first", "discrepancy-search"}

WON, LOST, UNKNOWN = Verdict.WON.value, Verdict.LOST.value, Verdict.UNKNOWN.value


@dataclass(frozen=True)
class Limits:
    """Solver budget: ``first_nodes`` states for a first solve of a position, up to
    ``max_nodes`` for a position asked again, ``game_nodes`` for the whole game (and
    ``game_seconds`` of wall clock, a safety net on a loaded machine)."""

    first_nodes: int = 20_000
    max_nodes: int = 320_000
    game_nodes: int = 600_000
    game_seconds: float | None = None


@dataclass(frozen=True)
class Cached:
    """A decided verdict of a position (the cache keeps no unknowns): ``line`` wins from
    it when won."""

    verdict: str
    line: tuple[str, ...] = ()


def verdict_key(position: Position) -> str:
    """The cache key of a position's verdict: its variant and piles (stock included), not
    its ply, which no verdict depends on; equal across games of one deal."""
    text = position.variant.key + "|" + str(position.to_json()["piles"])
    return hashlib.sha256(text.encode()).hexdigest()[:40]


@dataclass(frozen=True)
class BoardLine:
    """A game's positions as its board shows them at the end: undone moves dropped.
    ``positions[i]`` follows ``moves[:i]``; ``entries[i]`` is the log entries after which
    the game last stood at ``positions[i]`` (a replay's step)."""

    positions: tuple[Position, ...]
    moves: tuple[str, ...]
    entries: tuple[int, ...]


def board_line(start: Position, log: Sequence[str]) -> BoardLine:
    """The board line of a game's log (raises ``EngineError`` on an entry the rules refuse)."""
    positions, moves, entries = [start], list[str](), [0]
    for count, (notation, step) in enumerate(
        zip(log, GameLog.replay_steps(start, log), strict=True), 1
    ):
        if notation == UNDO:
            del positions[-1], moves[-1], entries[-1]
            entries[-1] = count
        else:
            positions.append(step.position)
            moves.append(notation)
            entries.append(count)
    return BoardLine(tuple(positions), tuple(moves), tuple(entries))


@dataclass
class Report:
    """The analysis of one game (``to_json`` is what is stored).

    ``verdicts[i]`` is position ``i``'s (``won`` up to ``last_won``, ``lost`` from
    ``first_lost``, ``unknown`` between); ``summary`` is one of ``won`` (the game was
    won), ``still_winnable`` (it ended while it could still be won), ``never_winnable``
    (the deal itself is lost), ``fatal`` (the fatal move is move ``first_lost``),
    ``range`` (it is one of the moves after ``last_won`` up to ``first_lost``) and
    ``unknown`` (no position proven lost). ``line`` wins from position ``last_won``.
    """

    summary: str
    verdicts: list[str]
    last_won: int | None
    first_lost: int | None
    line: tuple[str, ...]
    calls: int = 0
    nodes: int = 0
    cache_hits: int = 0
    learned: dict[str, Cached] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form (without what was learned for the cache)."""
        return {
            "summary": self.summary,
            "verdicts": self.verdicts,
            "last_won": self.last_won,
            "first_lost": self.first_lost,
            "line": list(self.line),
            "solver": {"calls": self.calls, "nodes": self.nodes, "cache_hits": self.cache_hits},
        }


class _Run:
    """One game's search: what each position is known to be, and the budget spent."""

    def __init__(self, line: BoardLine, cache: Mapping[str, Cached], limits: Limits) -> None:
        self.line, self.cache, self.limits = line, cache, limits
        self.keys = [verdict_key(p) for p in line.positions]
        self.known: dict[int, Cached] = {}
        self.tried: dict[int, int] = {}  # position -> largest budget it was unknown at
        self.proven: set[Hashable] = set()  # the solver's states proven lost, for every solve
        self.memos: dict[str, Any] = {}  # and its memo tables
        self.report = Report("unknown", [], None, None, ())
        self.deadline = (
            None if limits.game_seconds is None else time.monotonic() + limits.game_seconds
        )

    def left(self) -> int:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return 0
        return self.limits.game_nodes - self.report.nodes

    def learn(self, i: int, found: Cached) -> None:
        self.known[i] = found
        if found.verdict != WON:
            return
        # The player's next moves along the line reach won positions too.
        moves, j = self.line.moves, i
        for k, move in enumerate(found.line):
            if j >= len(moves) or moves[j] != move:
                break
            j += 1
            self.known.setdefault(j, Cached(WON, found.line[k + 1 :]))

    def probe(self, i: int, budget: int) -> str:
        """Position ``i``'s verdict: known, cached, or solved within ``budget`` states."""
        if i in self.known:
            return self.known[i].verdict
        key = self.keys[i]
        hit = self.cache.get(key) or self.report.learned.get(key)
        if hit is not None:
            self.report.cache_hits += 1
            self.learn(i, hit)
            return hit.verdict
        budget = min(budget, self.left())
        if budget <= 0:
            return UNKNOWN
        rules = PROOF_RULES if i in self.tried else RULES
        result = solve(
            self.line.positions[i],
            max_nodes=budget,
            rules=rules,
            lost=self.proven,
            memos=self.memos,
        )
        self.report.calls += 1
        self.report.nodes += result.nodes
        if not result.decided:
            self.tried[i] = max(self.tried.get(i, 0), budget)
            return UNKNOWN
        found = Cached(result.verdict.value, result.line)
        self.report.learned[key] = found
        self.learn(i, found)
        return found.verdict

    def bounds(self) -> tuple[int, int]:
        """The last position proven won (-1: none) and the first proven lost (n + 1: none)."""
        won = [i for i, c in self.known.items() if c.verdict == WON]
        lost = [i for i, c in self.known.items() if c.verdict == LOST]
        return max(won, default=-1), min(lost, default=len(self.line.positions))

    def narrow(self) -> None:
        """Binary search between the bounds, larger budgets where probes stay unknown.

        A position unknown at a budget splits the open range as a decided one would: the
        next probe at that budget goes to the middle of the widest stretch between the
        bounds and such positions, so the budget goes to bisecting the range (where the
        positions are easy, far from the boundary) before it goes to hard positions."""
        budget, unknowns = self.limits.first_nodes, 0
        while self.left() > 0:
            lo, hi = self.bounds()
            if hi - lo <= 1:
                return
            marks = [lo, *(i for i in range(lo + 1, hi) if self.tried.get(i, 0) >= budget), hi]
            gaps = [(b - a, -a) for a, b in itertools.pairwise(marks) if b - a > 1]
            if not gaps or unknowns >= PROBES_PER_LEVEL:
                if budget >= self.limits.max_nodes:
                    return
                budget, unknowns = min(budget * LEVEL_FACTOR, self.limits.max_nodes), 0
                continue
            width, start = max(gaps)
            if self.probe(-start + width // 2, budget) == UNKNOWN:
                unknowns += 1

    def finish(self) -> Report:
        report, n = self.report, len(self.line.positions)
        lo, hi = self.bounds()
        report.verdicts = [WON if i <= lo else LOST if i >= hi else UNKNOWN for i in range(n)]
        report.last_won = lo if lo >= 0 else None
        report.first_lost = hi if hi < n else None
        report.line = self.known[lo].line if lo >= 0 else ()
        if lo == n - 1:
            report.summary = "won" if self.line.positions[-1].is_won else "still_winnable"
        elif hi == 0:
            report.summary = "never_winnable"
        elif hi == n:
            report.summary = "unknown"
        else:
            report.summary = "fatal" if hi - lo == 1 else "range"
        return report


def analyse(
    start: Position, log: Sequence[str], limits: Limits, cache: Mapping[str, Cached] | None = None
) -> Report:
    """Analyse the game that played ``log`` from ``start``; see the module docstring.

    ``cache`` holds verdicts known already (by ``verdict_key``); the report's ``learned``
    holds the ones this analysis decided, for the caller to keep.
    """
    run = _Run(board_line(start, log), cache or {}, limits)
    last = len(run.line.positions) - 1
    if run.line.positions[last].is_won:
        run.known[last] = Cached(WON)  # and every position before it leads there
        return run.finish()
    first = limits.first_nodes
    if run.probe(last, first) != WON and run.probe(0, first) != LOST:
        run.narrow()
    return run.finish()
