"""REST play benchmark: concurrent clients play practice games to the end over HTTP.

    python bench/api.py                       # own gunicorn server on PostgreSQL, 20 clients
    python bench/api.py --server daphne       # daphne, as scripts/serve.sh runs it
    python bench/api.py --clients 40 --seconds 30
    python bench/api.py --games 5             # each client plays 5 games, then stops
    python bench/api.py --url http://127.0.0.1:8000   # an already running server
    python bench/api.py --baseline 10         # first 10 s of the cheapest request

Without ``--url`` it creates a fresh PostgreSQL database ``patience_bench_<pid>``
(server given by ``--pg-url``), migrates it, starts one server process on a free
port (gunicorn with one gthread worker of 8 threads, as the production ``http``
service; or daphne with ``--server daphne``) with production settings
(DEBUG=False, Redis for the cache and channel layer when ``--redis-url``
answers, rate limits raised out of the way), and drops the database at the end.

Each client (a thread with its own ``requests.Session``) registers its own user
(CSRF dance, like a browser), creates a personal API token, then plays practice
Bristol games with random legal moves taken from each response (a move home
first when there is one), until the game is won or lost, or resigns it after
``--cap`` moves. Every move request is timed; a move counts as validated when
the server answers 200 with the next ply. Printed: moves/s, p50/p90/p99/max
latency, games finished, and the count of errors (any other answer), with the
server's CPU time per move (from /proc: less sensitive to other load on the
machine than the wall-clock figures). ``--baseline SECONDS`` first times the
cheapest authenticated request (GET /api/v1/variants/) the same way: the
ceiling of the stack (the server, Django's handler, middleware, DRF, token
authentication, throttles) before any game work.

The exit status is 1 when a target (bench/README.md) is missed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import requests

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from bench import _play  # noqa: E402
from bench._play import Tally  # noqa: E402
from bench._server import CpuAccount, Pace, choose, percentile, servers_for  # noqa: E402
from devtools.accounts import register  # noqa: E402

TARGETS = _play.Targets(moves_per_s=300.0, p50_ms=10.0)


# -- the clients ------------------------------------------------------------------------


def client_session(
    base: str, token: str | None = None
) -> tuple[requests.Session | None, str | None]:
    """A session that sends a personal token: ``token``, or that of a newly registered user."""
    session = requests.Session()
    session.trust_env = False
    if token is None:
        try:
            token = register(base, f"bench-{uuid.uuid4().hex[:12]}", session=session, timeout=600)
        except (RuntimeError, requests.RequestException) as exc:
            return None, f"register: {exc}"
    session.headers["Authorization"] = f"Token {token}"
    return session, None


def play(
    base: str,
    index: int,
    session: requests.Session,
    args: argparse.Namespace,
    window: tuple[float, float],
) -> Tally:
    """One client: play games until the window's end or the game count; moves sent before
    the window's start (the warm-up) are not counted."""
    measured_from, deadline = window
    tally = Tally()
    rng = random.Random(args.seed * 1000 + index)
    games = 0
    pace = Pace(args.rate / args.clients, index / args.clients) if args.rate else None
    while time.perf_counter() < deadline and (args.games is None or games < args.games):
        r = session.post(f"{base}/api/v1/games/", json={"variant": args.variant}, timeout=30)
        if r.status_code != 201:
            tally.error("start", r)
            continue
        games += 1
        tally.games_started += 1
        state = r.json()
        if pace:
            pace.resume()
        game_url = f"{base}/api/v1/games/{state['id']}"
        while state["status"] == "playing" and time.perf_counter() < deadline:
            if state["ply"] >= args.cap:
                r = session.post(f"{game_url}/resign/", timeout=30)
                if r.status_code != 200:
                    tally.error("resign", r)
                    break
                state = r.json()
                break
            body = {"move": choose(state["legal_moves"], rng), "ply": state["ply"]}
            t0 = pace.wait() if pace else time.perf_counter()
            try:
                r = session.post(f"{game_url}/moves/", json=body, timeout=30)
            except requests.RequestException as exc:
                tally.error(f"move: {exc!r}")
                break
            elapsed = (time.perf_counter() - t0) * 1000
            if r.status_code != 200:
                tally.error("move", r)
                break
            after = r.json()
            if after["ply"] != body["ply"] + 1 or after["duplicate"]:
                tally.error(f"move: ply {body['ply']} answered with ply {after['ply']}")
                break
            if t0 >= measured_from:
                tally.latencies_ms.append(elapsed)
            state = after
        if state["status"] != "playing":
            tally.games_ended[state["status"]] += 1
    return tally


