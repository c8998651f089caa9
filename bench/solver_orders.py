"""What each search order of the solver adds: the deals it decides that the others miss.

    python bench/solver_orders.py

For each deal that once motivated a search order (the solver's docstring names
them), it prints the verdict and states of the whole solver, of the solver
without that order at the same limit, and of the order's search alone. These
are figures, not promises: when the other searches improve, a deal they miss
today may be won without the order, which is progress, so they live here and
not in the tests (which check that each order wins its deal and that the whole
solver does).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from games.engine import new_position  # noqa: E402
from games.engine.solver import RULES, solve  # noqa: E402
from games.engine.solver._bristol import BristolGame  # noqa: E402
from games.engine.solver._gallery import GalleryGame  # noqa: E402
from games.engine.solver._search import BestFirst, DepthFirst, Discrepancies  # noqa: E402

#: (variant, seed, the rule of the order, the flags its search alone runs with, the limit)
CASES: list[tuple[str, int, str, frozenset[str], int]] = [
    ("bristol", 8586, "depth-first", frozenset(), 30_000),
    ("bristol", 8039, "cautious-depth-first", frozenset({"cautious"}), 35_000),
    ("bristol", 5028, "cautious-depth-first", frozenset({"cautious", "fans-first"}), 35_000),
    ("bristol", 7146, "deal-last-depth-first", frozenset({"deal-last"}), 35_000),
    ("belvedere", 5268, "deal-last-depth-first", frozenset({"deal-last"}), 35_000),
    ("bristol", 2271, "home-last-depth-first", frozenset({"home-last"}), 50_000),
    ("royal-parade", 54, "depth-first", frozenset(), 30_000),
    ("royal-parade", 373, "discrepancy-search", frozenset(), 30_000),
]


def alone(variant: str, seed: int, rule: str, flags: frozenset[str], limit: int) -> str:
    """The order's own search on the deal: its verdict and states, or unknown."""
    deal = new_position(variant, seed=seed)
    family = BristolGame if variant in ("bristol", "belvedere") else GalleryGame
    game = family(deal, RULES | flags)
    search = Discrepancies(game) if rule == "discrepancy-search" else DepthFirst(game)
    out = search.run(limit)
    return f"{out.verdict} in {search.nodes:,}" if out is not None else "unknown"


def main() -> int:
    print(f"{'deal':18} {'order':24} {'whole solver':>18} {'without it':>18} {'alone':>18}")
    for variant, seed, rule, flags, limit in CASES:
        deal = new_position(variant, seed=seed)
        whole = solve(deal, max_nodes=limit * 3)
        without = solve(deal, max_nodes=limit, rules=RULES - {rule})
        print(
            f"{variant + ' ' + str(seed):18} {rule:24} "
            f"{whole.verdict.value + ' in ' + format(whole.nodes, ','):>18} "
            f"{without.verdict.value + ' in ' + format(without.nodes, ','):>18} "
            f"{alone(variant, seed, rule, flags, limit):>18}"
        )
    bristol = new_position("bristol", seed=8586)
    best = BestFirst(BristolGame(bristol, RULES)).run(30_000)
    print(f"bristol 8586, the best-first search alone at 30,000: {best or 'unknown'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
