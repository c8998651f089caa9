"""Solver benchmark: time per deal and share decided, per variant, over fixed seeds.

    python bench/solver.py                     # all six variants (about 15 minutes)
    python bench/solver.py --quick             # fewer deals (about 2 minutes)
    python bench/solver.py --variant bristol --deals 2000
    python -m bench.solver --workers 2         # two processes (the machine has 2 cores)

Every deal of seeds ``0..N-1`` is solved once with the variant's time limit (1 s for
the Bristol family, 5 s for the Gallery family) by :func:`games.engine.solver.solve`.
A row gives the deals, the shares won / lost / unknown, the share decided, and the
median, p95 and max of the wall-clock time per deal (the time the limit applies to);
the CPU column is the median CPU time per deal of the solving process, which a busy
machine disturbs less. Each row with a target (bench/README.md) prints PASS or FAIL;
the exit status is 1 if one fails. The header shows the load average: on a busy
machine the times grow.
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from games.engine import VARIANTS, Family, new_position  # noqa: E402
from games.engine.solver import solve  # noqa: E402

#: Time limit per deal, by family.
LIMIT_S = {Family.BRISTOL: 1.0, Family.GALLERY: 5.0}
#: (minimum share decided, maximum p95 seconds or None) for the variants with targets.
TARGETS = {"bristol": (0.995, 0.100), "picture-gallery": (0.95, None)}
FULL_DEALS = {Family.BRISTOL: 2000, Family.GALLERY: 200}
QUICK_DEALS = {Family.BRISTOL: 300, Family.GALLERY: 40}


def solve_one(job: tuple[str, int, float]) -> tuple[str, float, float]:
    """Verdict, wall seconds and CPU seconds of one deal (runs in a worker)."""
    variant, seed, limit = job
    pos = new_position(variant, seed=seed)
    cpu = time.process_time()
    res = solve(pos, max_seconds=limit)
    return res.verdict.value, res.seconds, time.process_time() - cpu


@dataclass
class Row:
    variant: str
    deals: int
    limit: float
    won: int
    lost: int
    unknown: int
    median: float
    p95: float
    max: float
    cpu_median: float

    @property
    def decided(self) -> float:
        return (self.won + self.lost) / self.deals

    @property
    def result(self) -> str:
        target = TARGETS.get(self.variant)
        if target is None:
            return ""
        share, p95 = target
        ok = self.decided >= share and (p95 is None or self.p95 <= p95)
        return "PASS" if ok else "FAIL"


def measure(variant: str, deals: int, workers: int) -> Row:
    limit = LIMIT_S[VARIANTS[variant].family]
    jobs = [(variant, seed, limit) for seed in range(deals)]
    if workers > 1:
        with multiprocessing.Pool(workers) as pool:
            out = pool.map(solve_one, jobs, chunksize=4)
    else:
        out = [solve_one(job) for job in jobs]
    times = sorted(t for _, t, _ in out)
    return Row(
        variant=variant,
        deals=deals,
        limit=limit,
        won=sum(v == "won" for v, _, _ in out),
        lost=sum(v == "lost" for v, _, _ in out),
        unknown=sum(v == "unknown" for v, _, _ in out),
        median=statistics.median(times),
        p95=times[min(deals - 1, int(0.95 * deals))],
        max=times[-1],
        cpu_median=statistics.median(c for _, _, c in out),
    )


def render(rows: Sequence[Row]) -> str:
    head = (
        f"{'variant':<26}{'deals':>6}{'limit':>7}{'won':>8}{'lost':>7}{'unknown':>9}"
        f"{'decided':>9}{'median':>9}{'p95':>9}{'max':>8}{'cpu med':>9}  result"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.variant:<26}{r.deals:>6}{r.limit:>6.0f}s"
            f"{100 * r.won / r.deals:>7.2f}%{100 * r.lost / r.deals:>6.2f}%"
            f"{100 * r.unknown / r.deals:>8.2f}%{100 * r.decided:>8.2f}%"
            f"{1000 * r.median:>7.1f}ms{1000 * r.p95:>7.1f}ms{r.max:>7.2f}s"
            f"{1000 * r.cpu_median:>7.1f}ms  {r.result}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer deals")
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS), default=None)
    parser.add_argument("--deals", type=int, default=None, help="deals per variant")
    parser.add_argument("--workers", type=int, default=1, help="parallel processes")
    args = parser.parse_args(argv)
    variants = args.variant or list(VARIANTS)
    counts = QUICK_DEALS if args.quick else FULL_DEALS
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"solver benchmark - Python {platform.python_version()} - {os.cpu_count()} CPUs - "
        f"load average {load} - {args.workers} worker(s)"
    )
    rows = []
    for variant in variants:
        deals = args.deals or counts[VARIANTS[variant].family]
        t0 = time.perf_counter()
        rows.append(measure(variant, deals, args.workers))
        print(f"  {variant}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(render(rows))
    print(
        "targets: bristol >= 99.5% decided within 1 s and p95 <= 100 ms; "
        "picture-gallery >= 95% decided within 5 s"
    )
    return 1 if any(r.result == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
