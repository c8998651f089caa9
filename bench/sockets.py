"""Memory of a daphne process: idle authenticated game sockets, and under load.

    python bench/sockets.py                   # 2,000 idle sockets, then 20 s of play
    python bench/sockets.py --sockets 500 --rate 100

Starts its own daphne on a fresh PostgreSQL database (as ``bench/ws.py``), with
the per-player socket limit raised to ``--per-player`` so a few players can hold
many sockets. Each socket is a player's token on a game of its own, opened and
left idle after its first state. Printed: the server's RSS (VmRSS from /proc)
warmed up with no socket open, with all sockets open and idle, the cost per
socket, after they closed, and the peak while ``bench/ws.py``'s players play at
``--rate`` moves/s (sampled every 0.1 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
from websockets.asyncio.client import ClientConnection, connect

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli, ws  # noqa: E402
from bench._server import server_arguments, servers_for  # noqa: E402
from devtools.accounts import register  # noqa: E402


def rss_kb(pid: int) -> int:
    """Resident memory of a process in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def settle(pid: int, seconds: float = 3.0) -> int:
    """RSS after a pause (the server's event loop and allocator quiet down)."""
    time.sleep(seconds)
    return rss_kb(pid)


def start_games(base: str, tokens: list[str], count: int) -> list[tuple[str, int]]:
    """``count`` practice games spread over the players: (token, game id) each."""

    def start(i: int) -> tuple[str, int]:
        token = tokens[i % len(tokens)]
        r = requests.post(
            f"{base}/api/v1/games/",
            json={"variant": "bristol"},
            headers={"Authorization": f"Token {token}"},
            timeout=600,
        )
        r.raise_for_status()
        return token, r.json()["id"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(start, range(count)))


async def hold_sockets(base: str, games: list[tuple[str, int]], pid: int) -> dict[str, int]:
    """Open a socket on every game, read its first state, measure, then close them all."""
    url = base.replace("http", "ws", 1)
    sockets = []
    gate = asyncio.Semaphore(50)

    async def open_one(token: str, game_id: int) -> ClientConnection:
        async with gate:
            socket = await connect(
                f"{url}/ws/v1/games/{game_id}/",
                additional_headers={"Authorization": f"Token {token}"},
                proxy=None,
                compression=None,
                max_size=2**20,
            )
            first = json.loads(await socket.recv())
            if first.get("type") != "state":
                raise RuntimeError(f"game {game_id}: {first}")
            return socket

    sockets = await asyncio.gather(*(open_one(t, g) for t, g in games))
    await asyncio.sleep(3)
    idle = rss_kb(pid)
    await asyncio.gather(*(s.close() for s in sockets))
    return {"idle_kb": idle}


def peak_during(pid: int, work: threading.Thread) -> int:
    """The highest RSS sampled while ``work`` runs."""
    peak = rss_kb(pid)
    work.start()
    while work.is_alive():
        peak = max(peak, rss_kb(pid))
        time.sleep(0.1)
    return peak


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--sockets", type=int, default=2000, help="idle sockets (2,000)")
    parser.add_argument("--per-player", type=int, default=400, help="sockets per player (400)")
    parser.add_argument("--rate", type=float, default=100.0, help="moves/s of the load phase")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the load phase")
    server_arguments(parser, redis_db=12)
    args = parser.parse_args(argv)
    players = -(-args.sockets // args.per_player)
    extra = {"WS_GAME_SOCKETS_PER_PLAYER": str(args.per_player)}
    with servers_for(
        args,
        db_prefix="patience_sockbench",
        start_timeout=600,  # a busy machine imports Django slowly
        extra_env=extra,
    ) as (bases, info):
        base, pid = bases[0], info["pids"][0]
        with ThreadPoolExecutor(max_workers=4) as pool:
            names = [f"sockbench-{uuid.uuid4().hex[:12]}" for _ in range(players)]
            tokens = list(pool.map(lambda n: register(base, n, timeout=600), names))
        games = start_games(base, tokens, args.sockets)
        # Warm up: one socket opened and closed, so lazily imported code is in.
        asyncio.run(hold_sockets(base, games[:1], pid))
        empty = settle(pid)
        held = asyncio.run(hold_sockets(base, games, pid))
        after = settle(pid)
        load_args = argparse.Namespace(
            clients=20, rate=args.rate, seconds=args.seconds, games=None, variant="bristol"
        )
        load_args.cap, load_args.seed = 400, 1
        result: dict[str, object] = {}

        def play() -> None:
            tallies, wall, _ = asyncio.run(ws.run_players([base], load_args))
            result["moves"] = sum(len(t.latencies_ms) for t in tallies)
            result["errors"] = sum(len(t.errors) for t in tallies)

        before_load = rss_kb(pid)
        peak = peak_during(pid, threading.Thread(target=play))
        end = settle(pid)
    per_socket = (held["idle_kb"] - empty) * 1024 / args.sockets
    print(f"daphne memory (1 daphne process, database {info['database']})")
    print(f"  no socket (warmed up)     {empty / 1024:8.1f} MiB")
    print(f"  {args.sockets} idle sockets     {held['idle_kb'] / 1024:8.1f} MiB")
    print(f"  per socket                {per_socket / 1024:8.1f} KiB")
    print(f"  after they closed         {after / 1024:8.1f} MiB")
    print(
        f"  under load ({args.rate:g} moves/s, 20 players, {args.seconds:g} s, "
        f"{result.get('moves')} moves, {result.get('errors')} errors): "
        f"{before_load / 1024:.1f} MiB before, peak {peak / 1024:.1f} MiB, "
        f"{end / 1024:.1f} MiB after"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
