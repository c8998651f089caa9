"""Where a move's server CPU goes, by layer, the floor next to the product: a profile.

    python bench/profile_move.py                      # ws: 100 moves/s, 20 s measured
    python bench/profile_move.py --transport api      # REST (gunicorn) at 50 moves/s
    python bench/profile_move.py --rounds 2 --seconds 30 --sample-rate 250

Starts the product's servers and the floor's (``bench/floor_app.py``) on one database
exactly as ``bench/floor.py`` does, and plays each at the same paced rate with the same
clients (``bench/ws.py``'s or ``bench/api.py``'s players for the product, game starts and
resignations included; the floor's one-game clients). During each measured run the
server process (daphne, or gunicorn with its worker) is sampled by py-spy from outside
without pausing it (``--gil --nonblocking``): the thread holding the GIL, whichever it
is: Channels runs sync code in worker threads, gunicorn in eight. Each round first plays
each side once without py-spy too, to show what the sampler costs the server.

Printed per move, in CPU milliseconds: the server's CPU from /proc (as ``bench/floor.py``
counts it); its user part split by the shares of py-spy's samples (a GIL sampler does
not see the kernel, whose system time is a row of its own), in four ways:

* **layer**: the library (or product module) of the innermost frame of each sample,
  skipping generic standard-library frames (``copy``, ``functools``, ``re``...) which
  count for their caller; asyncio, threads, logging and json keep their own rows;
* **product work**: the innermost frame of product code in the sample (``games.engine``,
  ``api.shapes``, ``games.events``, ``api.throttling``...) with everything it calls,
  or the framework's row for its own work (network, dispatch, event loop), also when a
  dispatcher runs below the product frame (an ASGI or Django middleware's ``__call__``);
* the thread holding the GIL (the event loop or a worker thread), and the hottest lines.

py-spy reads the server's memory from another process, so it adds little CPU to the
server itself, but its own CPU is on the same machine; a sample is one instant, so small
rows are noisy (a few samples): read the shares and differences, with /proc's totals.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._cli import ROOT  # noqa: E402
from bench._server import cpu_times, shared_redis_arguments, tree_cpu  # noqa: E402
from bench.compare import Tree, per_move  # noqa: E402
from bench.floor import FloorPlay, start_games, trees  # noqa: E402

#: Product code: the repository's own packages (the floor's app counts as its own row).
PRODUCT_PACKAGES = ("games", "api", "accounts", "patience_site", "web")

#: Installed packages (first folder under site-packages) by the layer they belong to.
LIBRARY_LAYERS = {
    **dict.fromkeys(
        ("daphne", "twisted", "autobahn", "txaio", "zope", "hyperlink", "automat"),
        "daphne/twisted/autobahn",
    ),
    "gunicorn": "gunicorn",
    "channels": "channels",
    "asgiref": "asgiref",
    **dict.fromkeys(("channels_redis", "redis", "msgpack"), "channels_redis/redis/msgpack"),
    **dict.fromkeys(("psycopg", "psycopg_pool", "psycopg_binary", "psycopg_c"), "psycopg"),
    "rest_framework": "DRF",
    "orjson": "json/orjson",
    "prometheus_client": "prometheus_client",
    "pythonjsonlogger": "logging",
    "circuitbreaker": "other libraries",
}

#: Standard-library modules that keep a row of their own; every other one is transparent.
STDLIB_LAYERS = {
    **dict.fromkeys(("asyncio", "selectors", "socket", "ssl"), "asyncio loop/sockets"),
    **dict.fromkeys(("concurrent", "threading", "queue"), "threads (pool, queues)"),
    "json": "json/orjson",
    "logging": "logging",
}

#: The layer rows in the order printed (network first, product code last).
LAYER_ORDER = (
    "daphne/twisted/autobahn",
    "gunicorn",
    "asyncio loop/sockets",
    "threads (pool, queues)",
    "asgiref",
    "channels",
    "channels_redis/redis/msgpack",
    "Django (other)",
    "Django ORM",
    "psycopg",
    "DRF",
    "json/orjson",
    "logging",
    "prometheus_client",
    "other libraries",
    "games.engine",
    "product code",
    "floor app code",
    "stdlib only",
)

#: Width of the report's first column.
W = 52
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>.*):(?P<line>\d+)\)$")
_STDLIB = re.compile(r"/lib/python3\.\d+/(?P<rest>.*)$")


def product_module(filename: str, root: Path = ROOT) -> str | None:
    """The dotted module of a file of the product (``games.engine`` for the whole engine),
    ``bench.floor_app`` for the floor's, or None for anything else."""
    try:
        parts = Path(filename).resolve().relative_to(root).with_suffix("").parts
    except ValueError:
        return None
    if parts == ("bench", "floor_app"):
        return "bench.floor_app"
    if not parts or parts[0] not in PRODUCT_PACKAGES:
        return None
    if parts[:2] == ("games", "engine"):
        return "games.engine"
    return ".".join(p for p in parts if p != "__init__")


