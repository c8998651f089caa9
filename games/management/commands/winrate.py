"""``manage.py winrate VARIANT --deals N --limit SECONDS``: share of deals the solver wins.

Deals are the seeds ``S, S+1, ..., S+N-1`` (``--start-seed S``, default 0), so a run is
reproducible; each is solved with the perfect-information solver within the limit.
Prints won, lost and unknown counts, the share won among the decided deals with its
95% Wilson score interval, the range the share could take if the unknowns went either
way, time per deal, and deals per second. ``--workers`` solves in parallel processes.

``--again CSV`` takes an earlier run's per-deal rows (``--csv``) and solves again, at the
given limits, only the deals they leave unknown; the report covers all of that run's
deals, the others as it had them. So a row at a high limit costs only its hard deals:
run every deal at a low limit first, then its unknowns at the high one.

Every "lost" is checked by a second, independent proof (an exhaustive search on the
engine's own moves, :mod:`games.engine.solver.proof`) within ``--proof-states``
positions: the report counts confirmed and unconfirmed losses apart, and a loss the
proof contradicts (it found a win) fails the command, since the figures would be wrong.
"""

from __future__ import annotations

import csv
import multiprocessing
import statistics
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper

from games.engine import SEED_LIMIT, VARIANTS, new_position
from games.engine.solver import Verdict, solve_seed
from games.engine.solver.proof import DEFAULT_MAX_STATES, Proof, prove_lost
from games.stats import wilson_interval

from .solve import seed_arg

Job = tuple[str, int, float | None, int | None, int]
Row = tuple[int, str, int, float, int, str]


def solve_job(job: Job) -> Row:
    """Solve one seed (runs in a worker process): seed, verdict, states, seconds, moves,
    and for a loss the second proof's outcome ("" otherwise, or when it is switched off)."""
    variant, seed, limit, nodes, proof_states = job
    res = solve_seed(variant, seed, max_seconds=limit, max_nodes=nodes)
    proof = ""
    if res.verdict is Verdict.LOST and proof_states:
        proof = prove_lost(new_position(variant, seed=seed), max_states=proof_states).outcome
    return seed, res.verdict.value, res.nodes, res.seconds, len(res.line), proof


class Progress:
    """A plain progress bar on a stream: redrawn in place on a terminal, else a line
    every ten percent."""

    WIDTH = 30

    def __init__(self, total: int, stream: OutputWrapper) -> None:
        self.total = total
        self.stream = stream
        self.tty = stream.isatty()
        self.start = time.perf_counter()
        self.last_draw = 0.0
        self.last_tenth = -1

    def update(self, done: int) -> None:
        now = time.perf_counter()
        rate = done / max(now - self.start, 1e-9)
        filled = self.WIDTH * done // self.total
        text = (
            f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{self.total} "
            f"{100 * done / self.total:5.1f}%  {rate:.1f} deals/s"
        )
        if self.tty:
            if now - self.last_draw >= 0.1 or done == self.total:
                end = "\n" if done == self.total else ""
                self.stream.write("\r" + text, ending=end)
                self.stream.flush()
                self.last_draw = now
        elif 10 * done // self.total != self.last_tenth:
            self.last_tenth = 10 * done // self.total
            self.stream.write(text)
            self.stream.flush()


