"""Faults, floods and abuse against real daphne processes (issue 14), with figures.

    python bench/faults.py redis      # Redis killed, restarted, paused (SIGSTOP) under play
    python bench/faults.py flood      # one account floods 10 sockets on 2 processes
    python bench/faults.py longlog    # a 5,000-entry log read by 4 clients while another plays
    python bench/faults.py database   # PostgreSQL terminates every backend under play
    python bench/faults.py stale      # backends terminated while idle; writes in waves after

Each scenario makes a fresh PostgreSQL database, starts its own redis-server on a
free port (never the machine's shared Redis) and its own daphne processes with
production settings, seeds accounts and games through ``manage.py shell`` (no
slow password hashing), and plays over REST and WebSocket on 127.0.0.1 only.
Every loop is bounded in time. Printed per phase: answers by status, latency
p50/max; and the scenario's own checks (results missing from the board's
mirror, answers per second of one account, another player's move p50).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._server import Pace, database_arguments, percentile  # noqa: E402
from bench.load import Http, Lost  # noqa: E402
from devtools.servers import RedisServer, own_servers, server_env, subprocess_json  # noqa: E402

SEED = """
import json
from django.contrib.auth import get_user_model
from core import clock
from games.selectors import games as game_selectors
from accounts import services as account_services
from games.services import dailies as daily_services
from games.services import games as game_services
from games.engine.record import Entry, pack, position_bytes
from games.models import Game
spec = {spec}
out = {{"players": [], "daily": None}}
for i in range(spec["players"]):
    user = get_user_model().objects.create(username=f"p{{i}}")
    key = account_services.token_create(user=user, name="bench")[1]
    game = game_services.practice_game_start(user=user, variant="bristol", seed=100 + i)
    out["players"].append({{"token": key, "game": game.pk, "name": user.username}})
deal = daily_services.daily_create("bristol", clock.today())
out["daily"] = deal.pk
long = spec.get("long_log", 0)
if long:
    game = Game.objects.select_related("deal").get(pk=out["players"][0]["game"])
    start = game_selectors.game_position(game)
    quiet = [str(m) for m in start.legal_moves if not str(m).startswith("deal")]
    move = next(m for m in quiet if start.apply(m).stock_count == start.stock_count)
    after = start.apply(move)
    at = [after, start]  # after an entry of even ply, of odd ply (the undo)
    log = pack("bristol", [Entry("undo" if p % 2 else move, 1) for p in range(long)])
    last = position_bytes(at[(long - 1) % 2])
    Game.objects.filter(pk=game.pk).update(ply=long, position=last, log=log)
print(json.dumps(out))
"""


def seed(database: str, args: argparse.Namespace, redis_url: str, **spec: Any) -> dict[str, Any]:
    """Accounts with tokens and practice games (and a long log), made in one shell process."""
    env = server_env(
        database_url=f"{args.pg_url}/{database}", redis_url=redis_url, settings=args.settings
    )
    code = SEED.format(spec=json.dumps(spec))
    return subprocess_json("manage.py", "shell", "-c", code, env=env, timeout=600)


@contextmanager
def stack(
    args: argparse.Namespace, **servers: Any
) -> Iterator[tuple[RedisServer, list[str], dict[str, Any]]]:
    """A redis-server of its own, a fresh database and daphne processes; all gone after."""
    redis = RedisServer()
    redis.start()
    try:
        with own_servers(
            db_prefix="patience_faults",
            pg_url=args.pg_url,
            redis_url=redis.url,
            settings=args.settings,
            **servers,
        ) as (bases, info):
            yield redis, bases, info
    finally:
        redis.stop()


class Phases:
    """Answers (status, latency) counted in the phase they were sent in."""

    def __init__(self) -> None:
        self.name = "warm-up"
        self.answers: dict[str, list[tuple[int, float]]] = {}

    def record(self, status: int, seconds: float) -> None:
        self.answers.setdefault(self.name, []).append((status, seconds))

    def report(self) -> None:
        for name, answers in self.answers.items():
            statuses = Counter(status for status, _ in answers)
            times = sorted(t * 1000 for _, t in answers)
            print(
                f"  {name:28} {len(answers):6} answers  "
                + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items()))
                + f"  p50 {percentile(times, 0.5):7.1f} ms  max {times[-1]:7.1f} ms"
            )

    def count(self, status: int) -> int:
        return sum(1 for answers in self.answers.values() for s, _ in answers if s == status)


async def rest_player(
    base: str, player: dict[str, Any], phases: Phases, until: float, day: str
) -> None:
    """Read the game, move, read the day's board, again, until the clock runs out."""
    http = Http(base, player["token"], timeout=30)
    game = f"/api/v1/games/{player['game']}/"
    body: str | dict[str, Any] | None
    while time.monotonic() < until:
        for method, path, body in (
            ("GET", game, None),
            ("POST", game + "moves/", "move"),
            ("GET", f"/api/v1/daily/bristol/{day}/board/", None),
        ):
            if body == "move":
                status, state = await http.request("GET", game)
                if status != 200 or not state["legal_moves"]:
                    continue
                body = {"move": state["legal_moves"][0], "ply": state["ply"]}
            t0 = time.monotonic()
            try:
                status, _ = await http.request(method, path, body)
            except Lost:
                status = 0
            phases.record(status, time.monotonic() - t0)
        await asyncio.sleep(0.05)
    await http.close()


