"""Abuse beside paced players: does an attacker slow the others, or make the server deal?

    python bench/abuse.py                      # own 2 daphne processes, 20 players, 2 x 20 s
    python bench/abuse.py --seconds 30 --rate 40

The attack of issue 13, re-run: ``--anon-loops`` anonymous loops ask for dailies
of past dates that were never dealt (about ``--anon-rate`` requests/s in all,
far below the rate limits), and ``--hint-accounts`` accounts (1) hold ``--hint-sockets`` game
sockets in all, each asking for a hint, making a random move and asking again as fast
as answered (practice Picture Gallery games: the heavier solver).

Without ``--url`` it creates a fresh PostgreSQL database, deals today's dailies
(``create_dailies``, as the production job does), and starts ``--servers``
daphne processes sharing it and Redis. ``--clients`` players (``bench/api.py``'s
REST players, paced at ``--rate`` moves/s in all) play practice Bristol games
through both phases, one after the other in the same run: first alone, then
with the abuse. Printed per phase: the players' moves, p50/p99/max latency,
errors, the servers' CPU per move (solver workers included); for the abuse, its
answers by status and code; and the daily rows before and after (the abuse
must create none; its target is in bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli, api  # noqa: E402
from bench._play import Tally  # noqa: E402
from bench._server import (  # noqa: E402
    CpuAccount,
    percentile,
    server_arguments,
    servers_for,
)
from devtools.accounts import register  # noqa: E402

TARGET_P50_GROWTH = 0.20


def anonymous_loop(base: str, index: int, rate: float, stop: threading.Event) -> Counter[str]:
    """Ask for dailies of past days never dealt, ``rate`` requests/s; answers by status."""
    seen: Counter[str] = Counter()
    session = requests.Session()
    rng = random.Random(index)
    today = datetime.now(UTC).date()
    while not stop.is_set():
        day = today - timedelta(days=rng.randint(30, 3000))
        variant = rng.choice(["bristol", "belvedere", "picture-gallery", "royal-parade"])
        try:
            r = session.get(f"{base}/api/v1/daily/{variant}/{day}/", timeout=30)
            code = r.json().get("error", {}).get("code", "") if r.status_code >= 400 else ""
            seen[f"{r.status_code} {code}".strip()] += 1
        except (requests.RequestException, ValueError) as exc:
            seen[type(exc).__name__] += 1
        stop.wait(1.0 / rate)
    return seen


def hint_socket(
    ws_base: str, base: str, key: str, index: int, stop: threading.Event, frame: str
) -> Counter:
    """One socket of the abusing account: hint, a random move, hint again, as fast as answered;
    a refused hint is asked for again 50 ms later (the flood ignores ``retry_after``).

    With ``frame`` "resync" it sends a resync every 50 ms instead: the floor, a flood of
    the cheapest frame at about the rate of the refused hints."""
    from websockets.sync.client import connect

    seen: Counter[str] = Counter()
    rng = random.Random(1000 + index)
    headers = {"Authorization": f"Token {key}"}
    r = requests.post(
        f"{base}/api/v1/games/",
        json={"variant": "picture-gallery"},
        headers=headers,
        timeout=30,
    )
    r.raise_for_status()
    game = r.json()
    with connect(f"{ws_base}/ws/v1/games/{game['id']}/?token={key}", open_timeout=30) as ws:
        state = json.loads(ws.recv(timeout=30))["state"]
        while not stop.is_set() and state["status"] == "playing":
            if frame == "resync":
                ws.send(json.dumps({"type": "resync"}))
                seen[f"resync: {json.loads(ws.recv(timeout=60))['type']}"] += 1
                time.sleep(0.05)
                continue
            ws.send(json.dumps({"type": "hint"}))
            answer = json.loads(ws.recv(timeout=60))
            if answer["type"] == "hint":
                seen[f"hint {answer['hint']['verdict']}"] += 1
            else:  # refused (in progress, busy, throttled): ask again at once, no move
                seen[f"error {answer['error']['code']}"] += 1
                time.sleep(0.05)
                continue
            moves = state["legal_moves"]
            if not moves:
                break
            ws.send(json.dumps({"type": "move", "move": rng.choice(moves), "ply": state["ply"]}))
            reply = json.loads(ws.recv(timeout=60))
            if reply["type"] == "state":
                state = reply["state"]
    return seen


def daily_rows(database: str, pg_url: str) -> int:
    import psycopg

    with psycopg.connect(f"{pg_url}/{database}") as conn:
        row = conn.execute("SELECT count(*) FROM games_deal WHERE kind = 'daily'").fetchone()
    assert row is not None  # count(*) answers one row
    return row[0]


def attack(
    bases: list[str],
    keys: list[str],
    anon_loops: int,
    anon_rate: float,
    sockets: int,
    frame: str,
    seconds: float,
) -> Counter[str]:
    """The abuse for ``seconds``, in a process of its own: its threads never hold up the
    measured players' (one interpreter lock each), so the players' figures are the server's."""
    stop = threading.Event()
    with ThreadPoolExecutor(anon_loops + sockets) as pool:
        rate = anon_rate / max(anon_loops, 1)
        attackers = [
            pool.submit(anonymous_loop, bases[i % len(bases)], i, rate, stop)
            for i in range(anon_loops)
        ]
        attackers += [
            pool.submit(
                hint_socket,
                bases[i % len(bases)].replace("http://", "ws://"),
                bases[i % len(bases)],
                keys[i % len(keys)],
                i,
                stop,
                frame,
            )
            for i in range(sockets)
        ]
        stop.wait(seconds)
        stop.set()
        seen: Counter[str] = Counter()
        for f in attackers:
            try:
                seen.update(f.result())
            except Exception as exc:  # an attacker's failure is reported, not fatal
                seen[f"attacker failed: {exc!r}"[:80]] += 1
    return seen


