"""Race benchmark: many races of paced players on one server; how fast progress reaches rivals.

    python bench/race.py                          # 50 races of 4 players, 1 move/s each, 30 moves
    python bench/race.py --races 10 --moves 10    # a quick look
    python bench/race.py --processes 2            # two daphne processes, one channel layer

It creates a fresh PostgreSQL database ``patience_racebench_<pid>`` (server given
by ``--pg-url``), migrates it, puts ``--races`` uncertified Bristol deals in the
race pool and ``4 * --races`` accounts with tokens straight into it (the solver
and password hashing are not what is measured), then starts ``--processes``
daphne processes (1) with production settings and Redis (``--redis-url``) for the
channel layer. With several, the players of each race are spread over them in turn
(player ``i`` of a race on process ``i mod N``), so progress crosses processes
through Redis as it does behind a load balancer.

Every race is private: its first player creates it over REST, the others join,
the creator starts it (a 5 s countdown). Each player opens the race socket
``ws/v1/races/<code>/`` and its game socket ``ws/v1/games/<id>/``, and from the
start (once a ``resync`` shows the deal: no card is shown before it) plays one
random legal move a second (a move home first when there is one) over the game
socket, up to ``--moves`` moves, then resigns (a game that ends before stops
there); so the races finish.

Printed:

- **delay**: for every move, from the moment the mover sent it (its commit lies
  within that move's round trip) to the moment the last of its three rivals had
  the ``race.progress`` with that move on its race socket: p50, p99, max; the
  move's own round trip (send to answer) beside it, for scale; and the
  **fan-out**: from the mover's answer (sent after the commit, like the
  progress) to the last rival's progress;
- **CPU per move** of the server processes (and of PostgreSQL, Redis, this client)
  from /proc over the playing time;
- **errors**: any answer that is not the next state, a broken socket, a progress
  message some rival never got, a race that did not finish. The exit status is 1
  when there is any.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import requests
from websockets.asyncio.client import connect

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._cli import ROOT  # noqa: E402
from bench._server import (  # noqa: E402
    CpuAccount,
    choose,
    cpu_lines,
    percentile,
    server_arguments,
    servers_for,
)

PLAYERS = 4

_PREPARE = """
import json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.test import override_settings
from accounts.services import token_create
from games.services.race_pool import race_pool_fill
with override_settings(RACE_POOL_SIZE=int(sys.argv[1]), RACE_SOLVER_NODES=0):
    race_pool_fill(variants=["bristol"])
keys = []
for i in range(int(sys.argv[2])):
    user = get_user_model().objects.create_user(username=f"racer-{i:04d}", password=None)
    keys.append([user.username, token_create(user=user, name="bench")[1]])
print(json.dumps(keys))
"""


class Run:
    """What the players measured, shared by all of them (one event loop)."""

    def __init__(self) -> None:
        #: (player, moves, status) of each move or resignation: when it was sent ...
        self.sent: dict[tuple[str, int, str], float] = {}
        #: ... and when each rival's race socket had its progress.
        self.seen: dict[tuple[str, int, str], list[float]] = defaultdict(list)
        #: ... and when the mover had its answer (moves only; the commit was before it).
        self.answered: dict[tuple[str, int, str], float] = {}
        self.round_trips_ms: list[float] = []
        self.errors: list[str] = []
        self.finished_races = 0
        self.moves = 0

    def lags_ms(self) -> list[float]:
        """The mover's answer to the last rival's progress (negative: the rivals were first)."""
        return sorted(
            (max(self.seen[key]) - at) * 1000
            for key, at in self.answered.items()
            if len(self.seen.get(key, [])) == PLAYERS - 1
        )

    def delays_ms(self) -> list[float]:
        """Send to the last rival's progress, for every move all three rivals saw."""
        out = []
        for key, at in self.sent.items():
            got = self.seen.get(key, [])
            if len(got) == PLAYERS - 1:
                out.append((max(got) - at) * 1000)
            else:
                self.errors.append(f"progress of {key} reached {len(got)} of {PLAYERS - 1} rivals")
        return sorted(out)


async def listen(ws: Any, me: str, run: Run, done: asyncio.Event) -> None:
    """A player's race socket: note when each rival's progress arrives, until the end."""
    async for text in ws:
        now = time.perf_counter()
        message = json.loads(text)
        if message["type"] == "race.progress":
            player = message["player"]
            if player["username"] != me:
                run.seen[player["username"], player["moves"], player["status"]].append(now)
        elif message["type"] == "race.finished":
            done.set()
            return