async def finish_daily(base: str, player: dict[str, Any], day: str) -> float:
    """Start today's ranked daily and resign it; seconds the resignation took."""
    http = Http(base, player["token"], timeout=30)
    status, state = await http.request("POST", f"/api/v1/daily/bristol/{day}/play/")
    assert status in (200, 201), (status, state)
    t0 = time.monotonic()
    status, _ = await http.request("POST", f"/api/v1/games/{state['id']}/resign/")
    took = time.monotonic() - t0
    await http.close()
    assert status == 200, status
    return took


def board_check(
    base: str, token: str, day: str, redis_url: str, pg_url: str, database: str, deal: int
) -> str:
    """The board after recovery against PostgreSQL and the mirror: nothing missing, ranks apart."""
    import psycopg
    import redis
    import requests

    board = requests.get(
        f"{base}/api/v1/daily/bristol/{day}/board/",
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    ).json()
    ranks = [line["rank"] for line in board["results"]]
    with psycopg.connect(f"{pg_url}/{database}") as conn:
        row = conn.execute(
            "SELECT count(*) FROM games_result WHERE deal_id = %s AND NOT disqualified", [deal]
        ).fetchone()
    assert row is not None  # count(*) answers one row
    stored = row[0]
    mirror = redis.Redis.from_url(redis_url).zcard(f"patience:{database}:board:{deal}") - 1
    return (
        f"results in PostgreSQL {stored}, in the Redis mirror {mirror} (missing {stored - mirror}),"
        f" board total {board['total']}, ranks {ranks} (distinct: {len(set(ranks)) == len(ranks)})"
    )


def scenario_redis(args: argparse.Namespace) -> None:
    with stack(args) as (server, bases, info):
        data = seed(info["database"], args, server.url, players=args.players + 3)
        day = time.strftime("%Y-%m-%d", time.gmtime())
        players, finishers = data["players"][: args.players], data["players"][args.players :]
        phases = Phases()

        async def run() -> list[float]:
            t = args.phase
            until = time.monotonic() + 5 * t + 7
            tasks = [
                asyncio.create_task(rest_player(bases[0], p, phases, until, day)) for p in players
            ]
            resigns = [await finish_daily(bases[0], finishers[0], day)]
            await asyncio.sleep(t)
            phases.name = "Redis killed"
            server.kill()
            await asyncio.sleep(t)
            server.start()
            phases.name = "Redis restarted (empty)"
            await asyncio.sleep(t)
            phases.name = "Redis paused 7 s (SIGSTOP)"
            server.pause()
            resigns += [await finish_daily(bases[0], f, day) for f in finishers[1:]]
            await asyncio.sleep(max(0.0, 7 - sum(resigns[1:])))
            server.resume()
            phases.name = "Redis resumed"
            await asyncio.gather(*tasks)
            return resigns

        resigns = asyncio.run(run())
        print(f"Redis faults under play: {args.players} REST players, {info['database']}")
        phases.report()
        print(f"  answers 500: {phases.count(500)}; lost connections: {phases.count(0)}")
        print(
            "  ranked dailies resigned (before; during the pause): "
            + ", ".join(f"{r * 1000:.0f} ms" for r in resigns)
        )
        check = board_check(
            bases[0],
            players[0]["token"],
            day,
            server.url,
            args.pg_url,
            info["database"],
            data["daily"],
        )
        print("  after recovery: " + check)


