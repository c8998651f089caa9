"""Two commits side by side: CPU per move by part and capacity, over WebSocket and REST.

    bench/compare.sh OLD NEW                 # checks the commits out, then runs this
    python bench/compare.py --old DIR --new DIR [--budget 420]

Each tree (a checkout of one commit) gets its own fresh PostgreSQL database,
migrated by its own code, one daphne (sockets) and one gunicorn (REST, one
gthread worker of 8 threads, as in production) started from its folder, and
Redis (its keys carry the database's name, so both trees share one Redis
database). The clients are those of this tree's ``bench/ws.py`` and
``bench/api.py``, so both commits are played by the same client code.

Runs alternate between the trees, run by run, so both see the same machine:

1. **CPU per move by part**: ``--rounds`` runs of each tree at a fixed paced rate
   (``--cpu-rate-ws``, ``--cpu-rate-api``); server = the server process with its
   children, PostgreSQL = the backends connected to the tree's own database
   (their process title names it; other programs' databases, WAL writer and
   checkpointer are left out), client = this process. Read from /proc: CPU time,
   which other load on a shared machine inflates far less than latency.
2. **Capacity**: the highest paced rate at which p99 <= ``--p99`` ms with no
   errors, searched per tree (doubling, then bisecting geometrically until the
   bounds are within ``--precision``; a rate fails when ``--confirm`` + 1 probes
   of it in a row fail), probes alternating between the trees, bounded by
   ``--budget`` seconds per transport.

Every run, CPU run or probe, first plays ``--warmup`` seconds unmeasured (sockets
open, games started, the server's lazy imports, pools and held games filled), then
measures: a CPU run ``--cpu-seconds``, a probe at least ``--probe-seconds`` and
long enough for ``--probe-moves`` moves, so that its p99 is a rank among hundreds
of moves and not the slowest few of a cold start. The players are registered once
per tree (a password hash each) and play every run as themselves.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli, api, ws  # noqa: E402
from bench._play import Tally  # noqa: E402
from bench._server import percentile, shared_redis_arguments  # noqa: E402
from devtools.accounts import register  # noqa: E402
from devtools.servers import free_port, pg_admin, redis_answers, server_env, stop, wait_until_up  # noqa: E402

TRANSPORTS = ("ws", "api")


def pg_backends_cpu(database: str) -> float:
    """CPU seconds so far of the PostgreSQL backends connected to ``database``.

    A backend's process title reads ``postgres: [cluster:] <user> <database> <host> <state>``;
    the pooled connections of the servers live for the whole run.
    """
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            title = (proc / "cmdline").read_bytes().replace(b"\0", b" ").split()
            if not title or title[0] != b"postgres:" or database.encode() not in title:
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


#: What a tree serves: the product's ASGI (daphne) and WSGI (gunicorn) applications.
PRODUCT_APPS = {"ws": "patience_site.asgi:application", "api": "patience_site.wsgi:application"}


@dataclass
class Tree:
    """One commit's checkout with its database and servers.

    ``apps`` and ``settings`` name what its servers run (bench/floor.py runs the floor's);
    with ``shared_db`` it serves that tree's database instead of a fresh one of its own.
    """

    label: str
    folder: Path
    apps: dict[str, str] = field(default_factory=lambda: dict(PRODUCT_APPS))
    settings: str = "patience_site.settings"
    shared_db: Tree | None = None
    database: str = ""
    env: dict[str, str] = field(default_factory=dict)
    servers: dict[str, subprocess.Popen] = field(default_factory=dict)
    bases: dict[str, str] = field(default_factory=dict)
    tokens: list[str] = field(default_factory=list)

    def start(self, args: argparse.Namespace) -> None:
        if self.shared_db is not None:
            self.env = {**self.shared_db.env, "DJANGO_SETTINGS_MODULE": self.settings}
        else:
            self.database = f"patience_cmp_{self.label}_{os.getpid()}"
            pg_admin(args.pg_url, f'CREATE DATABASE "{self.database}"')
            self.env = server_env(
                database_url=f"{args.pg_url}/{self.database}",
                redis_url=args.redis_url if redis_answers(args.redis_url) else None,
                settings=self.settings,
            )
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                cwd=self.folder,
                env=self.env,
                check=True,
            )
        commands = {
            "ws": ["-m", "daphne", "-b", "127.0.0.1", "-p", "{port}", self.apps["ws"]],
            "api": ["-m", "gunicorn", "-b", "127.0.0.1:{port}", "--worker-class", "gthread"]
            + ["--workers", "1", "--threads", "8", self.apps["api"]],
        }
        for transport, command in commands.items():
            port = free_port()
            cmd = [sys.executable] + [c.format(port=port) for c in command]
            self.servers[transport] = subprocess.Popen(
                cmd,
                cwd=self.folder,
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            self.bases[transport] = f"http://127.0.0.1:{port}"
        for transport, server in self.servers.items():
            wait_until_up(server, self.bases[transport])
        if self.shared_db is None:
            with ThreadPoolExecutor(max_workers=4) as pool:  # a password hash each: a few at once
                names = [f"cmp-{uuid.uuid4().hex[:12]}" for _ in range(args.clients)]
                self.tokens = list(pool.map(lambda n: register(self.bases["api"], n), names))

    @property
    def db_name(self) -> str:
        """The database its servers use."""
        return self.shared_db.database if self.shared_db is not None else self.database

    def stop(self, args: argparse.Namespace) -> None:
        stop(list(self.servers.values()))
        if self.database:
            pg_admin(args.pg_url, f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    def run(
        self, transport: str, rate: float, seconds: float, args: argparse.Namespace
    ) -> dict[str, Any]:
        """One paced run of the play benchmark after a warm-up; its figures (``measure``)."""
        options = argparse.Namespace(
            clients=args.clients,
            rate=rate,
            seconds=seconds,
            warmup=args.warmup,
            games=None,
            variant="bristol",
            cap=400,
            seed=1,
            baseline=0,
        )
        server = self.servers[transport]

        def play() -> tuple[list[Tally], float, dict[str, float]]:
            if transport == "ws":
                return asyncio.run(
                    ws.run_players([self.bases["ws"]], options, [server.pid], self.tokens)
                )
            phase, _ = api.run_clients(self.bases["api"], options, server.pid, self.tokens)
            return phase.tallies, phase.wall, phase.cpu

        return measure(self.db_name, rate, play)


def measure(
    database: str, rate: float, play: Callable[[], tuple[list[Tally], float, dict[str, float]]]
) -> dict[str, Any]:
    """Figures of one run: moves, p99, errors, CPU seconds by part (PostgreSQL: the
    backends of ``database``)."""
    pg_before = pg_backends_cpu(database)
    tallies, wall, cpu = play()
    cpu["postgres"] = pg_backends_cpu(database) - pg_before
    latencies = sorted(x for t in tallies for x in t.latencies_ms)
    errors = [e for t in tallies for e in t.errors]
    return {
        "rate": rate,
        "moves": len(latencies),
        "moves_per_s": len(latencies) / wall if wall else 0.0,
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "games_started": sum(t.games_started for t in tallies),
        "cpu_s": {k: cpu[k] for k in ("server", "postgres", "client")},
    }


# -- capacity search ----------------------------------------------------------------------


@dataclass
class Search:
    """Bounds on one tree's capacity: ``passed`` held, ``failed`` did not.

    A rate fails only when ``confirm + 1`` probes of it in a row fail: on a machine
    shared with other work, one slow second of someone else's is not the server's limit.
    """

    start: float
    precision: float
    confirm: int = 1
    passed: float = 0.0
    failed: float = math.inf
    doubt: tuple[float, int] | None = None  # a rate that failed, and how often so far
    probes: list[dict[str, Any]] = field(default_factory=list)

    def next_rate(self) -> float | None:
        """The next rate to try, None when the bounds are close enough."""
        if self.doubt is not None:
            return self.doubt[0]
        if self.failed == math.inf:
            return self.passed * 2 if self.passed else self.start
        if not self.passed:
            return self.failed / 2 if self.failed > 5 else None
        if self.failed / self.passed <= 1 + self.precision:
            return None
        return round(math.sqrt(self.passed * self.failed))

    def record(self, figures: dict[str, Any], p99_limit: float) -> None:
        self.probes.append(figures)
        ok = figures["errors"] == 0 and figures["moves"] > 0 and figures["p99_ms"] <= p99_limit
        rate = figures["rate"]
        if ok:
            self.passed, self.doubt = max(self.passed, rate), None
            return
        fails = self.doubt[1] + 1 if self.doubt is not None else 1
        if fails > self.confirm:
            self.failed, self.doubt = min(self.failed, rate), None
        else:
            self.doubt = (rate, fails)


def capacity(trees: list[Tree], transport: str, args: argparse.Namespace) -> dict[str, Search]:
    start = args.start_ws if transport == "ws" else args.start_api
    searches = {t.label: Search(start, args.precision, args.confirm) for t in trees}
    deadline = time.monotonic() + args.budget
    while time.monotonic() < deadline:
        progressed = False
        for tree in trees:
            rate = searches[tree.label].next_rate()
            if rate is None or time.monotonic() >= deadline:
                continue
            seconds = max(args.probe_seconds, args.probe_moves / rate)
            figures = tree.run(transport, rate, seconds, args)
            searches[tree.label].record(figures, args.p99)
            progressed = True
            print(
                f"    {transport} {tree.label:>10} @ {rate:6g}/s: {figures['moves_per_s']:6.1f} "
                f"moves/s, p99 {figures['p99_ms']:7.1f} ms, errors {figures['errors']}",
                flush=True,
            )
        if not progressed:
            break
    return searches


# -- report -------------------------------------------------------------------------------


def per_move(runs: list[dict[str, Any]]) -> dict[str, float]:
    """CPU milliseconds per move by part over several runs."""
    moves = sum(r["moves"] for r in runs)
    parts = ("server", "postgres", "client")
    return {
        p: 1000 * sum(r["cpu_s"][p] for r in runs) / moves if moves else math.nan for p in parts
    }


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--old", required=True, type=Path, help="checkout of the old commit")
    parser.add_argument("--new", required=True, type=Path, help="checkout of the new commit")
    parser.add_argument("--old-label", default="old")
    parser.add_argument("--new-label", default="new")
    parser.add_argument("--transports", default="ws,api", help="ws, api or both (ws,api)")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients (20)")
    parser.add_argument("--rounds", type=int, default=2, help="CPU runs per tree (2)")
    parser.add_argument("--cpu-seconds", type=float, default=15.0, help="length of a CPU run")
    parser.add_argument("--cpu-rate-ws", type=float, default=100.0, help="rate of CPU runs (ws)")
    parser.add_argument("--cpu-rate-api", type=float, default=50.0, help="rate of CPU runs (api)")
    parser.add_argument("--p99", type=float, default=50.0, help="capacity's p99 limit, ms (50)")
    parser.add_argument(
        "--warmup", type=float, default=5.0, help="unmeasured play before every run, s (5)"
    )
    parser.add_argument(
        "--probe-seconds", type=float, default=15.0, help="shortest measured probe, s (15)"
    )
    parser.add_argument(
        "--probe-moves", type=int, default=500, help="fewest moves a probe is long enough for"
    )
    parser.add_argument("--start-ws", type=float, default=50.0, help="first probe rate (ws)")
    parser.add_argument("--start-api", type=float, default=25.0, help="first probe rate (api)")
    parser.add_argument("--precision", type=float, default=0.15, help="stop at hi/lo <= 1+this")
    parser.add_argument(
        "--confirm", type=int, default=1, help="probes more a rate fails before it counts (1)"
    )
    parser.add_argument(
        "--budget", type=float, default=420.0, help="seconds of capacity search per transport (420)"
    )
    parser.add_argument("--no-capacity", action="store_true", help="CPU runs only")
    shared_redis_arguments(parser)
    args = parser.parse_args(argv)

    trees = [Tree(args.old_label, args.old.resolve()), Tree(args.new_label, args.new.resolve())]
    transports = [t for t in args.transports.split(",") if t in TRANSPORTS]
    out: dict[str, Any] = {"load_before": os.getloadavg()}
    try:
        for tree in trees:
            tree.start(args)
        for transport in transports:
            rate = args.cpu_rate_ws if transport == "ws" else args.cpu_rate_api
            print(f"{transport}: CPU runs at {rate:g} moves/s, {args.rounds} rounds", flush=True)
            runs: dict[str, list[dict[str, Any]]] = {t.label: [] for t in trees}
            for _ in range(args.rounds):
                for tree in trees:
                    figures = tree.run(transport, rate, args.cpu_seconds, args)
                    runs[tree.label].append(figures)
                    print(
                        f"    {transport} {tree.label:>10}: {figures['moves']} moves, p99 "
                        f"{figures['p99_ms']:.1f} ms, errors {figures['errors']}",
                        flush=True,
                    )
            searches = {} if args.no_capacity else capacity(trees, transport, args)
            out[transport] = {
                label: {
                    "cpu_ms_per_move": per_move(runs[label]),
                    "cpu_runs": runs[label],
                    "capacity": searches[label].passed if searches else None,
                    "capacity_failed_at": searches[label].failed if searches else None,
                    "probes": searches[label].probes if searches else [],
                }
                for label in runs
            }
    finally:
        for tree in trees:
            tree.stop(args)
    out["load_after"] = os.getloadavg()
    print_report(out, trees, transports)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str))
    return 0


def print_report(out: dict[str, Any], trees: list[Tree], transports: list[str]) -> None:
    old, new = (t.label for t in trees)
    cores = os.cpu_count() or 1
    print(f"\nload {out['load_before']} -> {out['load_after']}, {os.cpu_count()} CPUs")
    print(f"{'':22}{old:>24}{new:>24}   new/old")
    for transport in transports:
        figures = out[transport]
        cpu = {label: figures[label]["cpu_ms_per_move"] for label in (old, new)}
        for part in ("server", "postgres", "client"):
            a, b = cpu[old][part], cpu[new][part]
            change = f"{b / a:7.2f}" if a else ""
            print(f"{transport:4}{part + ' ms/move':18}{a:24.2f}{b:24.2f}   {change}")
        ratio = {
            k: v["server"] / v["postgres"] if v["postgres"] else math.nan for k, v in cpu.items()
        }
        print(f"{transport:4}{'server / postgres':18}{ratio[old]:24.2f}{ratio[new]:24.2f}")
        # What the cores could serve doing only this (no client): independent of other load.
        ceiling = {k: 1000 * cores / (v["server"] + v["postgres"]) for k, v in cpu.items()}
        gain = ceiling[new] / ceiling[old]
        row = f"{ceiling[old]:24.0f}{ceiling[new]:24.0f}   {gain:7.2f}"
        print(f"{transport:4}{'CPU ceiling /s':18}{row}")
        cap = {label: figures[label]["capacity"] for label in (old, new)}
        if cap[old] is not None:
            fail = {label: figures[label]["capacity_failed_at"] for label in (old, new)}
            cells = [f"{cap[x]:g} (fails {fail[x]:g})" for x in (old, new)]
            gain = cap[new] / cap[old] if cap[old] else math.inf
            print(f"{transport:4}{'capacity moves/s':18}{cells[0]:>24}{cells[1]:>24}   {gain:7.2f}")


if __name__ == "__main__":
    sys.exit(main())