async def play(
    base: str, name: str, key: str, game_id: int, starts_in: float, args: Any, run: Run
) -> None:
    """A player's game socket: one random legal move a second from the start, then resign."""
    rng = random.Random(f"{args.seed}-{name}")
    url = base.replace("http", "ws", 1) + f"/ws/v1/games/{game_id}/"
    headers = {"Authorization": f"Token {key}"}
    async with connect(url, additional_headers=headers, proxy=None, compression=None) as ws:
        await ws.recv()  # the state on connect: before the start, no card (position null)
        await asyncio.sleep(max(0.0, starts_in) + rng.random())  # players do not move in step
        while True:  # from the start on, the state shows the deal
            await ws.send(json.dumps({"type": "resync"}))
            state = json.loads(await ws.recv())["state"]
            if state["position"] is not None:
                break
            await asyncio.sleep(0.1)
        next_at = time.perf_counter()
        for _ in range(args.moves):
            if state["status"] != "playing":
                return
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            next_at += 1.0
            ply = state["ply"]
            request = {"type": "move", "move": choose(state["legal_moves"], rng), "ply": ply}
            t0 = time.perf_counter()
            await ws.send(json.dumps(request))
            answer = json.loads(await ws.recv())
            t1 = time.perf_counter()
            run.round_trips_ms.append((t1 - t0) * 1000)
            if answer.get("type") != "state" or answer["ply"] != ply + 1:
                run.errors.append(f"{name} move {request}: {json.dumps(answer)[:200]}")
                return
            run.moves += 1
            state = answer["state"]
            run.sent[name, state["ply"], state["status"]] = t0
            run.answered[name, state["ply"], state["status"]] = t1
        if state["status"] == "playing":
            t0 = time.perf_counter()
            await ws.send(json.dumps({"type": "resign"}))
            answer = json.loads(await ws.recv())
            if answer.get("type") != "state":
                run.errors.append(f"{name} resign: {json.dumps(answer)[:200]}")
                return
            run.sent[name, state["ply"], "resigned"] = t0


def open_race(bases: list[str], group: list[tuple[str, str]]) -> tuple[str, dict[str, int], float]:
    """Create a private race, let the group join, start it; its code, games and countdown.
    Each player talks to its own server (``bases``, one per player)."""
    sessions = []
    for _, key in group:
        s = requests.Session()
        s.trust_env = False
        s.headers["Authorization"] = f"Token {key}"
        sessions.append(s)
    r = sessions[0].post(f"{bases[0]}/api/v1/races/", json={"variant": "bristol"}, timeout=60)
    r.raise_for_status()
    code = r.json()["code"]
    for base, s in zip(bases[1:], sessions[1:], strict=True):
        s.post(f"{base}/api/v1/races/{code}/join/", timeout=60).raise_for_status()
    r = sessions[0].post(f"{bases[0]}/api/v1/races/{code}/start/", timeout=60)
    r.raise_for_status()
    race = r.json()
    countdown = datetime.fromisoformat(race["starts_at"]) - datetime.fromisoformat(
        race["server_time"]
    )
    games = {}
    for (name, _), base, s in zip(group, bases, sessions, strict=True):
        games[name] = s.get(f"{base}/api/v1/races/{code}/", timeout=60).json()["you"]["game"]
    return code, games, countdown.total_seconds()


async def race(servers: list[str], group: list[tuple[str, str]], args: Any, run: Run) -> None:
    bases = [servers[i % len(servers)] for i in range(len(group))]  # player i on server i mod N
    code, games, countdown = await asyncio.to_thread(open_race, bases, group)
    opened = time.perf_counter()
    sockets, listeners = [], []
    events = [asyncio.Event() for _ in group]
    try:
        for (name, key), base, done in zip(group, bases, events, strict=True):
            url = base.replace("http", "ws", 1) + f"/ws/v1/races/{code}/"
            ws = await connect(
                url, additional_headers={"Authorization": f"Token {key}"}, proxy=None
            )
            sockets.append(ws)
            await ws.recv()  # race.state
            listeners.append(asyncio.create_task(listen(ws, name, run, done)))
        starts_in = countdown - (time.perf_counter() - opened) + 0.1
        await asyncio.gather(
            *(
                play(base, name, key, games[name], starts_in, args, run)
                for (name, key), base in zip(group, bases, strict=True)
            )
        )
        try:
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), timeout=30)
            run.finished_races += 1
        except TimeoutError:
            run.errors.append(f"race {code} did not finish on every socket")
    except Exception as exc:
        run.errors.append(f"race {code}: {exc!r}")
    finally:
        for task in listeners:
            task.cancel()
        for ws in sockets:
            await ws.close()


