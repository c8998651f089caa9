"""The floor of a move next to the product, side by side in one run: CPU per move by part.

    python bench/floor.py                     # ws and api, 2 rounds of 15 s each
    python bench/floor.py --rate-ws 100 --rate-api 50 --rounds 3

Starts this tree's product servers (daphne and a gunicorn gthread worker, as
``bench/compare.py`` does) on a fresh PostgreSQL database, and next to them the
floor's servers (``bench/floor_app.py``: the same daphne, Channels, gunicorn and
Django doing the least a move can do, the product's one guarded statement) on
the same database. Runs alternate between the two at the same paced rate: the
product played by ``bench/ws.py``'s and ``bench/api.py``'s players (game starts
and resignations included, as in ``bench/compare.py``), the floor by paced
clients that each send moves on a game of their own. Every run plays
``--warmup`` seconds unmeasured first. Printed per transport: server,
PostgreSQL and client CPU per move (from /proc), the server / PostgreSQL ratio
of each, and what the product spends above the floor.

When the floor's own server / PostgreSQL ratio is above the issue's target (2 over
WebSocket, 3 over REST), no product code on this stack can reach the target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import requests
from websockets.asyncio.client import connect

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli, sockets  # noqa: E402
from bench._cli import ROOT  # noqa: E402
from bench._play import Tally  # noqa: E402
from bench._server import CpuAccount, Pace, shared_redis_arguments  # noqa: E402
from bench.compare import Tree, measure, per_move  # noqa: E402

FLOOR_APPS = {"ws": "bench.floor_app:application", "api": "bench.floor_app:wsgi_application"}
#: A move's notation as the players send it (the floor does not read it).
MOVE = "t3-f"
TARGETS = {"ws": 2.0, "api": 3.0}


def trees(label: str) -> tuple[Tree, Tree]:
    """This tree's product servers and the floor's, the floor on the product's database."""
    product = Tree(f"{label}_product", ROOT)
    floor = Tree(
        f"{label}_floor", ROOT, apps=FLOOR_APPS, settings="bench.floor_settings", shared_db=product
    )
    return product, floor


class FloorPlay:
    """The floor's clients: one game each, moves on a fixed schedule from the ply it is at."""

    def __init__(self, floor: Tree, games: list[int]) -> None:
        self.floor = floor
        self.plies = dict.fromkeys(games, 0)

    def run(
        self, transport: str, rate: float, seconds: float, args: argparse.Namespace
    ) -> dict[str, Any]:
        server = self.floor.servers[transport].pid
        if transport == "ws":
            return measure(
                self.floor.db_name, rate, lambda: asyncio.run(self._ws(rate, seconds, args, server))
            )
        return measure(self.floor.db_name, rate, lambda: self._api(rate, seconds, args, server))

    async def _ws(
        self, rate: float, seconds: float, args: argparse.Namespace, server: int
    ) -> tuple[list[Tally], float, dict[str, float]]:
        url = self.floor.bases["ws"].replace("http", "ws", 1)
        start = time.perf_counter()
        window = (start + args.warmup, start + args.warmup + seconds)

        async def one(index: int, game: int) -> Tally:
            tally = Tally()
            pace = Pace(rate / len(self.plies), index / len(self.plies))
            async with connect(f"{url}/ws/floor/{game}/", proxy=None, compression=None) as ws:
                while time.perf_counter() < window[1]:
                    await asyncio.sleep(pace.due())
                    t0 = pace.take()
                    frame = {"type": "move", "move": MOVE, "ply": self.plies[game]}
                    await ws.send(json.dumps(frame))
                    answer = json.loads(await ws.recv())
                    if answer["type"] != "state":
                        tally.error(f"move: {answer}")
                        break
                    self.plies[game] += 1
                    if t0 >= window[0]:
                        tally.latencies_ms.append((time.perf_counter() - t0) * 1000)
            return tally

        tasks = [asyncio.create_task(one(i, g)) for i, g in enumerate(self.plies)]
        await asyncio.sleep(args.warmup)
        account = CpuAccount([server])
        began = time.perf_counter()
        tallies = await asyncio.gather(*tasks)
        return list(tallies), time.perf_counter() - began, account.spent()

    def _api(
        self, rate: float, seconds: float, args: argparse.Namespace, server: int
    ) -> tuple[list[Tally], float, dict[str, float]]:
        base = self.floor.bases["api"]
        start = time.perf_counter()
        window = (start + args.warmup, start + args.warmup + seconds)

        def one(index: int, game: int) -> Tally:
            tally = Tally()
            pace = Pace(rate / len(self.plies), index / len(self.plies))
            session = requests.Session()
            session.trust_env = False
            while time.perf_counter() < window[1]:
                t0 = pace.wait()
                body = {"move": MOVE, "ply": self.plies[game]}
                r = session.post(f"{base}/floor/{game}/moves/", json=body, timeout=30)
                if r.status_code != 200:
                    tally.error("move", r)
                    break
                self.plies[game] += 1
                if t0 >= window[0]:
                    tally.latencies_ms.append((time.perf_counter() - t0) * 1000)
            return tally

        with ThreadPoolExecutor(max_workers=len(self.plies)) as pool:
            futures = [pool.submit(partial(one, i, g)) for i, g in enumerate(self.plies)]
            time.sleep(args.warmup)
            account = CpuAccount([server])
            began = time.perf_counter()
            tallies = [f.result() for f in futures]
        return tallies, time.perf_counter() - began, account.spent()


