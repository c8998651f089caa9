"""How far a plain search must go to decide the Bristol family's hard deals.

    python bench/explore_bristol.py bristol 289 297 2271          # 10,000,000 states
    python bench/explore_bristol.py belvedere 1403 --states 50000000 --orders 0,2

A yardstick for the solver, not part of it: ``bench/explore_bristol.cpp`` (built here
with g++ into a temporary folder) searches each deal depth first with only the cheap
rules (symmetry, safe-foundation, lone-fan, deal-early; no dead-end rule) at hundreds
of thousands of states a second, once per move order: 0 cards home first, 1 the deal
first, 2 cards onto fans first (the deal last in 0 and 2). Its states are distinct
states (the solver counts the states it generates, several times more). Every won line
is replayed through the engine before it is printed; a "lost" is no proof (the table
keeps hashes, see the C++ file). Needs g++ and 16 to 32 bytes of memory per state.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from games.engine import VARIANTS, Card, Family, Position, new_position  # noqa: E402
from games.engine.bristol import FOUNDATIONS, SOURCES, STOCK  # noqa: E402
from games.engine.cards import rank  # noqa: E402

SOURCE = Path(__file__).with_suffix(".cpp")
ORDER_NAMES = {0: "home first", 1: "deal first", 2: "fans first"}


def deal_line(seed: int, position: Position) -> str:
    """One input line of the explorer: the seed, the piles' ranks, foundations, stock."""
    piles = position.piles

    def ranks(cards: Iterable[Card]) -> str:
        return ",".join(str(rank(c)) for c in cards) or "-"

    found = [rank(piles[f][-1]) if piles[f] else 0 for f in FOUNDATIONS]
    return " ".join(
        [str(seed), *(ranks(piles[i]) for i in range(len(SOURCES)))]
        + [",".join(map(str, found)), ranks(reversed(piles[STOCK]))]
    )


def build(folder: Path) -> Path:
    """Compile the explorer; returns the binary's path."""
    binary = folder / "explore_bristol"
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(binary), str(SOURCE)], check=True)
    return binary


def unlimited_stack() -> None:
    """The explorer recurses once per state on its line, which can be long."""
    resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def main() -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument(
        "variant", choices=[v for v in VARIANTS if VARIANTS[v].family is Family.BRISTOL]
    )
    parser.add_argument("seeds", nargs="+", type=int)
    parser.add_argument("--states", type=int, default=10_000_000, help="distinct states per search")
    parser.add_argument("--orders", default="0,1,2", help="move orders, comma-separated")
    args = parser.parse_args()
    if shutil.which("g++") is None:
        print("g++ is needed to build the explorer", file=sys.stderr)
        return 2
    positions = {s: new_position(args.variant, seed=s) for s in args.seeds}
    stdin = "".join(deal_line(s, p) + "\n" for s, p in positions.items())
    table_bits = max(20, (2 * args.states).bit_length())
    print(f"{args.variant}, {len(args.seeds)} deals, {args.states:,} distinct states a search")
    print("order | seed | verdict | states | seconds")
    with tempfile.TemporaryDirectory() as folder:
        binary = build(Path(folder))
        for order in (int(o) for o in args.orders.split(",")):
            run = subprocess.Popen(
                [str(binary), str(args.states), str(table_bits), str(order)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                preexec_fn=unlimited_stack,
            )
            assert run.stdin is not None and run.stdout is not None
            run.stdin.write(stdin)
            run.stdin.close()
            for out in run.stdout:
                seed, verdict, states, seconds, *line = out.split()
                if verdict == "won":
                    moves = line[0].split(",") if line else []
                    if not positions[int(seed)].play(moves).is_won:
                        raise AssertionError(f"seed {seed}: the explorer's line does not win")
                print(
                    f"{ORDER_NAMES[order]} | {seed} | {verdict} | {int(states):,} | {seconds}",
                    flush=True,
                )
            if run.wait() != 0:
                raise RuntimeError(f"the explorer failed with status {run.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