def layer(filename: str, root: Path = ROOT) -> str | None:
    """The layer a frame's file belongs to, or None for a generic standard-library file,
    whose time counts for its caller."""
    module = product_module(filename, root)
    if module is not None:
        if module == "bench.floor_app":
            return "floor app code"
        return "games.engine" if module == "games.engine" else "product code"
    if "/site-packages/" in filename:
        package = filename.split("/site-packages/", 1)[1].split("/", 1)[0]
        if package == "django":
            return "Django ORM" if "/site-packages/django/db/" in filename else "Django (other)"
        return LIBRARY_LAYERS.get(package, "other libraries")
    stdlib = _STDLIB.search(filename)
    if stdlib is not None:
        top = stdlib["rest"].split("/", 1)[0].removesuffix(".py")
        return STDLIB_LAYERS.get(top)
    return None  # <frozen ...>, built-ins: transparent


def parse_frames(line: str) -> tuple[str, list[str], int]:
    """One line of py-spy's raw output (``--threads``): the kind of thread it was seen on,
    its frames' files, outermost first, and its count.

    The kind is "event loop" for the main thread (daphne's reactor, gunicorn's worker
    loop) and "worker threads" for the others (sync_to_async's pool, gthread's threads).
    """
    stack, _, count = line.rstrip("\n").rpartition(" ")
    parts = stack.split(";")
    thread = next((p for p in parts if p.startswith("thread (")), "")
    kind = "event loop" if thread.endswith(": MainThread") else "worker threads"
    files = [m["file"] for part in parts if (m := _FRAME.match(part))]
    return kind, files, int(count)


def short(frame: str, root: Path = ROOT) -> str:
    """A frame's label with its file relative to site-packages, the stdlib or the tree."""
    frame = re.sub(r"\(/\S*/site-packages/", "(", frame)
    frame = re.sub(r"\(/\S*/lib/python3\.\d+/", "(", frame)
    frame = frame.replace(f"({root}/", "(")
    return re.sub(r"\((?:[^/()]+/)+([^/()]+/[^/()]+:\d+)\)$", r"(\1)", frame)


def user_sys(pid: int) -> tuple[float, float]:
    """User and system CPU seconds so far of a process and its children (gunicorn's
    worker): system time is the kernel's share (sockets, thread wake-ups)."""
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    pids += [int(c) for c in children]
    times = [t for p in pids if (t := cpu_times(p)) is not None]
    return sum(t[0] for t in times), sum(t[1] for t in times)


#: Frames that dispatch to the code above them (servers, Channels' consumer loop, Django's
#: middleware chain): a product frame above one of them is a wrapper (an ASGI or Django
#: middleware), so the work below it is the framework's, not that product module's.
DISPATCH = (
    "/site-packages/channels/",
    "/site-packages/daphne/",
    "/site-packages/twisted/",
    "/site-packages/autobahn/",
    "/site-packages/gunicorn/",
    "/site-packages/django/core/handlers/",
    "/site-packages/django/utils/deprecation.py",
)

#: Product modules that serve their callers (Redis behind a circuit breaker): their
#: samples count for the product module that called them.
HELPERS = ("core.redis_guard",)

