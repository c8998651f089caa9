"""Abuse beside paced players: does an attacker slow the others, or make the server deal?

    python bench/abuse.py                      # own 2 daphne processes, 20 players, 2 x 20 s
    python bench/abuse.py --seconds 30 --rate 40

The attack of issue 13, re-run: ``--anon-loops`` anonymous loops ask for dailies
of past dates that were never dealt (about ``--anon-rate`` requests/s in all,
far below the rate limits), and ``--hint-accounts`` accounts (1) hold ``--hint-sockets`` game
sockets in all, each asking for a hint, making a random move and asking again as fast
as answered (practice Picture Gallery games: the heavier solver).

With ``--rest-flood N`` (30) the run has three phases instead: the players alone, beside
N accounts that flood REST hints (``POST .../hint/``, its ``Location`` polled every
``--flood-pause`` (50 ms) while it answers 202, a random move once answered, a refusal
asked again as soon), and beside the same N accounts flooding a cheap read (``GET`` of
their game, as often) as the floor. Printed: each phase's p50, and the hint flood's p50 against the
players' alone (target: at most 2x) and against the floor.

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
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
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


def rest_flood(
    base: str, key: str, index: int, stop: threading.Event, frame: str, pause: float
) -> Counter:
    """One flooding account over REST. ``frame`` "hint": ask for a hint, poll where its
    202 points every ``pause`` seconds (the flood ignores ``Retry-After``), play a random
    move once answered, ask again ``pause`` after a refusal. "read": the floor, a ``GET``
    of its game every ``pause``."""
    seen: Counter[str] = Counter()
    rng = random.Random(2000 + index)
    session = requests.Session()
    session.headers["Authorization"] = f"Token {key}"
    r = session.post(f"{base}/api/v1/games/", json={"variant": "picture-gallery"}, timeout=30)
    r.raise_for_status()
    state = r.json()
    game = f"{base}/api/v1/games/{state['id']}"
    while not stop.is_set() and state["status"] == "playing":
        if frame == "read":
            r = session.get(f"{game}/", timeout=60)
            seen[f"read {r.status_code}"] += 1
            time.sleep(pause)
            continue
        r = session.post(f"{game}/hint/", timeout=60)
        while r.status_code == 202 and not stop.is_set():
            seen["hint 202"] += 1
            time.sleep(pause)
            r = session.get(r.headers["Location"], timeout=60)
        if r.status_code != 200:
            code = r.json().get("error", {}).get("code", "") if r.status_code >= 400 else ""
            seen[f"hint {r.status_code} {code}".strip()] += 1
            time.sleep(pause)
            continue
        seen[f"hint {r.json()['verdict']}"] += 1
        body = {"move": rng.choice(state["legal_moves"]), "ply": state["ply"]}
        r = session.post(f"{game}/moves/", json=body, timeout=60)
        if r.status_code == 200:
            state = r.json()
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
    rest_keys: tuple[list[str], str, float] = ([], "hint", 0.05),
) -> Counter[str]:
    """The abuse for ``seconds``, in a process of its own: its threads never hold up the
    measured players' (one interpreter lock each), so the players' figures are the server's.
    ``rest_keys``: the accounts flooding REST, and what they send (``rest_flood``)."""
    stop = threading.Event()
    flooders, rest_frame, pause = rest_keys
    with ThreadPoolExecutor(anon_loops + sockets + len(flooders)) as pool:
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
        attackers += [
            pool.submit(rest_flood, bases[i % len(bases)], key, i, stop, rest_frame, pause)
            for i, key in enumerate(flooders)
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
    abuse: bool | str,
    attacker_keys: list[str],
) -> dict:
    """Players for ``args.seconds``, with or without the abuse beside them; ``abuse`` "hint"
    or "read": only the REST flood of that kind (``rest_flood``)."""
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
        attackers: Future[Counter[str]] | None = None
        if isinstance(abuse, str):  # the REST flood alone
            flood = (attacker_keys, abuse, args.flood_pause)
            attackers = abusers.submit(attack, bases, [], 0, 0.0, 0, "hint", seconds, flood)
        elif abuse:
            attackers = abusers.submit(
                attack,
                bases,
                attacker_keys,
                args.anon_loops,
                args.anon_rate,
                args.hint_sockets,
                args.flood_frame,
                seconds,
            )
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


#: The REST hint flood may at most double the players' p50 (``--rest-flood``).
TARGET_REST_FLOOD = 2.0


def rest_report(args: argparse.Namespace, info: dict, phases: list[dict]) -> int:
    """The three phases of ``--rest-flood``: the players alone, beside the hint flood, and
    beside the floor (the same accounts flooding cheap reads)."""
    print(f"REST hint flood beside paced players ({info['server']})")
    print(
        f"  players    {args.clients} REST players, {args.rate:g} moves/s in all, "
        f"{args.seconds:g} s per phase; {args.rest_flood} flooding accounts"
    )
    names = {False: "alone      ", "hint": "hint flood ", "read": "read floor "}
    for p in phases:
        print(
            f"  {names[p['abuse']]} moves {p['moves']}, p50 {p['p50_ms']:.1f} ms, "
            f"p99 {p['p99_ms']:.1f} ms, errors {p['errors']}, "
            f"server CPU {p['server_cpu_ms_per_move']:.1f} ms/move"
        )
        if p["abuse_answers"]:
            print(f"             flood answers {p['abuse_answers']}")
    alone, hint, floor = (p["p50_ms"] for p in phases)
    print(
        f"  hint flood p50 {hint / alone:.2f}x alone (target <= {TARGET_REST_FLOOD:g}x), "
        f"{hint / floor:.2f}x the read floor's ({floor / alone:.2f}x alone)"
    )
    ok = hint <= TARGET_REST_FLOOD * alone and not any(p["errors"] for p in phases)
    print("PASS" if ok else "FAIL")
    if args.json:
        Path(args.json).write_text(json.dumps({"phases": phases}))
    return 0 if ok else 1


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
    parser.add_argument(
        "--rest-flood",
        type=int,
        default=0,
        help="accounts flooding REST hints, then cheap reads (the floor); 0: the socket abuse",
    )
    parser.add_argument(
        "--flood-pause", type=float, default=0.05, help="seconds between a flooder's requests"
    )
    parser.add_argument("--server", choices=["daphne", "gunicorn"], default="daphne")
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

    # Registering the flooding accounts is the setup, not the attack: no log-in limit.
    limits = {"THROTTLE_RATE_USER": args.user_rate, "THROTTLE_RATE_AUTH": "100000/min"}
    with servers_for(
        args,
        db_prefix="patience_abuse",
        count=args.servers,
        server=args.server,
        dailies=True,
        extra_env=limits,
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
                    range(args.rest_flood or args.hint_accounts),
                )
            )
        kinds: tuple[bool | str, ...] = (
            (False, "hint", "read") if args.rest_flood else (False, True)
        )
        phases = [phase(sessions, args, info["pids"], k, attacker_keys) for k in kinds]
        after = daily_rows(info["database"], args.pg_url)
    if args.rest_flood:
        return rest_report(args, info, phases)

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
