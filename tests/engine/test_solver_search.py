"""The family-independent searches on small random graphs, where the truth is known:
the table of states proven lost holds only states that cannot reach a win."""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import cast

import pytest

from games.engine.solver._search import BestFirst, DepthFirst, Discrepancies

#: The flag of a state that may only take its "deal" edges (as in the Bristol family).
ONLY = "only"


class GraphGame:
    """A random directed graph as a game: node ``goal`` is won. Each node has plain edges
    and "deal" edges; a state is ``(node, flag)``, and a state with flag False may not
    take deal edges (it arrived by a plain edge), as under the Bristol family's
    ``deal-early``: ``restrict`` drops it once its twin with flag True was seen, and cuts
    a state with flag True down to its deal edges once its twin with flag False was."""

    extra_nodes = 0  # no rule searches on its own

    def __init__(self, rng: random.Random, size: int) -> None:
        self.goal = size - 1
        self.plain = {n: rng.sample(range(size), rng.randint(0, 3)) for n in range(size)}
        self.deal = {n: rng.sample(range(size), rng.randint(0, 2)) for n in range(size)}

    def start(self) -> tuple[tuple[int, object], tuple[str, ...]]:
        return (0, True), ()

    def won(self, state: tuple[int, object]) -> bool:
        return state[0] == self.goal

    def key(self, state: tuple[int, object]) -> Hashable:
        return (state[0], state[1] is not False)

    def moves(self, state: tuple[int, object]) -> list[tuple[int, bool]]:
        node, flag = state
        deals = [(m, True) for m in self.deal[node]]
        if flag == ONLY:
            return deals
        plain = [(m, False) for m in self.plain[node]]
        return plain + deals if flag else plain

    def play(
        self, state: object, move: tuple[int, bool]
    ) -> tuple[tuple[int, bool], tuple[str, ...]]:
        return move, ()

    def text(self, move: tuple[int, bool]) -> str:
        return f"{move[0]}{'d' if move[1] else ''}"

    def score(self, state: object) -> int:
        return 0

    def dead(self, state: object) -> bool:
        return False

    def restrict(self, state: tuple[int, object], key: Hashable, seen: set[Hashable]) -> object:
        if self.twin(key) not in seen:
            return state
        return (state[0], ONLY) if state[1] else None

    def twin(self, key: Hashable) -> Hashable:
        node, flag = cast(tuple[int, bool], key)
        return (node, not flag)

    def winnable(self) -> set[Hashable]:
        """Keys of the states that can reach the goal (the truth)."""
        states = [(n, f) for n in self.plain for f in (True, False)]
        good: set[Hashable] = {s for s in states if s[0] == self.goal}
        changed = True
        while changed:
            changed = False
            for n, f in states:
                if (n, f) in good:
                    continue
                succ = [(m, False) for m in self.plain[n]]
                succ += [(m, True) for m in self.deal[n]] if f else []
                if any(s in good for s in succ):
                    good.add((n, f))
                    changed = True
        return good


def graphs(count: int) -> list[GraphGame]:
    rng = random.Random(7)
    return [GraphGame(rng, rng.randint(4, 40)) for _ in range(count)]


@pytest.mark.parametrize("budget", [3, 10, 40, None])
def test_depth_first_proves_only_states_that_cannot_win(budget: int | None) -> None:
    proved = 0
    for game in graphs(400):
        lost: set[Hashable] = set()
        out = DepthFirst(game, lost).run(budget)
        good = game.winnable()
        assert not lost & good
        proved += len(lost)
        if out is not None:
            assert (out.verdict == "won") == ((0, True) in good)
            if out.verdict == "lost":
                assert (0, True) in lost
    assert proved > 100


def test_searches_sharing_the_table_keep_their_verdicts() -> None:
    decided = set()
    for game in graphs(400):
        lost: set[Hashable] = set()
        DepthFirst(game, lost).run(5)
        truth = (0, True) in game.winnable()
        for search in (DepthFirst(game, lost), BestFirst(game, lost)):
            out = search.run()
            assert out is not None and (out.verdict == "won") == truth
            decided.add(out.verdict)
    assert decided == {"won", "lost"}


def test_discrepancy_search_widens_its_rounds_until_nothing_is_left_out() -> None:
    for game in graphs(200):
        search = Discrepancies(game)
        out = search.run()
        assert out is not None
        assert (out.verdict == "won") == ((0, True) in game.winnable())
    # A line that needs the second move of two states is found in round 2, not before.
    game = graphs(1)[0]
    game.goal = 3
    game.plain = {0: [5, 1], 1: [4, 2], 2: [3], 3: [], 4: [], 5: []}
    game.deal = {n: [] for n in range(6)}
    search = Discrepancies(game)
    assert search.run(4) is None and search.round == 1
    out = search.run()
    assert out is not None and out.verdict == "won" and search.round == 2