#: The product-work row of samples that no product module owns.
FRAMEWORK = "framework (no own frame owns it)"


def classify(files: list[str], root: Path = ROOT) -> tuple[str, str]:
    """A sample's layer (innermost frame that is not generic stdlib) and its product work:
    the innermost product module (a helper's caller), unless a dispatcher runs below it
    (then FRAMEWORK)."""
    found_layer, work = "stdlib only", FRAMEWORK
    for filename in reversed(files):
        kind = layer(filename, root)
        if kind is not None:
            found_layer = kind
            break
    owners = [(d, product_module(f, root)) for d, f in enumerate(files)]
    owners = [(d, m) for d, m in owners if m is not None]
    callers = [(d, m) for d, m in owners if m not in HELPERS]
    for depth, module in reversed(callers or owners):
        if module is not None:
            below = files[depth + 1 :]
            if not any(mark in f for f in below for mark in DISPATCH):
                work = module
            break
    return found_layer, work


@dataclass
class Profile:
    """The samples of one side (floor or product) by layer and by product work."""

    layers: Counter[str] = field(default_factory=Counter)
    work: Counter[str] = field(default_factory=Counter)
    threads: Counter[str] = field(default_factory=Counter)
    lines: Counter[str] = field(default_factory=Counter)  # innermost frame, shortened
    samples: int = 0
    sampled_s: float = 0.0  # samples / sampling rate: seconds some thread held the GIL
    cpu_s: float = 0.0  # the server's CPU over the same windows, from /proc
    user_s: float = 0.0
    sys_s: float = 0.0
    runs: list[dict[str, Any]] = field(default_factory=list)
    control_runs: list[dict[str, Any]] = field(default_factory=list)  # without py-spy
    spy_s: float = 0.0  # py-spy's own CPU

    def add(self, lines: Iterable[str], rate: float, root: Path = ROOT) -> None:
        """Count the samples of one py-spy raw output."""
        for line in lines:
            if not line.strip():
                continue
            kind, files, count = parse_frames(line)
            found_layer, work = classify(files, root)
            self.threads[kind] += count
            if files:
                self.lines[short(line.rpartition(" ")[0].split(";")[-1], root)] += count
            self.layers[found_layer] += count
            self.work[work] += count
            self.samples += count
            self.sampled_s += count / rate

    def user_fraction(self) -> float:
        """The user part of the server's CPU while sampled (the samples only see that)."""
        spent = self.user_s + self.sys_s
        return self.user_s / spent if spent else 1.0

    def server_ms(self) -> float:
        """Server CPU per move, ms (from /proc, over the measured runs)."""
        return per_move(self.runs)["server"]


class Sampler:
    """py-spy recording one server process (and its workers) from ``delay`` seconds on,
    until ``stop``; the server's CPU over the same window from /proc."""

    def __init__(self, pid: int, delay: float, rate: float, output: Path) -> None:
        self.pid, self.rate, self.output = pid, rate, output
        self.process: subprocess.Popen[bytes] | None = None
        self.cpu_before = 0.0
        self.user_sys_before = (0.0, 0.0)
        self.spy_cpu = 0.0  # py-spy's own CPU seconds, read when it is stopped
        self.timer = threading.Timer(delay, self._start)
        self.timer.start()

    def _start(self) -> None:
        command = [py_spy(), "record", "--pid", str(self.pid), "--rate", f"{self.rate:g}"]
        command += ["--format", "raw", "--full-filenames", "--subprocesses", "--nonblocking"]
        command += ["--threads", "--gil"]
        command += ["--output", str(self.output)]
        self.cpu_before = tree_cpu(self.pid) or 0.0
        self.user_sys_before = user_sys(self.pid)
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop(self) -> tuple[list[str], float, tuple[float, float]]:
        """The samples' lines, the server's CPU seconds while they were taken, and its
        user and system seconds."""
        self.timer.cancel()
        self.timer.join()  # a start under way finishes first
        if self.process is None:
            return [], 0.0, (0.0, 0.0)
        cpu = (tree_cpu(self.pid) or 0.0) - self.cpu_before
        user, system = user_sys(self.pid)
        split = (user - self.user_sys_before[0], system - self.user_sys_before[1])
        self.spy_cpu = sum(cpu_times(self.process.pid) or (0.0, 0.0))
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=60)
        if not self.output.exists():
            raise RuntimeError(f"py-spy wrote no profile: {err.decode()[-500:]}")
        return self.output.read_text().splitlines(), cpu, split


