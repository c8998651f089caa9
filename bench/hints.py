"""Hint latency: the solver on mid-game practice positions, two commits side by side.

    python bench/hints.py                    # HEAD's solver against the working tree's
    python bench/hints.py --before 980ce08   # another commit as "before"
    python bench/hints.py --positions 50     # fewer positions per family

A hint is one :func:`games.engine.solver.solve` with the service's node budget
(``HINT_SOLVER_NODES``, 50,000 states). The positions are mid-game: deal ``seed`` of
Bristol and of Picture Gallery, then a fixed number of random legal moves (seeded, so
both sides get the same positions). Each side runs in a worker process of its own (the
"before" side on the solver of a ``git archive`` of that commit), and the positions go
to the two workers in turn, so a busy machine slows both alike. Printed per family and
side: hints decided (won or lost), p50 and p99 of the CPU time and of the wall time per
hint, and the states per hint.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402

REPO = _cli.ROOT
#: Random moves played from the deal to reach a mid-game position, by family.
MOVES = {"bristol": 15, "picture-gallery": 25}
NODES = 50_000


def worker() -> None:
    """Solve the positions read from stdin (JSON lines) with the solver on ``sys.path``."""
    from games.engine import new_position
    from games.engine.solver import solve

    for line in sys.stdin:
        variant, seed, moves = json.loads(line)
        pos = new_position(variant, seed=seed).play(moves)
        cpu, wall = time.process_time(), time.perf_counter()
        res = solve(pos, max_nodes=NODES)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(json.dumps([res.verdict.value, res.nodes, cpu, wall]), flush=True)


def positions(variant: str, count: int) -> list[tuple[str, int, list[str]]]:
    """Mid-game positions: the deal of each seed after seeded random legal moves."""
    from games.engine import new_position

    out: list[tuple[str, int, list[str]]] = []
    seed = 0
    while len(out) < count:
        rng = random.Random(seed)
        pos = new_position(variant, seed=seed)
        moves: list[str] = []
        while len(moves) < MOVES[variant] and pos.legal_moves:
            move = str(rng.choice(pos.legal_moves))
            pos = pos.apply(move)
            moves.append(move)
        if not pos.is_over:
            out.append((variant, seed, moves))
        seed += 1
    return out


def start(python_path: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(python_path)}
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--worker"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=python_path,
    )


def ask(proc: subprocess.Popen, job: tuple[str, int, list[str]]) -> list:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(job) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--before", default="HEAD", help="commit of the 'before' solver")
    parser.add_argument("--positions", type=int, default=200, help="positions per family")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "archive", args.before, "games"], cwd=REPO, check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        sides = {"before": start(Path(tmp)), "after": start(REPO)}
        print(
            f"hints: {NODES} states each; before = {args.before}, after = working tree; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        print("family           side    decided  cpu p50  cpu p99  wall p50  wall p99  states p50")
        try:
            for variant in MOVES:
                rows: dict[str, list[list]] = {side: [] for side in sides}
                for job in positions(variant, args.positions):
                    for side, proc in sides.items():
                        rows[side].append(ask(proc, job))
                for side, got in rows.items():
                    cpu = [r[2] * 1000 for r in got]
                    wall = [r[3] * 1000 for r in got]
                    decided = sum(1 for r in got if r[0] != "unknown")
                    print(
                        f"{variant:16} {side:7} {decided:4}/{len(got):<4}"
                        f"{statistics.median(cpu):7.1f}ms {pct(cpu, 0.99):7.1f}ms"
                        f"{statistics.median(wall):8.1f}ms {pct(wall, 0.99):8.1f}ms"
                        f"{statistics.median(r[1] for r in got):10.0f}"
                    )
        finally:
            for proc in sides.values():
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
