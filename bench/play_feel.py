"""How play feels: clicks to finish a won-out game, before and after "Finish".

    .venv/bin/python bench/play_feel.py clicks            # engine only, a few seconds

``clicks``: for the first seeds the solver wins, play its line up to the first
won-out position (``games.engine.finish_line``) and count the clicks that end the
game: before, one double click (two clicks) per card left to send home; after,
one click on Finish, and none at all when "cards home automatically" plays each
of them as a safe move.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.engine import finish_line, new_position, safe_moves  # noqa: E402
from games.engine.solver import solve_seed  # noqa: E402


def won_out(variant: str, seed: int) -> tuple[int, int] | None:
    """(cards left to send home, of them not safe when their turn comes) at the first
    won-out position of the solver's line, or None if the solver does not win."""
    line = solve_seed(variant, seed).line
    if not line:
        return None
    pos = new_position(variant, seed=seed)
    for move in line:
        finish = finish_line(pos)
        if finish:
            unsafe = 0
            for step in finish:
                unsafe += step not in safe_moves(pos)
                pos = pos.apply(step)
            return len(finish), unsafe
        pos = pos.apply(move)
    return None


def clicks(seeds: int) -> None:
    print(f"{'variant':<18}{'games':>6}{'cards left':>12}{'before':>9}{'after':>7}{'auto':>6}")
    for variant in ("bristol", "belvedere", "picture-gallery", "mod3"):
        found = [r for s in range(1, 1 + seeds) if (r := won_out(variant, s))]
        if not found:
            continue
        left = statistics.median(n for n, _ in found)
        auto = statistics.median(1 if unsafe else 0 for _, unsafe in found)
        print(f"{variant:<18}{len(found):>6}{left:>12}{2 * left:>9}{1:>7}{auto:>6}")
    print("before: a double click per card; after: one click on Finish; auto: with the setting")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["clicks"])
    parser.add_argument("--seeds", type=int, default=12)
    args = parser.parse_args()
    if args.what == "clicks":
        clicks(args.seeds)


if __name__ == "__main__":
    main()
