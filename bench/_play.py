"""Shared by the two play benchmarks (``api`` over HTTP, ``ws`` over sockets).

What a client measured, the command-line options both take, and the report
both print: moves/s, latency percentiles, games, the CPU per move by part and
the machine's ceiling, errors, PASS/FAIL against the issue's targets.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._server import RATE_HELP, cpu_lines, pacing, percentile, server_arguments


@dataclass
class Tally:
    """What one client measured."""

    latencies_ms: list[float] = field(default_factory=list)
    games_started: int = 0
    games_ended: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    def error(self, what: str, response: Any = None) -> None:
        """Count an error; with an HTTP response, its status and the start of its body."""
        if response is not None:
            what = f"{what}: HTTP {response.status_code} {response.text[:200]}"
        self.errors.append(what)


def arguments(description: str, *, redis_db: int) -> argparse.ArgumentParser:
    """The options of both play benchmarks; each adds its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--clients", "--players", type=int, default=20, help="concurrent clients (20)"
    )
    parser.add_argument("--games", type=int, help="games per client (default: no limit)")
    parser.add_argument(
        "--seconds", type=float, help="stop after this long (default: 20 s unless --games)"
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=3.0,
        help="play this long unmeasured first: sockets open, games started, pools filled (3)",
    )
    parser.add_argument("--variant", default="bristol")
    parser.add_argument("--cap", type=int, default=400, help="resign a game after N moves")
    parser.add_argument("--seed", type=int, default=1, help="seed of the clients' choices")
    parser.add_argument("--rate", type=float, default=0, help=RATE_HELP)
    server_arguments(parser, redis_db=redis_db)
    return parser


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    args = parser.parse_args(argv)
    if args.seconds is None and args.games is None:
        args.seconds = 20.0
    return args


@dataclass
class Targets:
    moves_per_s: float
    p50_ms: float


def report(
    title: str,
    tallies: list[Tally],
    wall: float,
    cpu: dict[str, float],
    args: argparse.Namespace,
    info: dict[str, Any],
    targets: Targets,
    extra: list[str] | None = None,
) -> bool:
    """Print the figures (and write them as JSON with ``--json``); True if the targets are met."""
    latencies = sorted(x for t in tallies for x in t.latencies_ms)
    errors = [e for t in tallies for e in t.errors]
    ended = sum((t.games_ended for t in tallies), Counter())
    moves = len(latencies)
    rate = moves / wall if wall else 0.0
    p50 = percentile(latencies, 0.50)
    figures = {
        "clients": args.clients,
        "offered_moves_per_s": args.rate or None,
        "variant": args.variant,
        "seconds": round(wall, 2),
        "moves": moves,
        "moves_per_s": round(rate, 1),
        "p50_ms": round(p50, 2),
        "p90_ms": round(percentile(latencies, 0.90), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "max_ms": round(latencies[-1], 2) if latencies else None,
        "mean_ms": round(statistics.fmean(latencies), 2) if latencies else None,
        "games_started": sum(t.games_started for t in tallies),
        "games_ended": dict(ended),
        "errors": len(errors),
        "cpu_ms_per_move": {k: round(1000 * v / moves, 3) for k, v in cpu.items()}
        if moves
        else None,
        **info,
    }
    load = tuple(round(x, 2) for x in os.getloadavg())
    print(f"{title} ({platform.python_version()}, {os.cpu_count()} CPUs, load {load})")
    print(f"  server     {info.get('server')}  database {info.get('database', '-')}")
    print(f"  redis      {info.get('redis', '-')}")
    print(f"  clients    {args.clients} x {args.variant}, {wall:.1f} s, {pacing(args.rate)}")
    print(f"  moves      {moves}, {rate:.1f} moves/s   (target >= {targets.moves_per_s:g})")
    print(
        f"  latency    p50 {p50:.2f} ms (target <= {targets.p50_ms:g})   "
        f"p90 {figures['p90_ms']} ms   p99 {figures['p99_ms']} ms   max {figures['max_ms']} ms"
    )
    print(f"  games      {figures['games_started']} started, ended: {dict(ended)}")
    for line in [*cpu_lines(cpu, moves), *(extra or [])]:
        print(line)
    print(f"  errors     {len(errors)}")
    for e in errors[:5]:
        print(f"    {e}")
    ok = rate >= targets.moves_per_s and p50 <= targets.p50_ms and not errors and moves > 0
    print("PASS" if ok else "FAIL")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return ok