def py_spy() -> str:
    """The py-spy next to this interpreter (the dev set installs it), else on PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if found is None:
        raise SystemExit("py-spy is not installed (it is in the dev set: requirements/test.txt)")
    return found


def say(name: str, figures: dict[str, Any]) -> None:
    """One run's line in the progress."""
    print(
        f"    {name:>20}: {figures['moves']} moves, p99 {figures['p99_ms']:.1f} ms,"
        f" errors {figures['errors']} {figures['first_error'] or ''}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--transport", choices=("ws", "api"), default="ws")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients (20)")
    parser.add_argument("--rounds", type=int, default=1, help="profiled runs of each side (1)")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured run, s (20)")
    parser.add_argument("--warmup", type=float, default=5.0, help="unmeasured play first, s (5)")
    parser.add_argument("--rate", type=float, help="moves/s offered (ws 100, api 50)")
    parser.add_argument("--sample-rate", type=float, default=200.0, help="py-spy Hz (200)")
    parser.add_argument(
        "--no-control",
        action="store_true",
        help="skip the run of each side without py-spy before its profiled run",
    )
    parser.add_argument(
        "--keep-raw", help="keep py-spy's raw stacks in this folder (flamegraph.pl reads them)"
    )
    parser.add_argument("--label", default="prof", help="part of the database's name")
    shared_redis_arguments(parser)
    args = parser.parse_args(argv)
    rate = args.rate or (100.0 if args.transport == "ws" else 50.0)

    product, floor = trees(args.label)
    profiles = {"floor": Profile(), "product": Profile()}
    with tempfile.TemporaryDirectory(prefix="profile_move_") as scratch:
        tmp = args.keep_raw or scratch
        try:
            product.start(args)
            floor.start(args)
            floor_play = FloorPlay(floor, start_games(product))
            sides: dict[str, tuple[Tree, Tree | FloorPlay]] = {
                "floor": (floor, floor_play),
                "product": (product, product),
            }
            print(f"{args.transport}: {args.rounds} round(s) at {rate:g} moves/s", flush=True)
            for round_ in range(args.rounds):
                for name, (tree, runner) in sides.items():
                    profile = profiles[name]
                    if not args.no_control:  # the same run without the sampler: its cost
                        figures = runner.run(args.transport, rate, args.seconds, args)
                        profile.control_runs.append(figures)
                        say(name + " (no py-spy)", figures)
                    pid = tree.servers[args.transport].pid
                    output = Path(tmp) / f"{name}-{round_}.txt"
                    sampler = Sampler(pid, args.warmup, args.sample_rate, output)
                    try:
                        figures = runner.run(args.transport, rate, args.seconds, args)
                    finally:
                        lines, cpu, (user, system) = sampler.stop()
                    profile.add(lines, args.sample_rate)
                    profile.cpu_s += cpu
                    profile.user_s += user
                    profile.sys_s += system
                    profile.spy_s += sampler.spy_cpu
                    profile.runs.append(figures)
                    say(name, figures)
        finally:
            floor.stop(args)
            product.stop(args)
    print_report(args.transport, profiles)
    if args.json:
        Path(args.json).write_text(json.dumps(figures_of(profiles), indent=2, default=str))
    return 0


def figures_of(profiles: dict[str, Profile]) -> dict[str, Any]:
    """What ``--json`` writes: each side's runs and its samples by row."""
    return {
        name: {
            "runs": p.runs,
            "control_runs": p.control_runs,
            "user_s": p.user_s,
            "sys_s": p.sys_s,
            "samples": p.samples,
            "layers": dict(p.layers),
            "work": dict(p.work),
            "threads": dict(p.threads),
            "lines": dict(p.lines.most_common(100)),
        }
        for name, p in profiles.items()
    }


