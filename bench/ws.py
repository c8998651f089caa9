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

The exit status is 1 when a target (bench/README.md) is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import uuid
from pathlib import Path

import requests
from websockets.asyncio.client import ClientConnection, connect

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from bench import _play  # noqa: E402
from bench._play import Tally  # noqa: E402
from bench._server import CpuAccount, Pace, choose, servers_for  # noqa: E402
from devtools.accounts import register  # noqa: E402

TARGETS = _play.Targets(moves_per_s=600.0, p50_ms=5.0)


def report(
    tallies: list[Tally], wall: float, cpu: dict[str, float], args: argparse.Namespace, info: dict
) -> bool:
    return _play.report("WebSocket play benchmark", tallies, wall, cpu, args, info, TARGETS)


# -- the players ------------------------------------------------------------------------


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

    def sign_up(self, token: str | None = None) -> None:
        """Register a new player, or play as the one ``token`` belongs to."""
        self.token = token or register(self.base, f"wsbench-{uuid.uuid4().hex[:12]}")
        self.http.headers["Authorization"] = f"Token {self.token}"

    def start_game(self) -> int | None:
        r = self.http.post(
            f"{self.base}/api/v1/games/", json={"variant": self.args.variant}, timeout=60
        )
        if r.status_code != 201:
            self.tally.errors.append(f"start: HTTP {r.status_code} {r.text[:200]}")
            return None
        return r.json()["id"]

    async def play(self, start_line: asyncio.Event, window: list[float]) -> Tally:
        """Play games until the window's end; moves sent before its start are not counted."""
        await start_line.wait()
        rate = self.args.rate / self.args.clients
        self.pace = Pace(rate, self.index / self.args.clients) if rate else None
        games = 0
        while time.perf_counter() < window[1] and (
            self.args.games is None or games < self.args.games
        ):
            game_id = await asyncio.to_thread(self.start_game)
            if game_id is None:
                await asyncio.sleep(0.05)
                continue
            games += 1
            self.tally.games_started += 1
            try:
                await self.play_game(game_id, window)
            except Exception as exc:  # a broken socket is an error, then the next game
                self.tally.errors.append(f"game {game_id}: {exc!r}")
        return self.tally

    async def play_game(self, game_id: int, window: list[float]) -> None:
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
            while state["status"] == "playing" and time.perf_counter() < window[1]:
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
                if t0 >= window[0]:
                    self.tally.latencies_ms.append(elapsed)
                state = answer["state"]
            if state["status"] != "playing":
                self.tally.games_ended[state["status"]] += 1

    @staticmethod
    async def ask(ws: ClientConnection, request: dict) -> dict:
        await ws.send(json.dumps(request))
        while True:
            answer = json.loads(await ws.recv())
            if answer.get("cause") != "changed":  # a push about another tab: none here
                return answer


async def run_players(
    bases: list[str],
    args: argparse.Namespace,
    server_pids: list[int] | None = None,
    tokens: list[str] | None = None,
) -> tuple[list[Tally], float, dict[str, float]]:
    """Register every player (or play as ``tokens``' players), then let them all play at once.

    Player ``i`` uses server ``bases[i % len(bases)]``. With ``args.warmup`` seconds
    they first play that long unmeasured (sockets open, games started, the server's
    lazy imports and pools filled), then ``args.seconds`` measured. Returns the
    tallies, the measured time and the CPU seconds spent in it by part (servers: own
    ones only).
    """
    players = [Player(bases[i % len(bases)], i, args) for i in range(args.clients)]
    # Registration hashes a password on the server: a few at a time.
    gate = asyncio.Semaphore(4)

    async def sign_up(i: int, p: Player) -> None:
        async with gate:
            await asyncio.to_thread(p.sign_up, tokens[i] if tokens else None)

    await asyncio.gather(*(sign_up(i, p) for i, p in enumerate(players)))
    start_line = asyncio.Event()
    warmup = getattr(args, "warmup", 0.0)
    window = [float("inf"), float("inf")]  # measured from, until
    tasks = [asyncio.create_task(p.play(start_line, window)) for p in players]
    now = time.perf_counter()
    window[0] = now + warmup
    window[1] = window[0] + args.seconds if args.seconds else float("inf")
    start_line.set()
    await asyncio.sleep(warmup)
    account = CpuAccount(server_pids or [])
    began = time.perf_counter()
    tallies = await asyncio.gather(*tasks)
    wall = time.perf_counter() - began
    return list(tallies), wall, account.spent()


def main(argv: list[str] | None = None) -> int:
    parser = _play.arguments(__doc__.split("\n\n")[0], redis_db=13)
    parser.add_argument(
        "--url", help="base URL of a running server, or several, comma-separated (default: own)"
    )
    parser.add_argument(
        "--servers", type=int, default=1, help="own daphne processes, players spread over them (1)"
    )
    args = _play.parse(parser, argv)

    if args.url:
        bases = [u.rstrip("/") for u in args.url.split(",")]
        tallies, wall, cpu = asyncio.run(run_players(bases, args))
        ok = report(tallies, wall, cpu, args, {"server": ", ".join(bases)})
    else:
        with servers_for(args, db_prefix="patience_wsbench", count=args.servers) as (bases, info):
            tallies, wall, cpu = asyncio.run(run_players(bases, args, info.pop("pids")))
            ok = report(tallies, wall, cpu, args, info)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