def start_games(product: Tree) -> list[int]:
    """A practice game for each of the product's players, started over its REST API."""
    tokens = product.tokens
    return [game for _, game in sockets.start_games(product.bases["api"], tokens, len(tokens))]


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--transports", default="ws,api", help="ws, api or both (ws,api)")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients (20)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each per transport (2)")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of a run, s (15)")
    parser.add_argument("--warmup", type=float, default=5.0, help="unmeasured play first, s (5)")
    parser.add_argument("--rate-ws", type=float, default=100.0, help="moves/s over ws (100)")
    parser.add_argument("--rate-api", type=float, default=50.0, help="moves/s over api (50)")
    parser.add_argument("--label", default="floor", help="part of the database's name")
    shared_redis_arguments(parser)
    args = parser.parse_args(argv)

    product, floor = trees(args.label)
    transports = [t for t in args.transports.split(",") if t in TARGETS]
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    try:
        product.start(args)
        floor.start(args)
        floor_play = FloorPlay(floor, start_games(product))
        for transport in transports:
            rate = args.rate_ws if transport == "ws" else args.rate_api
            print(f"{transport}: {args.rounds} rounds at {rate:g} moves/s", flush=True)
            runs[transport] = {"floor": [], "product": []}
            for _ in range(args.rounds):
                for name, runner in (("floor", floor_play), ("product", product)):
                    figures = runner.run(transport, rate, args.seconds, args)
                    runs[transport][name].append(figures)
                    print(
                        f"    {transport} {name:>8}: {figures['moves']} moves, p99 "
                        f"{figures['p99_ms']:.1f} ms, errors {figures['errors']} "
                        f"{figures['first_error'] or ''}",
                        flush=True,
                    )
    finally:
        floor.stop(args)
        product.stop(args)
    print_report(runs)
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2, default=str))
    return 0


def print_report(runs: dict[str, dict[str, list[dict[str, Any]]]]) -> None:
    print(f"\nload {os.getloadavg()}, {os.cpu_count()} CPUs; CPU ms per move")
    print(f"{'':6}{'':12}{'server':>9}{'postgres':>10}{'client':>9}{'server/pg':>11}")
    for transport, by_name in runs.items():
        cpu = {name: per_move(r) for name, r in by_name.items()}
        for name, c in cpu.items():
            ratio = c["server"] / c["postgres"] if c["postgres"] else math.nan
            print(
                f"{transport:6}{name:12}{c['server']:9.2f}{c['postgres']:10.2f}"
                f"{c['client']:9.2f}{ratio:11.2f}"
            )
        above = cpu["product"]["server"] - cpu["floor"]["server"]
        target = TARGETS[transport]
        reach = target * cpu["product"]["postgres"]
        print(
            f"{transport:6}{'product-floor':12}{above:9.2f}"
            f"   (target: server <= {target:g} x postgres = {reach:.2f} ms)"
        )


if __name__ == "__main__":
    sys.exit(main())
