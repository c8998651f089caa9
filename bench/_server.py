"""Shared by the benchmarks that play against a real server (api, ws, load).

Their options and own servers (``devtools.servers``, shared with the end-to-end
tests), paced clients, percentiles, and CPU time of processes from /proc.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from devtools.servers import own_servers

RATE_HELP = (
    "offer this many moves/s in all, spread evenly over the clients, each move sent on a "
    "fixed schedule (latency counts from its scheduled time); default 0: every client "
    "sends its next move as soon as the answer is in (closed loop)"
)


class Pace:
    """A fixed schedule of sends for one paced client (open loop).

    With closed-loop clients (the default) the answer time is tied to the
    throughput: N clients that never pause wait N / throughput each on average,
    so at 20 clients a p50 of 10 ms needs about 2,000 moves/s whatever the
    server does. A paced client sends at fixed times instead, as players who
    think between moves do; its latency is counted from the scheduled time, so
    a server that falls behind shows its queue in the figures.
    """

    def __init__(self, rate: float, phase: float = 0.0) -> None:
        self.interval = 1.0 / rate
        self.next = time.perf_counter() + phase * self.interval

    def due(self) -> float:
        """Seconds until the next send (0 when it is due); the caller sleeps that long."""
        return max(self.next - time.perf_counter(), 0.0)

    def take(self) -> float:
        """The scheduled time of this send; the schedule moves on by one interval."""
        scheduled, self.next = self.next, self.next + self.interval
        return scheduled

    def resume(self) -> None:
        """After other work (a game start): missed sends are dropped, not owed."""
        self.next = max(self.next, time.perf_counter())

    def wait(self) -> float:
        """Sleep until the next send is due (threads); its scheduled time."""
        time.sleep(self.due())
        return self.take()


def pacing(rate: float) -> str:
    """How the clients send, for the report."""
    return f"paced: {rate:g} moves/s offered in all" if rate else "closed loop (no pauses)"


def choose(legal: list[str], rng: random.Random) -> str:
    """A random legal move; a move to a foundation when there is one (games then end)."""
    home = [m for m in legal if m.endswith("-f") or m.endswith("-a")]
    return rng.choice(home or legal)


def cpu_times(pid: int | None) -> tuple[float, float] | None:
    """User and system CPU time of a local process so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError, TypeError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def tree_cpu(pid: int) -> float | None:
    """CPU seconds so far of a local process and all its descendants (gunicorn's workers,
    solver worker processes); None if it is gone. Children that ended are counted when
    they were waited for (the ``cutime`` fields)."""
    stats: dict[int, tuple[int, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        own = sum(int(f) for f in fields[11:15]) / tick  # utime stime cutime cstime
        stats[int(stat.parent.name)] = (int(fields[1]), own)
    if pid not in stats:
        return None
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += stats[current][1]
        todo.extend(child for child, (parent, _) in stats.items() if parent == current)
    return total


def _cpu_by_command(commands: tuple[str, ...]) -> dict[str, float]:
    """CPU seconds so far of every process whose command name is one of ``commands``."""
    tick = os.sysconf("SC_CLK_TCK")
    found = dict.fromkeys(commands, 0.0)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended meanwhile
            continue
        name = text[text.find("(") + 1 : text.rfind(")")]
        if name in found:
            fields = text.rsplit(")", 1)[1].split()
            found[name] += (int(fields[11]) + int(fields[12])) / tick
    return found


class CpuAccount:
    """Where the CPU of a run went: the servers, PostgreSQL, Redis and this client.

    Read from /proc (Linux) at the start and the end of the run: CPU time, not
    wall-clock time, so other programs on the machine inflate it much less than
    the latencies. Their sum per move bounds what this machine can serve with
    every core busy (``cores / sum``), whatever the server's code does next.
    """

    COMMANDS = {"postgres": "postgres", "redis-server": "redis"}

    def __init__(self, server_pids: list[int]) -> None:
        self.server_pids = server_pids
        self.before = self._now()

    def _now(self) -> dict[str, float]:
        servers = [tree_cpu(pid) for pid in self.server_pids]
        parts = {"server": sum(t for t in servers if t is not None)}
        by_command = _cpu_by_command(tuple(self.COMMANDS))
        parts.update({self.COMMANDS[c]: v for c, v in by_command.items()})
        parts["client"] = sum(os.times()[:2])  # this process, all its threads
        return parts

    def spent(self) -> dict[str, float]:
        """CPU seconds of each part since the account was opened."""
        now = self._now()
        return {k: now[k] - self.before[k] for k in now if self.server_pids or k != "server"}


def cpu_lines(spent: dict[str, float], moves: int) -> list[str]:
    """The report's lines on the CPU per move and the machine's ceiling it implies."""
    if not moves:
        return []
    per = {k: 1000 * v / moves for k, v in spent.items()}
    total = sum(per.values())
    parts = ", ".join(f"{k} {v:.2f}" for k, v in per.items())
    cores = os.cpu_count() or 1
    ceiling = 1000 * cores / total if total else float("inf")
    return [
        f"  CPU/move   {parts} = {total:.2f} ms (game starts included)",
        f"  ceiling    {cores} cores / {total:.2f} ms = {ceiling:.0f} moves/s with every core "
        f"busy on this work alone",
    ]


def database_arguments(parser: argparse.ArgumentParser) -> None:
    """The settings module and PostgreSQL server of own servers (every benchmark that
    starts its own)."""
    parser.add_argument(
        "--settings",
        default="patience_site.settings",
        help="settings module of own servers, to try a change (importable from the repo root)",
    )
    parser.add_argument(
        "--pg-url",
        default=os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432"),
        help="PostgreSQL server for the database of own servers (no database name)",
    )


def shared_redis_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the benchmarks whose several trees share one Redis (compare, floor)."""
    database_arguments(parser)
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/15"),
        help="Redis shared by the trees' servers (their keys carry their database's name)",
    )
    parser.add_argument("--json", help="also write the figures to this JSON file")


def server_arguments(parser: argparse.ArgumentParser, *, redis_db: int) -> None:
    """The options of the benchmarks that start their own servers (and write JSON)."""
    database_arguments(parser)
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL", f"redis://127.0.0.1:6379/{redis_db}"),
        help="Redis of own servers (cache, channel layer, boards), if it answers ('' for none)",
    )
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database")
    parser.add_argument("--server-log", help="write the servers' output to this file")
    parser.add_argument("--json", help="also write the figures to this JSON file")


@contextmanager
def servers_for(
    args: argparse.Namespace,
    *,
    db_prefix: str,
    count: int = 1,
    server: str = "daphne",
    dailies: bool = False,
    extra_env: dict[str, str] | None = None,
    start_timeout: float = 60.0,
) -> Iterator[tuple[list[str], dict[str, Any]]]:
    """``own_servers`` as the options of ``server_arguments`` ask; ``info["server"]`` says
    what runs where."""
    with own_servers(
        db_prefix=db_prefix,
        pg_url=args.pg_url,
        redis_url=args.redis_url,
        count=count,
        settings=args.settings,
        server_log=args.server_log,
        keep_db=args.keep_db,
        server=server,
        dailies=dailies,
        extra_env=extra_env,
        start_timeout=start_timeout,
    ) as (bases, info):
        n = len(bases)
        kind = f"{server} (1 gthread worker, 8 threads)" if server == "gunicorn" else server
        info["server"] = f"{n} {kind} process{'es' if n > 1 else ''} at {', '.join(bases)}"
        yield bases, info


def percentile(sorted_values: list[float], q: float) -> float:
    """The value at quantile ``q`` of already sorted values (nearest rank; NaN if none)."""
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]
