"""games.analysis.search: the fatal move of a finished game, checked against the solver
and the engine, and "unknown" never counted as lost."""

from __future__ import annotations

from typing import Any

import pytest

from bench._greedy import greedy_log
from games.analysis import search
from games.analysis.search import PROOF_RULES, Limits, analyse, board_line, verdict_key
from games.engine import UNDO, new_position
from games.engine.solver import RULES, SolveResult, Verdict, solve

LIMITS = Limits(first_nodes=20_000, max_nodes=80_000, game_nodes=400_000)
#: Greedy games whose positions the solver decides within a few thousand states.
CHEAP_GAMES = [("belvedere", 3, 0), ("belvedere", 5, 0), ("bristol", 3, 0), ("bristol", 8, 0)]


@pytest.mark.parametrize(("variant", "seed", "player"), CHEAP_GAMES)
def test_the_fatal_move_leaves_a_won_position_for_a_lost_one(
    variant: str, seed: int, player: int
) -> None:
    start, log = new_position(variant, seed=seed), greedy_log(variant, seed, player)
    report = analyse(start, log, LIMITS)
    assert report.summary == "fatal"
    k = report.first_lost
    assert k is not None and report.last_won == k - 1
    line = board_line(start, log)
    before, after = line.positions[k - 1], line.positions[k]
    assert solve(before, max_nodes=200_000).verdict is Verdict.WON
    assert solve(after, max_nodes=200_000).verdict is Verdict.LOST
    assert before.play(report.line).is_won  # the winning line wins, replayed by the engine
    assert report.verdicts == ["won"] * k + ["lost"] * (len(line.positions) - k)
    assert report.calls <= 12


def test_unknown_is_never_counted_as_lost() -> None:
    variant, seed, player = CHEAP_GAMES[0]
    start, log = new_position(variant, seed=seed), greedy_log(variant, seed, player)
    exact = analyse(start, log, LIMITS)
    starved = analyse(start, log, Limits(first_nodes=40, max_nodes=40, game_nodes=2_000))
    assert "unknown" in starved.verdicts
    assert starved.summary in {"range", "unknown"}
    # Whatever it proved agrees with the exact answer; the rest stays unknown.
    for exact_verdict, verdict in zip(exact.verdicts, starved.verdicts, strict=True):
        assert verdict in {exact_verdict, "unknown"}
    none = analyse(start, log, Limits(first_nodes=1, max_nodes=1, game_nodes=0))
    assert (none.summary, none.calls, set(none.verdicts)) == ("unknown", 0, {"unknown"})
    assert none.first_lost is None and none.last_won is None


def test_verdicts_known_before_cost_no_solve() -> None:
    variant, seed, player = CHEAP_GAMES[2]
    start, log = new_position(variant, seed=seed), greedy_log(variant, seed, player)
    first = analyse(start, log, LIMITS)
    again = analyse(start, log, LIMITS, first.learned)
    assert (again.calls, again.nodes) == (0, 0) and again.cache_hits > 0
    assert again.to_json() | {"solver": None} == first.to_json() | {"solver": None}


def test_a_won_game_needs_no_solver() -> None:
    start = new_position("bristol", seed=7)
    line = solve(start, max_nodes=100_000).line
    report = analyse(start, list(line), LIMITS)
    assert (report.summary, report.calls, set(report.verdicts)) == ("won", 0, {"won"})


def test_undone_moves_leave_the_board_line() -> None:
    start = new_position("bristol", seed=7)
    a, b, c = "deal", *(str(m) for m in start.apply("deal").legal_moves[:2])
    line = board_line(start, [a, b, UNDO, c])
    assert line.moves == (a, c)
    assert line.entries == (0, 3, 4)  # the position after "deal" was left last at step 3
    assert line.positions[-1].to_json() == start.play([a, c]).to_json()


def test_the_cache_key_ignores_the_ply_only() -> None:
    start = new_position("bristol", seed=7)
    moved = start.apply("deal")
    assert verdict_key(start) != verdict_key(moved)
    same = type(start).from_json({**start.to_json(), "ply": 9})
    assert verdict_key(same) == verdict_key(start)
    assert verdict_key(new_position("belvedere", seed=7)) != verdict_key(start)


class _Band:
    """A stand-in for the solver over one game's board line (position ``i`` has ply ``i``):
    won before ``fatal``, lost from it, and ``unknown`` in ``hard`` below ``budget_needed``
    states; records each call's position, budget and rules."""

    def __init__(self, fatal: int, hard: range, budget_needed: int) -> None:
        self.fatal, self.hard, self.needed = fatal, hard, budget_needed
        self.calls: list[tuple[int, int, frozenset[str]]] = []

    def __call__(
        self,
        position: Any,
        *,
        max_nodes: int,
        rules: frozenset[str],
        lost: set[Any],
        memos: dict[str, Any],
    ) -> SolveResult:
        i = position.ply
        self.calls.append((i, max_nodes, rules))
        if i in self.hard and max_nodes < self.needed:
            return SolveResult(Verdict.UNKNOWN, (), max_nodes, 0.0)
        verdict = Verdict.WON if i < self.fatal else Verdict.LOST
        return SolveResult(verdict, (), 10, 0.0)


def _long_game() -> tuple[Any, list[str]]:
    """A greedy game of 81 moves, no two of its positions alike (so no verdict of one
    position is read for another, whatever the stand-in answers)."""
    variant, seed, player = "bristol", 20261204, 5
    start, log = new_position(variant, seed=seed), greedy_log(variant, seed, player)
    positions = board_line(start, log).positions
    assert len({verdict_key(p) for p in positions}) == len(positions) == len(log) + 1
    assert [p.ply for p in positions] == list(range(len(positions)))
    return start, log


def test_an_unknown_probe_splits_the_range_like_a_decided_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The middle of the game is hard for the solver and the fatal move lies away from
    it: the probes bisect the stretches beside the hard positions at the first budget
    and pin the fatal move without a larger one."""
    start, log = _long_game()
    n = len(board_line(start, log).positions)
    middle = n // 2
    band = _Band(fatal=middle + 20, hard=range(middle - 5, middle + 6), budget_needed=10**9)
    monkeypatch.setattr(search, "solve", band)
    report = analyse(start, log, LIMITS)
    assert (report.summary, report.first_lost) == ("fatal", middle + 20)
    assert {budget for _, budget, _ in band.calls} == {LIMITS.first_nodes}
    assert report.calls <= 14


def test_a_position_asked_again_gets_the_complete_searches_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start, log = _long_game()
    n = len(board_line(start, log).positions)
    fatal = n // 2
    band = _Band(fatal=fatal, hard=range(fatal - 1, fatal + 1), budget_needed=80_000)
    monkeypatch.setattr(search, "solve", band)
    report = analyse(start, log, LIMITS)
    assert (report.summary, report.first_lost) == ("fatal", fatal)
    asked: set[int] = set()
    for i, budget, rules in band.calls:
        assert rules == (PROOF_RULES if i in asked and budget > LIMITS.first_nodes else RULES)
        asked.add(i)
    assert any(rules == PROOF_RULES for _, _, rules in band.calls)
    # Only the incomplete searches are left out: the complete ones walk the same graph.
    assert {"greedy-first", "discrepancy-search"} == RULES - PROOF_RULES