class Command(BaseCommand):
    help = "Solve many deals of a variant and report the share won with a 95% Wilson interval."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("variant", choices=sorted(VARIANTS))
        parser.add_argument("--deals", type=int, default=None, help="number of deals")
        parser.add_argument("--limit", type=float, required=True, help="seconds per deal")
        parser.add_argument(
            "--nodes", type=int, default=None, help="also a limit in states per deal"
        )
        parser.add_argument("--start-seed", type=seed_arg, default=0, help="first seed")
        parser.add_argument("--workers", type=int, default=1, help="parallel processes")
        parser.add_argument("--csv", default=None, help="also write one row per deal here")
        parser.add_argument(
            "--again",
            default=None,
            help="an earlier run's --csv: solve only its unknown deals again, report all",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument(
            "--proof-states",
            type=int,
            default=DEFAULT_MAX_STATES,
            help="positions the second proof of a loss may visit (0: no second proof)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        variant, limit = options["variant"], options["limit"]
        workers, nodes = options["workers"], options["nodes"]
        seeds, kept = chosen_seeds(options)
        if limit <= 0:
            raise CommandError("--limit must be positive")
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        proof_states = options["proof_states"]
        jobs = [(variant, seed, limit, nodes, proof_states) for seed in seeds]
        progress = None if options["no_progress"] or not jobs else Progress(len(jobs), self.stderr)
        t0 = time.perf_counter()
        rows = solve_all(jobs, workers, progress)
        elapsed = time.perf_counter() - t0
        solved = len(rows)
        rows = sorted(rows + kept)
        if options["csv"]:
            write_rows(options["csv"], rows)
        if options["again"]:
            self.stdout.write(
                f"solved again: the {solved} deal(s) {options['again']} leaves unknown; "
                f"its other {len(kept)} as it has them"
            )
        for line in report(variant, rows, limit, nodes, workers, elapsed, solved):
            self.stdout.write(line)
        wrong = [r[0] for r in rows if r[5] == Proof.CONTRADICTED]
        if wrong:
            raise CommandError(
                f"the second proof won {len(wrong)} deal(s) the solver called lost "
                f"(seeds {', '.join(map(str, wrong))}): a pruning rule is unsound"
            )


def chosen_seeds(options: dict[str, Any]) -> tuple[list[int], list[Row]]:
    """The seeds to solve, and the rows an earlier run (``--again``) decided already."""
    deals, start = options["deals"], options["start_seed"]
    if options["again"]:
        if deals is not None:
            raise CommandError("--again takes its deals from the CSV: no --deals")
        kept = read_rows(options["again"])
        if not kept:
            raise CommandError(f"no deals in {options['again']}")
        seeds = [r[0] for r in kept if r[1] == Verdict.UNKNOWN]
        return seeds, [r for r in kept if r[1] != Verdict.UNKNOWN]
    if deals is None:
        raise CommandError("give --deals (or --again)")
    if deals < 1:
        raise CommandError("--deals must be at least 1")
    if start + deals > SEED_LIMIT:
        raise CommandError("the seeds would pass 2**64 - 1")
    return list(range(start, start + deals)), []


def solve_all(jobs: list[Job], workers: int, progress: Progress | None) -> list[Row]:
    """Solve every job, in this process or in ``workers`` processes (in any order)."""
    rows: list[Row] = []
    if workers == 1:
        for job in jobs:
            rows.append(solve_job(job))
            if progress:
                progress.update(len(rows))
        return rows
    with multiprocessing.Pool(workers) as pool:
        for row in pool.imap_unordered(solve_job, jobs, chunksize=1):
            rows.append(row)
            if progress:
                progress.update(len(rows))
    return rows


def write_rows(path: str, rows: list[Row]) -> None:
    """The per-deal rows as CSV (what ``--again`` reads back)."""
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["seed", "verdict", "nodes", "seconds", "moves", "proof"])
        out.writerows((s, v, n, f"{t:.4f}", m, p) for s, v, n, t, m, p in rows)


def read_rows(path: str) -> list[Row]:
    """The per-deal rows of an earlier run's ``--csv`` file."""
    try:
        with open(path, newline="") as fh:
            return [
                (int(r["seed"]), r["verdict"], int(r["nodes"]), float(r["seconds"]),
                 int(r["moves"]), r["proof"])
                for r in csv.DictReader(fh)
            ]  # fmt: skip
    except (OSError, KeyError, ValueError) as exc:
        raise CommandError(f"cannot read the rows of {path}: {exc}") from exc


def report(
    variant: str,
    rows: list[Row],
    limit: float,
    nodes: int | None,
    workers: int,
    elapsed: float,
    solved: int,
) -> list[str]:
    """The summary lines of a run (``solved``: how many of ``rows`` it solved)."""
    n = len(rows)
    won = sum(1 for r in rows if r[1] == Verdict.WON)
    lost = sum(1 for r in rows if r[1] == Verdict.LOST)
    unknown = n - won - lost
    decided = won + lost
    times = sorted(r[3] for r in rows)
    limits = f"{limit:g} s" + (f" or {nodes} states" if nodes else "")
    lines = [
        f"{variant}: {n} deals (seeds {rows[0][0]}..{rows[-1][0]}), limit {limits} per deal, "
        f"{workers} worker(s)",
        f"won {won}, lost {lost}, unknown {unknown} (counted apart)",
    ]
    proofs = [r[5] for r in rows if r[1] == Verdict.LOST]
    if lost and any(proofs):
        confirmed = proofs.count(Proof.CONFIRMED)
        contradicted = proofs.count(Proof.CONTRADICTED)
        lines.append(
            f"lost deals confirmed by the exhaustive search: {confirmed}, unconfirmed "
            f"(its state limit came first): {lost - confirmed - contradicted}, "
            f"contradicted: {contradicted}"
        )
    if decided:
        lo, hi = wilson_interval(won, decided)
        lines.append(
            f"share won of the decided deals: {100 * won / decided:.2f}% "
            f"(95% Wilson interval {100 * lo:.2f}% .. {100 * hi:.2f}%)"
        )
    lines.append(
        f"share won of all deals if every unknown were lost .. won: "
        f"{100 * won / n:.2f}% .. {100 * (won + unknown) / n:.2f}%"
    )
    lines.append(
        f"time per deal: median {statistics.median(times):.3f} s, "
        f"p95 {times[min(n - 1, int(0.95 * n))]:.3f} s, max {times[-1]:.3f} s"
    )
    lines.append(f"{solved / max(elapsed, 1e-9):.1f} deals/s ({elapsed:.1f} s in all)")
    return lines
