"""WebSocket play benchmark: concurrent players play practice games to the end over sockets.

    python bench/ws.py                        # own daphne server on PostgreSQL, 20 players
    python bench/ws.py --players 40 --seconds 30
    python bench/ws.py --games 3              # each player plays 3 games, then stops
    python bench/ws.py --servers 2            # two daphne processes sharing PostgreSQL + Redis
    python bench/ws.py --url http://127.0.0.1:8000   # an already running server

Without ``--url`` it creates a fresh PostgreSQL database ``patience_wsbench_<pid>``
(server given by ``--pg-url``), migrates it, starts one daphne process on a free
port with production settings (DEBUG=False; Redis for the cache and the channel
layer when ``--redis-url`` answers, else the in-memory layer; rate limits
raised out of the way), and drops the database at the end. Against ``--url``,
the server's rate limits must allow the players' registrations.

Each player registers its own user over REST (CSRF dance, like a browser),
creates a personal API token, then plays practice Bristol games: it starts a
game over REST, opens ``ws/v1/games/<id>/`` with its token and sends random
legal moves (a move home first when there is one) taken from each answer,
until the game is won or lost, or resigns over the socket after ``--cap``
moves. The round trip of every move (send to answer) is timed; a move counts
when the answer is the next state. Printed: moves/s over the playing time
(game starts included), p50/p90/p99/max round trip, games finished, errors
(any other answer, or a broken socket), and for its own servers their CPU time
per move (from /proc: load from other programs does not inflate it).

Targets on the development machine (issue 5): >= 600 moves/s, p50 <= 5 ms, no
errors. The exit status is 1 when one is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import requests
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make the repository importable
    sys.path.insert(0, str(ROOT))

from bench._server import (  # noqa: E402
    RATE_HELP,
    CpuAccount,
    Pace,
    cpu_lines,
    own_servers,
    pacing,
    percentile,
    register,
)

TARGET_MOVES_PER_S = 600.0
TARGET_P50_MS = 5.0


# -- the players ------------------------------------------------------------------------


@dataclass
class Tally:
    """What one player measured."""

    rtt_ms: list[float] = field(default_factory=list)
    games_started: int = 0
    games_ended: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def choose(legal: list[str], rng: random.Random) -> str:
    """A random legal move; a move to a foundation when there is one (games then end)."""
    home = [m for m in legal if m.endswith("-f") or m.endswith("-a")]
    return rng.choice(home or legal)


class Player:
    """One player: a REST session to start games, a socket per game to play it."""

    def __init__(self, base: str, index: int, args: argparse.Namespace) -> None:
        self.base = base
        self.args = args
        self.index = index
        self.rng = random.Random(args.seed * 1000 + index)
        self.tally = Tally()
        self.http = requests.Session()
        self.http.trust_env = False

    def sign_up(self) -> None:
        self.token = register(self.base, f"wsbench-{uuid.uuid4().hex[:12]}")
        self.http.headers["Authorization"] = f"Token {self.token}"

    def start_game(self) -> int | None:
        r = self.http.post(
            f"{self.base}/api/v1/games/", json={"variant": self.args.variant}, timeout=60
        )
        if r.status_code != 201:
            self.tally.errors.append(f"start: HTTP {r.status_code} {r.text[:200]}")
            return None
        return r.json()["id"]

    async def play(self, start_line: asyncio.Event, deadline: list[float]) -> Tally:
        await start_line.wait()
        rate = self.args.rate / self.args.players
        self.pace = Pace(rate, self.index / self.args.players) if rate else None
        games = 0
        while time.perf_counter() < deadline[0] and (
            self.args.games is None or games < self.args.games
        ):
            game_id = await asyncio.to_thread(self.start_game)
            if game_id is None:
                await asyncio.sleep(0.05)
                continue
            games += 1
            self.tally.games_started += 1
            try:
                await self.play_game(game_id, deadline)
            except Exception as exc:  # a broken socket is an error, then the next game
                self.tally.errors.append(f"game {game_id}: {exc!r}")
        return self.tally

    async def play_game(self, game_id: int, deadline: list[float]) -> None:
        url = self.base.replace("http", "ws", 1) + f"/ws/v1/games/{game_id}/"
        headers = {"Authorization": f"Token {self.token}"}
        async with connect(url, additional_headers=headers, proxy=None, compression=None) as ws:
            first = json.loads(await ws.recv())
            if self.pace is not None:
                self.pace.resume()
            if first.get("type") != "state":
                self.tally.errors.append(f"connect: {first}")
                return
            state = first["state"]
            while state["status"] == "playing" and time.perf_counter() < deadline[0]:
                if state["ply"] >= self.args.cap:
                    answer = await self.ask(ws, {"type": "resign"})
                    if answer["type"] != "state":
                        self.tally.errors.append(f"resign: {answer}")
                        return
                    state = answer["state"]
                    break
                ply = state["ply"]
                request = {
                    "type": "move",
                    "move": choose(state["legal_moves"], self.rng),
                    "ply": ply,
                }
                if self.pace is not None:
                    await asyncio.sleep(self.pace.due())
                t0 = self.pace.take() if self.pace is not None else time.perf_counter()
                answer = await self.ask(ws, request)
                elapsed = (time.perf_counter() - t0) * 1000
                if answer["type"] != "state" or answer["ply"] != ply + 1 or answer["duplicate"]:
                    self.tally.errors.append(f"move {request}: {json.dumps(answer)[:300]}")
                    return
                self.tally.rtt_ms.append(elapsed)
                state = answer["state"]
            if state["status"] != "playing":
                ended = self.tally.games_ended
                ended[state["status"]] = ended.get(state["status"], 0) + 1

    @staticmethod
    async def ask(ws: object, request: dict) -> dict:
        await ws.send(json.dumps(request))
        while True:
            answer = json.loads(await ws.recv())
            if answer.get("cause") != "changed":  # a push about another tab: none here
                return answer


async def run_players(
    bases: list[str], args: argparse.Namespace, server_pids: list[int] | None = None
) -> tuple[list[Tally], float, dict[str, float]]:
    """Register every player, then let them all play at once.

    Player ``i`` uses server ``bases[i % len(bases)]``. Returns the tallies, the
    playing time and the CPU seconds spent in it by part (servers: own ones only).
    """
    players = [Player(bases[i % len(bases)], i, args) for i in range(args.players)]
    # Registration hashes a password on the server: a few at a time.
    gate = asyncio.Semaphore(4)

    async def sign_up(p: Player) -> None:
        async with gate:
            await asyncio.to_thread(p.sign_up)

    await asyncio.gather(*(sign_up(p) for p in players))
    start_line = asyncio.Event()
    deadline = [float("inf")]
    tasks = [asyncio.create_task(p.play(start_line, deadline)) for p in players]
    account = CpuAccount(server_pids or [])
    began = time.perf_counter()
    deadline[0] = began + args.seconds if args.seconds else float("inf")
    start_line.set()
    tallies = await asyncio.gather(*tasks)
    wall = time.perf_counter() - began
    return list(tallies), wall, account.spent()


# -- report -----------------------------------------------------------------------------


def report(
    tallies: list[Tally],
    wall: float,
    cpu: dict[str, float],
    args: argparse.Namespace,
    info: dict,
) -> bool:
    rtts = sorted(x for t in tallies for x in t.rtt_ms)
    errors = [e for t in tallies for e in t.errors]
    ended: dict[str, int] = {}
    for t in tallies:
        for k, v in t.games_ended.items():
            ended[k] = ended.get(k, 0) + v
    moves = len(rtts)
    rate = moves / wall if wall else 0.0
    p50 = percentile(rtts, 0.50)
    figures = {
        "players": args.players,
        "offered_moves_per_s": args.rate or None,
        "variant": args.variant,
        "seconds": round(wall, 2),
        "moves": moves,
        "moves_per_s": round(rate, 1),
        "p50_ms": round(p50, 2),
        "p90_ms": round(percentile(rtts, 0.90), 2),
        "p99_ms": round(percentile(rtts, 0.99), 2),
        "max_ms": round(rtts[-1], 2) if rtts else None,
        "mean_ms": round(statistics.fmean(rtts), 2) if rtts else None,
        "games_started": sum(t.games_started for t in tallies),
        "games_ended": ended,
        "errors": len(errors),
        "cpu_ms_per_move": {k: round(1000 * v / moves, 3) for k, v in cpu.items()}
        if moves
        else None,
        **info,
    }
    load = tuple(round(x, 2) for x in os.getloadavg())
    machine = f"{platform.python_version()}, {os.cpu_count()} CPUs, load {load}"
    print(f"WebSocket play benchmark ({machine})")
    print(f"  server     {info.get('server')}  database {info.get('database', '-')}")
    print(f"  redis      {info.get('redis', '-')}")
    print(f"  players    {args.players} x {args.variant}, {wall:.1f} s, {pacing(args.rate)}")
    print(f"  moves      {moves}, {rate:.1f} moves/s   (target >= {TARGET_MOVES_PER_S:g})")
    print(
        f"  round trip p50 {p50:.2f} ms (target <= {TARGET_P50_MS:g})   "
        f"p90 {figures['p90_ms']} ms   p99 {figures['p99_ms']} ms   max {figures['max_ms']} ms"
    )
    print(f"  games      {figures['games_started']} started, ended: {ended}")
    for line in cpu_lines(cpu, moves):
        print(line)
    print(f"  errors     {len(errors)}")
    for e in errors[:5]:
        print(f"    {e}")
    ok = rate >= TARGET_MOVES_PER_S and p50 <= TARGET_P50_MS and not errors and moves > 0
    print("PASS" if ok else "FAIL")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--url", help="base URL of a running server, or several, comma-separated (default: own)"
    )
    parser.add_argument(
        "--servers", type=int, default=1, help="own daphne processes, players spread over them (1)"
    )
    parser.add_argument(
        "--players", "--clients", type=int, default=20, help="concurrent players (20)"
    )
    parser.add_argument("--games", type=int, help="games per player (default: no limit)")
    parser.add_argument(
        "--seconds", type=float, help="stop after this long (default: 20 s unless --games)"
    )
    parser.add_argument(
        "--settings",
        default="patience_site.settings",
        help="settings module of own servers, to try a change (importable from the repo root "
        "or PYTHONPATH)",
    )
    parser.add_argument("--variant", default="bristol")
    parser.add_argument("--cap", type=int, default=400, help="resign a game after N moves")
    parser.add_argument("--seed", type=int, default=1, help="seed of the players' choices")
    parser.add_argument("--rate", type=float, default=0, help=RATE_HELP)
    parser.add_argument(
        "--pg-url",
        default=os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432"),
        help="PostgreSQL server for the benchmark database (no database name)",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13"),
        help="Redis for the server's cache and channel layer, if it answers ('' for none)",
    )
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database")
    parser.add_argument("--server-log", help="write daphne's output to this file")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.seconds is None and args.games is None:
        args.seconds = 20.0

    if args.url:
        bases = [u.rstrip("/") for u in args.url.split(",")]
        tallies, wall, cpu = asyncio.run(run_players(bases, args))
        ok = report(tallies, wall, cpu, args, {"server": ", ".join(bases)})
    else:
        with own_servers(
            db_prefix="patience_wsbench",
            pg_url=args.pg_url,
            redis_url=args.redis_url,
            count=args.servers,
            settings=args.settings,
            server_log=args.server_log,
            keep_db=args.keep_db,
        ) as (bases, info):
            tallies, wall, cpu = asyncio.run(run_players(bases, args, info.pop("pids")))
            where = (
                f"{len(bases)} daphne process{'es' if len(bases) > 1 else ''} at {', '.join(bases)}"
            )
            ok = report(tallies, wall, cpu, args, {"server": where, **info})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