def fetch_variants(base: str, session: requests.Session, deadline: float) -> Tally:
    """The baseline: the cheapest authenticated request (no database), again and again."""
    tally = Tally()
    while time.perf_counter() < deadline:
        t0 = time.perf_counter()
        r = session.get(f"{base}/api/v1/variants/", timeout=30)
        if r.status_code != 200:
            tally.error("variants", r)
            continue
        tally.latencies_ms.append((time.perf_counter() - t0) * 1000)
    return tally


@dataclass
class Phase:
    """One timed phase of all clients at once."""

    tallies: list[Tally]
    wall: float
    cpu: dict[str, float]  # CPU seconds by part (server, postgres, redis, client)


def timed(
    pool: ThreadPoolExecutor, jobs: list, server_pid: int | None, warmup: float = 0.0
) -> Phase:
    """Run the jobs at once; time and account the CPU from ``warmup`` seconds on."""
    futures = [pool.submit(job) for job in jobs]
    time.sleep(warmup)
    account = CpuAccount([server_pid] if server_pid else [])
    began = time.perf_counter()
    tallies = [f.result() for f in futures]
    wall = time.perf_counter() - began
    return Phase(tallies, wall, account.spent())


def run_clients(
    base: str,
    args: argparse.Namespace,
    server_pid: int | None = None,
    tokens: list[str] | None = None,
) -> tuple[Phase, Phase | None]:
    """Register every client (or play as ``tokens``' players), optionally time the baseline,
    then let them all play at once: ``args.warmup`` seconds unmeasured, then measured."""
    with ThreadPoolExecutor(max_workers=args.clients) as pool:
        made = list(
            pool.map(
                lambda i: client_session(base, tokens[i] if tokens else None), range(args.clients)
            )
        )
        sessions = [(i, session) for i, (session, _) in enumerate(made) if session]
        failed = Tally(errors=[error for _, error in made if error])
        base_phase = None
        if args.baseline:
            deadline = time.perf_counter() + args.baseline
            jobs = [partial(fetch_variants, base, s, deadline) for _, s in sessions]
            base_phase = timed(pool, jobs, server_pid)
        warmup = getattr(args, "warmup", 0.0)
        measured_from = time.perf_counter() + warmup
        deadline = measured_from + args.seconds if args.seconds else float("inf")
        jobs = [partial(play, base, i, s, args, (measured_from, deadline)) for i, s in sessions]
        phase = timed(pool, jobs, server_pid, warmup)
        phase.tallies.append(failed)
    return phase, base_phase


# -- the server -------------------------------------------------------------------------


# -- report -----------------------------------------------------------------------------


def baseline(phase: Phase) -> tuple[str, dict[str, float]]:
    """The baseline's report line and figures."""
    done = sorted(x for t in phase.tallies for x in t.latencies_ms)
    rate = len(done) / phase.wall if phase.wall else 0.0
    p50 = percentile(done, 0.5)
    cpu = phase.cpu.get("server")
    per = f", server CPU = {1000 * cpu / len(done):.2f} ms per request" if done and cpu else ""
    line = (
        f"  baseline   GET /api/v1/variants/ (no game work): {rate:.1f} requests/s, "
        f"p50 {p50:.2f} ms{per}"
    )
    return line, {"baseline_requests_per_s": round(rate, 1), "baseline_p50_ms": round(p50, 2)}


def report(phase: Phase, base_phase: Phase | None, args: argparse.Namespace, info: dict) -> bool:
    extra: list[str] = []
    if base_phase is not None:
        line, figures = baseline(base_phase)
        extra.append(line)
        info = {**info, **figures}
    return _play.report(
        "REST play benchmark", phase.tallies, phase.wall, phase.cpu, args, info, TARGETS, extra
    )


def main(argv: list[str] | None = None) -> int:
    parser = _play.arguments(__doc__.split("\n\n")[0], redis_db=14)
    parser.add_argument("--url", help="base URL of a running server (default: start one)")
    parser.add_argument(
        "--baseline",
        type=float,
        default=0,
        metavar="SECONDS",
        help="first time the cheapest request (GET variants) for this long: the stack's ceiling",
    )
    parser.add_argument(
        "--server",
        choices=("gunicorn", "daphne"),
        default="gunicorn",
        help="own server: gunicorn (production HTTP) or daphne (scripts/serve.sh)",
    )
    args = _play.parse(parser, argv)

    if args.url:
        base = args.url.rstrip("/")
        phase, base_phase = run_clients(base, args)
        ok = report(phase, base_phase, args, {"server": base})
    else:
        with servers_for(args, db_prefix="patience_bench", server=args.server) as (bases, info):
            phase, base_phase = run_clients(bases[0], args, info.pop("pids")[0])
            ok = report(phase, base_phase, args, info)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