def _rows(counter: Counter[str], order: Iterable[str]) -> list[str]:
    return [name for name in order if name in counter]


def print_report(transport: str, profiles: dict[str, Profile], top: int = 15) -> None:
    """The tables: each side's server CPU per move from /proc, its user part split by the
    shares of the samples, its system part (the kernel: sockets, wake-ups) as one row."""
    floor, product = profiles["floor"], profiles["product"]
    totals = {name: p.server_ms() for name, p in profiles.items()}
    user = {name: totals[name] * p.user_fraction() for name, p in profiles.items()}
    print(f"\n{transport}: server CPU per move, ms (/proc), user time split by GIL samples")
    for name, p in profiles.items():
        pg = per_move(p.runs)["postgres"]
        coverage = p.sampled_s / p.user_s if p.user_s else float("nan")
        print(
            f"  {name:8} server {totals[name]:.2f} (user {user[name]:.2f}, system "
            f"{totals[name] - user[name]:.2f}), postgres {pg:.2f}, server/pg "
            f"{totals[name] / pg if pg else float('nan'):.2f}; {p.samples} samples = "
            f"{p.sampled_s:.1f} s with the GIL for {p.user_s:.1f} s user CPU ({coverage:.0%})"
        )
        moves = sum(r["moves"] for r in p.runs)
        spy = 1000 * p.spy_s / moves if moves else float("nan")
        line = f"  {'':8} py-spy's own CPU {spy:.2f} ms/move"
        if p.control_runs:
            c = per_move(p.control_runs)
            ratio = c["server"] / c["postgres"] if c["postgres"] else float("nan")
            line += (
                f"; the same runs without it: server {c['server']:.2f}, postgres "
                f"{c['postgres']:.2f}, server/pg {ratio:.2f}"
            )
        print(line)

    def table(title: str, rows: list[str], pick: str) -> None:
        head = f"{'floor':>8}{'product':>9}{'added':>8}{'% floor':>9}{'% prod':>8}"
        print(f"\n  {title:{W}}{head}")
        for row in rows:
            ms, share = {}, {}
            for name, p in profiles.items():
                counter: Counter[str] = getattr(p, pick)
                share[name] = counter[row] / p.samples if p.samples else 0.0
                ms[name] = share[name] * user[name]
            print(
                f"  {row[:W]:{W}}{ms['floor']:8.3f}{ms['product']:9.3f}"
                f"{ms['product'] - ms['floor']:+8.3f}"
                f"{share['floor'] * user['floor'] / totals['floor']:9.1%}"
                f"{share['product'] * user['product'] / totals['product']:8.1%}"
            )
        kernel = {name: totals[name] - user[name] for name in profiles}
        print(
            f"  {'kernel (system CPU, not sampled)':{W}}{kernel['floor']:8.3f}"
            f"{kernel['product']:9.3f}{kernel['product'] - kernel['floor']:+8.3f}"
            f"{kernel['floor'] / totals['floor']:9.1%}{kernel['product'] / totals['product']:8.1%}"
        )
        added = totals["product"] - totals["floor"]
        print(f"  {'total':{W}}{totals['floor']:8.3f}{totals['product']:9.3f}{added:+8.3f}")

    layers = _rows(floor.layers + product.layers, LAYER_ORDER)
    table("layer (innermost frame)", layers, "layers")
    work = floor.work + product.work
    ordered = sorted(
        (w for w in work if w != FRAMEWORK), key=lambda w: product.work[w], reverse=True
    )
    table("product work (innermost own frame)", [FRAMEWORK, *ordered], "work")
    table("thread holding the GIL", ["event loop", "worker threads"], "threads")
    hot = (floor.lines + product.lines).most_common(top)
    table(f"hottest lines (top {top})", [name for name, _ in hot], "lines")


if __name__ == "__main__":
    sys.exit(main())