async def run_races(
    bases: list[str], keys: list[tuple[str, str]], args: Any, pids: list[int]
) -> tuple:
    run = Run()
    account = CpuAccount(pids)
    began = time.perf_counter()
    groups = [keys[i * PLAYERS : (i + 1) * PLAYERS] for i in range(args.races)]
    await asyncio.gather(*(race(bases, g, args, run) for g in groups))
    wall = time.perf_counter() - began
    return run, wall, account.spent()


def report(run: Run, wall: float, cpu: dict[str, float], args: Any, info: dict) -> bool:
    delays = run.delays_ms()
    trips = sorted(run.round_trips_ms)
    print("Race benchmark")
    print(f"  server     {info['server']}; Redis {info['redis']}")
    print(
        f"  load       {args.races} races x {PLAYERS} players, 1 move/s each, "
        f"up to {args.moves} moves, {wall:.1f} s in all"
    )
    print(
        f"  moves      {run.moves} ({run.moves / wall:.1f}/s); races finished {run.finished_races}"
    )
    print(
        f"  delay      send -> every rival has the progress: p50 {percentile(delays, 0.5):.1f} ms, "
        f"p99 {percentile(delays, 0.99):.1f} ms, max {max(delays, default=float('nan')):.1f} ms "
        f"({len(delays)} moves)"
    )
    lags = run.lags_ms()
    print(
        f"  round trip move -> answer: p50 {percentile(trips, 0.5):.1f} ms, "
        f"p99 {percentile(trips, 0.99):.1f} ms"
    )
    print(
        f"  fan-out    mover's answer -> every rival has it: p50 {percentile(lags, 0.5):.1f} ms, "
        f"p99 {percentile(lags, 0.99):.1f} ms"
    )
    for line in cpu_lines(cpu, run.moves):
        print(line)
    print(f"  errors     {len(run.errors)}")
    for error in run.errors[:10]:
        print(f"    {error}")
    if args.json:
        figures = {
            "races": args.races,
            "processes": args.processes,
            "moves": run.moves,
            "delay_p50_ms": percentile(delays, 0.5),
            "delay_p99_ms": percentile(delays, 0.99),
            "round_trip_p50_ms": percentile(trips, 0.5),
            "fan_out_p50_ms": percentile(lags, 0.5),
            "fan_out_p99_ms": percentile(lags, 0.99),
            "cpu_ms_per_move": {k: 1000 * v / max(1, run.moves) for k, v in cpu.items()},
            "errors": len(run.errors),
        }
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return not run.errors


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--races", type=int, default=50, help="races of 4 players (50)")
    parser.add_argument("--moves", type=int, default=30, help="moves per player, then resign")
    parser.add_argument("--seed", type=int, default=1, help="seed of the players' choices")
    parser.add_argument(
        "--processes", type=int, default=1, help="own daphne processes sharing Redis (1)"
    )
    server_arguments(parser, redis_db=12)
    args = parser.parse_args(argv)
    extra = {"RACE_POOL_SIZE": "0"}  # the pool is filled below: no job from the server
    with servers_for(
        args, db_prefix="patience_racebench", count=args.processes, extra_env=extra
    ) as (bases, info):
        env = {
            "DATABASE_URL": f"{args.pg_url}/{info['database']}",
            "DJANGO_SETTINGS_MODULE": "patience_site.settings",
            "LOG_LEVEL": "WARNING",
        }
        out = subprocess.run(
            [sys.executable, "-c", _PREPARE, str(args.races), str(args.races * PLAYERS)],
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=True,
        )
        keys = [tuple(k) for k in json.loads(out.stdout.strip().splitlines()[-1])]
        run, wall, cpu = asyncio.run(run_races(bases, keys, args, info["pids"]))
        ok = report(run, wall, cpu, args, info)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