async def flood_socket(
    url: str, token: str, until: float, answers: Counter, per_second: Counter
) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    headers = {"Authorization": f"Token {token}"}
    while time.monotonic() < until:
        try:
            async with connect(url, additional_headers=headers, open_timeout=10) as ws:
                await ws.recv()
                while time.monotonic() < until:
                    await ws.send('{"type": "resync"}')
                    kind = json.loads(await ws.recv())
                    kind = kind["type"] if kind["type"] != "error" else kind["error"]["code"]
                    answers[kind] += 1
                    if kind == "state":
                        per_second[int(time.monotonic())] += 1
        except ConnectionClosed as exc:
            answers[f"closed {exc.rcvd.code if exc.rcvd else '?'}"] += 1
        except OSError:
            answers["connect failed"] += 1
            await asyncio.sleep(0.5)


def scenario_flood(args: argparse.Namespace) -> None:
    rate = "THROTTLE_RATE_USER"
    with stack(args, count=2, extra_env={rate: "1200/min"}) as (server, bases, info):
        data = seed(info["database"], args, server.url, players=1)
        player = data["players"][0]
        answers: Counter = Counter()
        per_second: Counter = Counter()

        async def run() -> float:
            t0 = time.monotonic()
            until = t0 + args.seconds
            urls = [
                bases[i % 2].replace("http", "ws") + f"/ws/v1/games/{player['game']}/"
                for i in range(10)
            ]
            await asyncio.gather(
                *(flood_socket(u, player["token"], until, answers, per_second) for u in urls)
            )
            return time.monotonic() - t0

        wall = asyncio.run(run())
        served = answers["state"]
        window = max(sum(per_second[s] for s in range(start, start + 60)) for start in per_second)
        print(f"One account, 10 sockets on 2 processes, {wall:.0f} s, {rate}=1200/min")
        print(f"  answers by kind: {dict(answers)}")
        print(
            f"  served {served} frames: {served / wall:.1f}/s on average; "
            f"at most {window} in any 60 s (budget 1200 a minute)"
        )


async def mover(base: str, player: dict[str, Any], until: float, times: list[float]) -> None:
    http = Http(base, player["token"], timeout=30)
    game = f"/api/v1/games/{player['game']}/"
    status, state = await http.request("GET", game)
    while time.monotonic() < until:
        if state["status"] != "playing":
            status, created = await http.request("POST", "/api/v1/games/", {"variant": "bristol"})
            game, state = f"/api/v1/games/{created['id']}/", created
        body = {"move": state["legal_moves"][0], "ply": state["ply"]}
        t0 = time.monotonic()
        status, answer = await http.request("POST", game + "moves/", body)
        times.append(time.monotonic() - t0)
        state = answer if status == 200 else (await http.request("GET", game))[1]
    await http.close()


async def log_reader(
    base: str, player: dict[str, Any], until: float, rate: float, reads: list[int]
) -> None:
    """Read the first page of a game's log ``rate`` times a second."""
    http = Http(base, player["token"], timeout=30)
    pace = Pace(rate)
    while time.monotonic() < until:
        await asyncio.sleep(pace.due())
        pace.take()
        status, page = await http.request("GET", f"/api/v1/games/{player['game']}/moves/")
        reads.append(len(page["results"]) if status == 200 else -status)
    await http.close()


def scenario_longlog(args: argparse.Namespace) -> None:
    with stack(args) as (server, bases, info):
        data = seed(info["database"], args, server.url, players=3, long_log=5000)
        long_reader, player, short_reader = data["players"]

        async def run(reader: dict[str, Any] | None) -> tuple[list[float], list[int]]:
            until = time.monotonic() + args.phase * 2
            times: list[float] = []
            reads: list[int] = []
            readers = [] if reader is None else [reader] * 4
            await asyncio.gather(
                mover(bases[0], player, until, times),
                *(log_reader(bases[0], r, until, args.read_rate, reads) for r in readers),
            )
            return sorted(times), reads

        print(
            "Another player's moves (closed loop) while 4 clients each read the first page "
            f"of a log {args.read_rate:g} times a second"
        )
        quiet, _ = asyncio.run(run(None))
        q50 = percentile(quiet, 0.5) * 1000
        print(f"  quiet: {len(quiet)} moves, p50 {q50:.1f} ms")
        logs = (("5,000-entry log", long_reader), ("log with no entries", short_reader))
        for name, reader in logs:
            busy, reads = asyncio.run(run(reader))
            b50 = percentile(busy, 0.5) * 1000
            print(
                f"  reading a {name}: {len(busy)} moves, p50 {b50:.1f} ms "
                f"({(b50 / q50 - 1) * 100:+.0f}% on quiet); {len(reads)} pages read, "
                f"{max(reads)} entries each at most"
            )