def phase(
    sessions: list[requests.Session],
    args: argparse.Namespace,
    pids: list[int],
    abuse: bool,
    attacker_keys: list[str],
) -> dict:
    """Players for ``args.seconds``, with or without the abuse beside them."""
    account = CpuAccount(pids)
    start = time.perf_counter()
    window = (start + args.warmup, start + args.warmup + args.seconds)
    bases = args.bases
    spawn = multiprocessing.get_context("spawn")
    with (
        ThreadPoolExecutor(len(sessions)) as pool,
        ProcessPoolExecutor(1, mp_context=spawn) as abusers,
    ):
        seconds = args.warmup + args.seconds
        abuse_args = (
            bases,
            attacker_keys,
            args.anon_loops,
            args.anon_rate,
            args.hint_sockets,
            args.flood_frame,
        )
        attackers = abusers.submit(attack, *abuse_args, seconds) if abuse else None
        players = [
            pool.submit(api.play, bases[i % len(bases)], i, s, args, window)
            for i, s in enumerate(sessions)
        ]
        tallies: list[Tally] = [f.result() for f in players]
        seen = attackers.result() if attackers is not None else Counter()
    spent = account.spent()
    latencies = sorted(x for t in tallies for x in t.latencies_ms)
    moves = len(latencies)
    return {
        "abuse": abuse,
        "moves": moves,
        "p50_ms": percentile(latencies, 0.5),
        "p99_ms": percentile(latencies, 0.99),
        "max_ms": latencies[-1] if latencies else float("nan"),
        "errors": sum(len(t.errors) for t in tallies),
        "server_cpu_ms_per_move": 1000 * spent.get("server", 0.0) / max(moves, 1),
        "abuse_answers": dict(seen),
    }


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--servers", type=int, default=2, help="own daphne processes (2)")
    parser.add_argument("--clients", type=int, default=20, help="paced players (20)")
    parser.add_argument("--rate", type=float, default=40.0, help="players' moves/s in all (40)")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase (20)")
    parser.add_argument(
        "--warmup", type=float, default=3.0, help="seconds of each phase not counted (3)"
    )
    parser.add_argument("--anon-loops", type=int, default=3, help="anonymous loops (3)")
    parser.add_argument("--anon-rate", type=float, default=5.0, help="their requests/s (5)")
    parser.add_argument("--hint-sockets", type=int, default=8, help="hint sockets in all (8)")
    parser.add_argument(
        "--flood-frame",
        choices=["hint", "resync"],
        default="hint",
        help="what the sockets send: hints, or resyncs (the floor of a frame flood)",
    )
    parser.add_argument(
        "--hint-accounts", type=int, default=1, help="accounts the hint sockets belong to (1)"
    )
    parser.add_argument("--cap", type=int, default=400, help="players resign after N moves")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--user-rate",
        default="1200/min",
        help="the servers' budget per account (THROTTLE_RATE_USER; default: production's)",
    )
    server_arguments(parser, redis_db=13)
    args = parser.parse_args(argv)
    args.variant, args.games = "bristol", None

    limits = {"THROTTLE_RATE_USER": args.user_rate}
    with servers_for(
        args, db_prefix="patience_abuse", count=args.servers, dailies=True, extra_env=limits
    ) as (
        bases,
        info,
    ):
        args.bases = bases
        before = daily_rows(info["database"], args.pg_url)
        with ThreadPoolExecutor(8) as pool:
            homes = [bases[i % len(bases)] for i in range(args.clients)]
            made = list(pool.map(api.client_session, homes))
        sessions = [s for s, err in made if s is not None]
        if len(sessions) < args.clients:
            raise SystemExit(f"registration failed: {[e for _, e in made if e][:3]}")
        stamp = int(time.time())
        with ThreadPoolExecutor(8) as pool:
            attacker_keys = list(
                pool.map(
                    lambda i: register(bases[i % len(bases)], f"abuser-{stamp}-{i}"),
                    range(args.hint_accounts),
                )
            )
        phases = [
            phase(sessions, args, info["pids"], abuse, attacker_keys) for abuse in (False, True)
        ]
        after = daily_rows(info["database"], args.pg_url)

    print(f"Abuse beside paced players ({info['server']})")
    print(
        f"  players    {args.clients} REST players, {args.rate:g} moves/s in all, "
        f"{args.seconds:g} s per phase"
    )
    print(
        f"  abuse      {args.anon_loops} anonymous loops at {args.anon_rate:g} req/s in all "
        f"(past dailies never dealt), {args.hint_sockets} hint sockets of "
        f"{args.hint_accounts} account(s)"
    )
    for p in phases:
        name = "with abuse" if p["abuse"] else "alone     "
        print(
            f"  {name} moves {p['moves']}, p50 {p['p50_ms']:.1f} ms, p99 {p['p99_ms']:.1f} ms, "
            f"max {p['max_ms']:.0f} ms, errors {p['errors']}, "
            f"server CPU {p['server_cpu_ms_per_move']:.1f} ms/move"
        )
        if p["abuse_answers"]:
            print(f"             abuse answers {p['abuse_answers']}")
    growth = phases[1]["p50_ms"] / phases[0]["p50_ms"] - 1
    print(f"  p50 growth {100 * growth:+.0f}% (target <= {100 * TARGET_P50_GROWTH:.0f}%)")
    print(f"  daily rows {before} before, {after} after (target: no new row)")
    ok = growth <= TARGET_P50_GROWTH and after == before and not any(p["errors"] for p in phases)
    print("PASS" if ok else "FAIL")
    if args.json:
        Path(args.json).write_text(json.dumps({"phases": phases, "rows": [before, after]}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