def scenario_database(args: argparse.Namespace) -> None:
    import psycopg

    with stack(args) as (server, bases, info):
        data = seed(info["database"], args, server.url, players=args.players)
        day = time.strftime("%Y-%m-%d", time.gmtime())
        phases = Phases()

        async def run() -> None:
            until = time.monotonic() + 3 * args.phase
            tasks = [
                asyncio.create_task(rest_player(bases[0], p, phases, until, day))
                for p in data["players"]
            ]
            await asyncio.sleep(args.phase)
            phases.name = "backends terminated"
            killed, end = 0, time.monotonic() + args.phase
            with psycopg.connect(f"{args.pg_url}/postgres", autocommit=True) as conn:
                while time.monotonic() < end:  # again and again, to hit queries in flight
                    row = conn.execute(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE datname = %s",
                        [info["database"]],
                    ).fetchone()
                    assert row is not None  # count() answers one row
                    killed += row[0]
                    await asyncio.sleep(0.2)
            print(f"  terminated {killed} backends in {args.phase:g} s")
            phases.name = "afterwards"
            await asyncio.gather(*tasks)

        print(f"PostgreSQL terminates every backend under play ({args.players} REST players)")
        asyncio.run(run())
        phases.report()
        print(f"  answers 500: {phases.count(500)}, 503: {phases.count(503)}")


async def write_wave(base: str, players: list[dict[str, Any]]) -> Counter[int]:
    """Every player moves once, all at the same time, from the state its last answer showed
    (no read first: a read that meets a dead connection is retried, a write is not): the
    answers by status."""

    async def one(player: dict[str, Any]) -> int:
        http = Http(base, player["token"], timeout=30)
        game = f"/api/v1/games/{player['game']}/"
        try:
            if "state" not in player:
                status, player["state"] = await http.request("GET", game)
            state = player["state"]
            body = {"move": state["legal_moves"][0], "ply": state["ply"]}
            status, answer = await http.request("POST", game + "moves/", body)
            if status in (200, 201):
                player["state"] = answer.get("state", answer)
            return status
        except Lost:
            return 0
        finally:
            await http.close()

    return Counter(await asyncio.gather(*(one(p) for p in players)))


def scenario_stale(args: argparse.Namespace) -> None:
    """Issue 30's reproduction: the pool fills under a wave of writes, PostgreSQL ends every
    backend while the server idles, then waves of writes come at growing intervals; each
    dead pooled connection that is handed out costs its request a 503."""
    import psycopg

    with stack(args, server="gunicorn") as (server, bases, info):
        data = seed(info["database"], args, server.url, players=args.players)
        players = data["players"]

        async def run() -> None:
            for _ in range(3):  # the pool grows to one connection per busy thread
                await write_wave(bases[0], players)
            with psycopg.connect(f"{args.pg_url}/postgres", autocommit=True) as conn:
                row = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = %s",
                    [info["database"]],
                ).fetchone()
            print(f"  terminated {row[0] if row else 0} idle backends")
            began, refused = time.monotonic(), []
            for i in range(args.trickle):  # light traffic: one write every 3 s
                await asyncio.sleep(max(0.0, began + 3 * i - time.monotonic()))
                wave = await write_wave(bases[0], players[i % len(players) : i % len(players) + 1])
                refused += [3 * i] * (wave[503] + wave[500] + wave[0])
            print(
                f"  {args.trickle} single writes, one every 3 s: {len(refused)} refused"
                + (f", the last at +{refused[-1]} s" if refused else "")
            )
            wave = await write_wave(bases[0], players)
            print("  then all at once: " + ", ".join(f"{s}: {n}" for s, n in sorted(wave.items())))

        print("Idle backends terminated, then light traffic of writes")
        asyncio.run(run())


SCENARIOS = {
    "redis": scenario_redis,
    "flood": scenario_flood,
    "longlog": scenario_longlog,
    "database": scenario_database,
    "stale": scenario_stale,
}


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    database_arguments(parser)
    parser.add_argument("--players", type=int, default=8, help="REST players (redis, database)")
    parser.add_argument("--trickle", type=int, default=15, help="single writes (stale)")
    parser.add_argument("--phase", type=float, default=5.0, help="seconds of each phase")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the flood")
    parser.add_argument(
        "--read-rate", type=float, default=5.0, help="log pages each of 4 readers asks a second"
    )
    args = parser.parse_args(argv)
    SCENARIOS[args.scenario](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
