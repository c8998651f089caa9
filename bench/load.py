"""Load test: many players at once, over REST and WebSocket, against PostgreSQL and Redis.

    python bench/load.py                          # own daphne, fresh database, 100 players, 60 s
    python bench/load.py --players 40 --seconds 20 --ws-share 0.25
    python bench/load.py --think 1.0              # players think ~1 s between moves
    python bench/load.py --url http://127.0.0.1:8000   # a running server (127.0.0.1 only)

Without ``--url`` it creates a fresh PostgreSQL database ``patience_load_<pid>``
(server given by ``--pg-url``), migrates it, starts ``--servers`` daphne
processes on free ports with production settings (DEBUG=False; Redis for the
cache, the channel layer and the boards' mirror when ``--redis-url`` answers;
rate limits raised out of the way through THROTTLE_RATE_USER/IP/AUTH), and
drops the database at the end. Against ``--url`` the server's rate limits must
allow the traffic (set THROTTLE_RATE_USER and THROTTLE_RATE_IP high there).

Every player registers over REST like a browser (CSRF, session, then a personal
token; before the clock starts, a few at a time, since the server hashes each
password on purpose slowly). Then, all at once for ``--seconds``: a share of the
players (``--daily-share``) first play today's daily of a random variant (the
ranked game), then every player starts practice games of random variants and
plays random legal moves (a move home first when there is one; now and then an
undo in practice games), resigning a game after ``--cap`` moves. Players join
at random moments of the first ``--ramp`` seconds and pause ``--think`` seconds on
average between moves (0: as fast as the server answers). Half the
players (``--ws-share``) play over ``ws/v1/games/<id>/`` (started over REST, as
the web page does), the others over REST. A finished daily is followed by a read
of the day's board. Own servers get today's dailies dealt before the clock by
``manage.py create_dailies``, as the production job deals them (a request never
does); against ``--url`` they must exist.

A player that loses its connection reconnects (backoff, bounded by the clock)
and resends the move whose answer it did not get with the same ply: the server
answers it as a duplicate if it had applied it, else applies it now. Every
acknowledged move is recorded (``Player.acks``): the crash test
(tests/e2e/test_crash.py) runs these players and checks the database against
them.

Printed: per transport the requests and moves per second, p50/p90/p99/max of
the moves' latency (request to answer) and of the other requests, and every
error by its code (HTTP status and error code, WebSocket error code), and the
lost connections (broken sockets, refused or timed-out handshakes). Every loop
is bounded in count and in time; traffic goes to 127.0.0.1 only. The exit
status is 1 when a request failed or a connection was lost, or nothing was
played.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import statistics
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._server import (  # noqa: E402
    choose,
    cpu_times,
    percentile,
    server_arguments,
    servers_for,
)
from devtools.accounts import register  # noqa: E402
from games.engine import VARIANTS as ENGINE_VARIANTS  # noqa: E402

VARIANTS = tuple(ENGINE_VARIANTS)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
#: Bounds of every player's loops, whatever the clock says.
MAX_GAMES = 10_000
MAX_ERRORS = 200
MAX_RECONNECTS = 1_000


#: A keep-alive connection idle longer than this is opened again: daphne (Twisted's
#: ``HTTPFactory``) closes one idle for 60 s, and a request sent on it then finds it gone.
KEEP_ALIVE_SECONDS = 50.0


class Lost(Exception):
    """The connection broke or could not be made (the server is down or restarting)."""


class GiveUp(Exception):
    """The clock ran out, or too many errors: the player stops."""


# -- a small HTTP/1.1 client ------------------------------------------------------------------


class Http:
    """One keep-alive HTTP/1.1 connection to 127.0.0.1, JSON in and out.

    Cheaper per request than ``requests`` (about a tenth of the client CPU), so
    one process can drive a hundred players without its own work inflating the
    latencies it measures. It never retries: a broken connection raises ``Lost``
    and the player decides what to resend.
    """

    def __init__(self, base: str, token: str, timeout: float) -> None:
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.used = 0.0  # time.monotonic() of the last answer

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError, asyncio.CancelledError):
                await self.writer.wait_closed()
        self.reader = self.writer = None

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        try:
            return await asyncio.wait_for(self._request(method, path, body), self.timeout)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            await self.close()
            raise Lost(f"{type(exc).__name__}") from exc

    async def _request(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if self.writer is not None and time.monotonic() - self.used > KEEP_ALIVE_SECONDS:
            await self.close()  # the server has closed it meanwhile: not a lost connection
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        data = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {self.prefix}{path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Authorization: Token {self.token}\r\nAccept: application/json\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        )
        self.writer.write(head.encode() + data)
        reader = self.reader
        assert reader is not None  # opened with the writer
        status_line = await reader.readuntil(b"\r\n")
        status = int(status_line.split(b" ", 2)[1])
        headers: dict[bytes, bytes] = {}
        while True:
            line = await reader.readuntil(b"\r\n")
            if line == b"\r\n":
                break
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        if b"content-length" in headers:
            payload = await reader.readexactly(int(headers[b"content-length"]))
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            chunks = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunks.append(await reader.readexactly(size + 2))
                if size == 0:
                    break
            payload = b"".join(c[:-2] for c in chunks)
        else:
            payload = await reader.read()
            await self.close()
        if headers.get(b"connection", b"").lower() == b"close":
            await self.close()
        self.used = time.monotonic()
        return status, json.loads(payload) if payload else None


# -- the players ------------------------------------------------------------------------------


@dataclass
class Config:
    """What the players do."""

    seconds: float = 60.0
    ws_share: float = 0.5
    daily_share: float = 0.2
    variants: tuple[str, ...] = VARIANTS
    cap: int = 300
    undo_share: float = 0.03
    think: float = 0.0
    #: Players join at random moments of this many first seconds, not all at once.
    ramp: float = 0.0
    timeout: float = 30.0
    seed: int = 1
    #: The day whose dailies are played: the server's today (a test's server runs on a
    #: pinned clock and passes its day).
    day: str = field(default_factory=lambda: datetime.now(UTC).date().isoformat())


@dataclass
class Ack:
    """A move the server acknowledged: it is stored at ``ply`` of ``game``."""

    game: int
    ply: int
    notation: str
    answer_ply: int
    status: str
    duplicate: bool
    resent: bool
    at: float


@dataclass
class Stats:
    """What all players measured: latencies by (transport, kind), errors by code."""

    latencies: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    errors: Counter = field(default_factory=Counter)
    lost: Counter = field(default_factory=Counter)
    games_started: Counter = field(default_factory=Counter)
    games_ended: Counter = field(default_factory=Counter)
    resent: Counter = field(default_factory=Counter)

    def time(self, transport: str, kind: str, ms: float) -> None:
        self.latencies.setdefault((transport, kind), []).append(ms)


class Deadline:
    """The end of the run; the crash test moves it once the server is back."""

    def __init__(self, at: float) -> None:
        self.at = at

    def left(self) -> float:
        return self.at - time.perf_counter()


class Player:
    """One player: REST for everything, or REST to start games and a socket to play them."""

    def __init__(
        self,
        index: int,
        base: str,
        token: str,
        *,
        transport: str,
        daily: bool,
        config: Config,
        stats: Stats,
    ) -> None:
        self.index = index
        self.base = base
        self.token = token
        self.transport = transport
        self.daily = daily
        self.config = config
        self.stats = stats
        self.rng = random.Random(config.seed * 100_003 + index)
        self.http = Http(base, token, config.timeout)
        self.ws: Any = None
        self.acks: list[Ack] = []
        self.errors = 0
        self.reconnects = 0
        self.deadline = Deadline(0.0)

    # -- the loop --

    async def run(self, deadline: Deadline) -> None:
        self.deadline = deadline
        try:
            if self.config.ramp:
                await asyncio.sleep(min(self.config.ramp * self.rng.random(), deadline.left()))
            for n in range(MAX_GAMES):
                if deadline.left() <= 0:
                    break
                daily = self.daily and n == 0
                state = await self.start_game(daily)
                if state is None:
                    continue
                self.stats.games_started["daily" if daily else "practice"] += 1
                await self.play(state)
                if daily:
                    await self.read_board(state["variant"])
        except GiveUp:
            pass
        finally:
            await self.http.close()
            await self.close_socket()

    def check(self) -> None:
        if self.deadline.left() <= 0 or self.errors >= MAX_ERRORS:
            raise GiveUp

    def error(self, code: str) -> None:
        self.stats.errors[code] += 1
        self.errors += 1

    async def start_game(self, daily: bool) -> dict[str, Any] | None:
        variant = self.rng.choice(self.config.variants)
        if daily:
            path, body = f"/api/v1/daily/{variant}/{self.config.day}/play/", None
        else:
            path, body = "/api/v1/games/", {"variant": variant}
        # Not resent after a lost answer: a second game would start, which is harmless.
        status, data = await self.rest("daily" if daily else "start", "POST", path, body)
        if status in (200, 201):
            return data
        self.error(f"rest {status} {_code(data)}")
        await asyncio.sleep(min(0.5, max(0.0, self.deadline.left())))
        return None

    async def play(self, state: dict[str, Any]) -> None:
        game = state["id"]
        if self.transport == "ws":
            state = await self.open_socket(game)
        for _ in range(self.config.cap + 50):
            if state["status"] != "playing":
                break
            self.check()
            if state["ply"] >= self.config.cap:
                state = await self.resign(game)
                break
            if self.config.think:
                await asyncio.sleep(self.rng.uniform(0, 2 * self.config.think))
                self.check()
            undo = (
                state["can_undo"]
                and not state["ranked"]
                and self.rng.random() < self.config.undo_share
            )
            move = "undo" if undo else choose(state["legal_moves"], self.rng)
            state = await self.move(game, move, state["ply"])
        if state["status"] != "playing":
            self.stats.games_ended[state["status"]] += 1
        if self.transport == "ws":
            await self.close_socket()

    # -- requests, with reconnection --

    async def rest(self, kind: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One REST request, timed; a lost connection is retried once the server answers."""
        for _ in range(MAX_RECONNECTS):
            self.check()
            t0 = time.perf_counter()
            try:
                status, data = await self.http.request(method, path, body)
            except Lost as exc:
                self.lost(exc)
                await self.wait_for_server()
                continue
            self.stats.time("rest", kind, (time.perf_counter() - t0) * 1000)
            return status, data
        raise GiveUp

    async def read_board(self, variant: str) -> None:
        """After a daily: today's board of its variant."""
        status, data = await self.rest(
            "board", "GET", f"/api/v1/daily/{variant}/{self.config.day}/board/"
        )
        if status != 200:
            self.error(f"rest {status} {_code(data)}")

    def lost(self, exc: Exception) -> None:
        self.stats.lost[f"{self.transport} {exc}"] += 1

    async def wait_for_server(self) -> None:
        """Back off before trying again (the server may be restarting)."""
        self.reconnects += 1
        if self.reconnects > MAX_RECONNECTS:
            raise GiveUp
        delay = min(0.5, 0.05 * 2 ** min(self.reconnects, 4))
        await asyncio.sleep(min(delay * (0.5 + self.rng.random()), max(0.0, self.deadline.left())))
        self.check()

    async def move(self, game: int, move: str, ply: int) -> dict[str, Any]:
        """Send a move (or undo) until it is acknowledged; the next state."""
        resent = False
        for _ in range(MAX_RECONNECTS):
            self.check()
            t0 = time.perf_counter()
            try:
                ok, answer = await self.send_move(game, move, ply)
            except Lost as exc:
                self.lost(exc)
                await self.reconnect(game)
                resent = True
                continue
            if not ok:  # an error answer (code already counted): start again from the server's
                return await self.resync(game)
            ms = (time.perf_counter() - t0) * 1000
            if not resent:
                self.stats.time(self.transport, "move", ms)
            duplicate = bool(answer.get("duplicate"))
            if answer["ply"] != ply + 1:
                self.error(f"{self.transport} answer at ply {answer['ply']} to ply {ply}")
                return answer
            if resent:
                self.stats.resent["duplicate" if duplicate else "applied"] += 1
            elif duplicate:
                self.error(f"{self.transport} duplicate answer to a first send")
            self.acks.append(
                Ack(
                    game,
                    ply,
                    move,
                    answer["ply"],
                    answer["status"],
                    duplicate,
                    resent,
                    time.perf_counter(),
                )
            )
            return answer
        raise GiveUp

    async def send_move(self, game: int, move: str, ply: int) -> tuple[bool, dict[str, Any]]:
        if self.transport == "rest":
            path = (
                f"/api/v1/games/{game}/undo/" if move == "undo" else f"/api/v1/games/{game}/moves/"
            )
            body = {"ply": ply} if move == "undo" else {"move": move, "ply": ply}
            status, data = await self.http.request("POST", path, body)
            if status == 200:
                return True, data
            self.error(f"rest {status} {_code(data)}")
            return False, data
        frame: dict[str, Any] = (
            {"type": "undo", "ply": ply} if move == "undo" else {"type": "move", "move": move}
        )
        frame["ply"] = ply
        answer = await self.ask(frame, "undo" if move == "undo" else "move")
        if answer["type"] == "state":
            return True, {**answer["state"], "duplicate": answer.get("duplicate", False)}
        self.error(f"ws error {answer.get('error', {}).get('code')}")
        return False, answer

    async def resync(self, game: int) -> dict[str, Any]:
        """The game as the server has it (after an error answer)."""
        for _ in range(MAX_RECONNECTS):
            self.check()
            try:
                if self.transport == "ws":
                    answer = await self.ask({"type": "resync"}, "resync")
                    if answer["type"] == "state":
                        return answer["state"]
                    self.error(f"ws error {answer.get('error', {}).get('code')}")
                    raise GiveUp
                status, data = await self.http.request("GET", f"/api/v1/games/{game}/")
                if status == 200:
                    return data
                self.error(f"rest {status} {_code(data)}")
                raise GiveUp
            except Lost as exc:
                self.lost(exc)
                await self.reconnect(game)
        raise GiveUp

    async def resign(self, game: int) -> dict[str, Any]:
        for _ in range(MAX_RECONNECTS):
            self.check()
            t0 = time.perf_counter()
            try:
                if self.transport == "ws":
                    answer = await self.ask({"type": "resign"}, "resign")
                    ok = answer["type"] == "state"
                    data: Any = answer.get("state") if ok else answer
                    code = None if ok else answer.get("error", {}).get("code")
                else:
                    status, data = await self.http.request("POST", f"/api/v1/games/{game}/resign/")
                    ok, code = status == 200, f"{status} {_code(data)}"
            except Lost as exc:
                self.lost(exc)
                state = await self.reconnect(game)
                if state["status"] != "playing":  # the lost resignation was applied
                    return state
                continue
            if ok:
                self.stats.time(self.transport, "resign", (time.perf_counter() - t0) * 1000)
                return data
            self.error(f"{self.transport} {'error ' if self.transport == 'ws' else ''}{code}")
            return await self.resync(game)
        raise GiveUp

    async def reconnect(self, game: int) -> dict[str, Any]:
        """After a lost connection: wait for the server, then read the game again."""
        for _ in range(MAX_RECONNECTS):
            await self.wait_for_server()
            try:
                if self.transport == "ws":
                    return await self.open_socket(game, timed=False)
                status, data = await self.http.request("GET", f"/api/v1/games/{game}/")
            except Lost as exc:
                self.lost(exc)
                continue
            if status == 200:
                return data
            self.error(f"rest {status} {_code(data)}")
        raise GiveUp

    # -- the socket --

    async def open_socket(self, game: int, *, timed: bool = True) -> dict[str, Any]:
        from websockets.asyncio.client import connect
        from websockets.exceptions import WebSocketException

        await self.close_socket()
        url = self.base.replace("http", "ws", 1) + f"/ws/v1/games/{game}/"
        headers = {"Authorization": f"Token {self.token}"}
        t0 = time.perf_counter()
        for _ in range(MAX_RECONNECTS):
            self.check()
            try:
                self.ws = await connect(
                    url,
                    additional_headers=headers,
                    proxy=None,
                    compression=None,
                    open_timeout=self.config.timeout,
                    close_timeout=1,
                )
                first = json.loads(await asyncio.wait_for(self.ws.recv(), self.config.timeout))
            except (TimeoutError, OSError, WebSocketException) as exc:
                self.lost(Lost(type(exc).__name__))
                await self.close_socket()
                await self.wait_for_server()
                continue
            if first.get("type") != "state":
                self.error(f"ws connect {first}")
                raise GiveUp
            if timed:
                self.stats.time("ws", "connect", (time.perf_counter() - t0) * 1000)
            return first["state"]
        raise GiveUp

    async def close_socket(self) -> None:
        if self.ws is not None:
            ws, self.ws = self.ws, None
            with contextlib.suppress(Exception):  # closing a broken socket: nothing to do
                await ws.close()

    async def ask(self, request: dict[str, Any], cause: str) -> dict[str, Any]:
        """Send a request frame; the answer to it (state pushed by other changes is skipped)."""
        from websockets.exceptions import WebSocketException

        if self.ws is None:
            raise Lost("no socket")
        try:
            await self.ws.send(json.dumps(request))
            for _ in range(1000):
                answer = json.loads(await asyncio.wait_for(self.ws.recv(), self.config.timeout))
                if answer.get("cause") == cause or answer.get("cause") == "message":
                    return answer
        except (TimeoutError, OSError, WebSocketException) as exc:
            await self.close_socket()
            raise Lost(type(exc).__name__) from exc
        raise Lost("no answer among 1000 frames")


def _code(data: Any) -> str:
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            return str(error.get("code"))
    return "-"


def make_players(
    base: str | list[str], tokens: list[str], config: Config, stats: Stats
) -> list[Player]:
    """Players over the tokens: the first ``ws_share`` over sockets, ``daily_share`` of each
    transport playing today's daily first; several servers are used in turn."""
    bases = [base] if isinstance(base, str) else base
    n = len(tokens)
    n_ws = round(n * config.ws_share)
    players = []
    for i, token in enumerate(tokens):
        transport = "ws" if i < n_ws else "rest"
        k, size = (i, n_ws) if transport == "ws" else (i - n_ws, n - n_ws)
        daily = k < round(size * config.daily_share)
        players.append(
            Player(
                i,
                bases[i % len(bases)],
                token,
                transport=transport,
                daily=daily,
                config=config,
                stats=stats,
            )
        )
    return players


async def run_players(players: list[Player], deadline: Deadline) -> None:
    await asyncio.gather(*(p.run(deadline) for p in players))


# -- registration -----------------------------------------------------------------------------


def register_all(bases: list[str], count: int, concurrency: int) -> tuple[list[str], float]:
    """Register ``count`` players over REST, a few at a time; their tokens and the time taken."""
    from concurrent.futures import ThreadPoolExecutor

    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        tokens = list(
            pool.map(
                lambda i: register(bases[i % len(bases)], f"load-{uuid.uuid4().hex[:12]}"),
                range(count),
            )
        )
    return tokens, time.perf_counter() - began


# -- report -----------------------------------------------------------------------------------


def summary(values: list[float], wall: float) -> dict[str, Any]:
    v = sorted(values)
    return {
        "count": len(v),
        "per_s": round(len(v) / wall, 1) if wall else 0.0,
        "p50_ms": round(percentile(v, 0.5), 1),
        "p90_ms": round(percentile(v, 0.9), 1),
        "p99_ms": round(percentile(v, 0.99), 1),
        "max_ms": round(v[-1], 1) if v else None,
        "mean_ms": round(statistics.fmean(v), 1) if v else None,
    }


def latency_rows(players: list[Player], stats: Stats, wall: float) -> dict[str, dict[str, Any]]:
    """The report's rows: moves by transport, each other request kind, all moves, all."""
    rows: dict[str, dict[str, Any]] = {}
    for transport in ("rest", "ws"):
        group = [p for p in players if p.transport == transport]
        if not group:
            continue
        rows[f"{transport} moves"] = {
            "players": len(group),
            **summary(stats.latencies.get((transport, "move"), []), wall),
        }
    for key in sorted(stats.latencies):
        if key[1] != "move":
            rows[f"{key[0]} {key[1]}"] = summary(stats.latencies[key], wall)
    all_moves = [x for (_, k), v in stats.latencies.items() if k == "move" for x in v]
    rows["all moves"] = {"players": len(players), **summary(all_moves, wall)}
    every = [x for v in stats.latencies.values() for x in v]
    rows["all requests"] = summary(every, wall)
    return rows


def print_failures(stats: Stats) -> int:
    """Print the errors, lost connections and resent moves; the number of errors."""
    errors = sum(stats.errors.values())
    print(f"  errors       {errors}" + ("" if errors else " (none)"))
    for code, n in stats.errors.most_common():
        print(f"    {n:>7}  {code}")
    if stats.lost:
        print(
            f"  lost connections {sum(stats.lost.values())} (broken sockets, refused or timed-out "
            "handshakes and requests: reconnected, moves resent)"
        )
        for code, n in stats.lost.most_common():
            print(f"    {n:>7}  {code}")
    if stats.resent:
        print(f"  resent moves {dict(stats.resent)}")
    return errors


def report(
    players: list[Player], stats: Stats, wall: float, info: dict[str, Any], args: argparse.Namespace
) -> bool:
    rows = latency_rows(players, stats, wall)
    moves = rows["all moves"]["count"]
    requests = rows["all requests"]["count"]

    load = tuple(round(x, 2) for x in os.getloadavg())
    print(
        f"Load test ({platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{info.get('load_before')} before the clock, {load} at the end)"
    )
    print(f"  server       {info.get('server')}  database {info.get('database', '-')}")
    print(f"  redis        {info.get('redis', '-')}")
    n_ws = sum(p.transport == "ws" for p in players)
    n_daily = sum(p.daily for p in players)
    print(
        f"  players      {len(players)} ({len(players) - n_ws} REST, {n_ws} WebSocket; "
        f"{n_daily} start with today's daily), {wall:.1f} s, think {args.think:g} s, "
        f"joining over {args.ramp:g} s"
    )
    if "register_s" in info:
        print(
            f"  registration {len(players)} players in {info['register_s']:.1f} s before the "
            f"clock ({args.register_concurrency} at a time; PBKDF2 on the server)"
        )
    if "dailies_s" in info:
        dealt = info["dailies_s"]
        print(f"  dailies      dealt by create_dailies in {dealt:.1f} s before the clock")
    print()
    header = (
        f"  {'':<16}{'count':>8}{'per s':>9}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}"
    )
    print(header)
    for name, row in rows.items():
        print(
            f"  {name:<16}{row['count']:>8}{row['per_s']:>9}{row['p50_ms']:>9}"
            f"{row['p90_ms']:>9}{row['p99_ms']:>9}{row['max_ms'] or '-':>9}"
        )
    print()
    print(f"  games        started {dict(stats.games_started)}, ended {dict(stats.games_ended)}")
    cpu = info.get("server_cpu")
    if cpu is not None and moves:
        print(
            f"  server CPU   {sum(cpu):.1f} s (user {cpu[0]:.1f}, sys {cpu[1]:.1f}) = "
            f"{1000 * sum(cpu) / requests:.2f} ms per request"
        )
    print(f"  client CPU   {info.get('client_cpu', 0):.1f} s (this process)")
    errors = print_failures(stats)
    ok = not errors and not stats.lost and bool(moves)
    print("PASS" if ok else "FAIL")
    if args.json:
        figures = {
            "players": len(players),
            "ws_players": n_ws,
            "daily_players": n_daily,
            "seconds": round(wall, 2),
            "think_s": args.think,
            "ramp_s": args.ramp,
            "rows": rows,
            "errors": dict(stats.errors),
            "lost": dict(stats.lost),
            "games_started": dict(stats.games_started),
            "games_ended": dict(stats.games_ended),
            "cpus": os.cpu_count(),
            "load_average_end": load,
            "lost_total": sum(stats.lost.values()),
            **{k: v for k, v in info.items() if k != "pids"},
        }
        Path(args.json).write_text(json.dumps(figures, indent=2, default=str))
    return ok


# -- main -------------------------------------------------------------------------------------


def play(bases: list[str], args: argparse.Namespace, pids: list[int]) -> bool:
    info: dict[str, Any] = {}
    tokens, info["register_s"] = register_all(bases, args.players, args.register_concurrency)
    config = Config(
        seconds=args.seconds,
        ws_share=args.ws_share,
        daily_share=args.daily_share,
        variants=tuple(args.variants.split(",")),
        cap=args.cap,
        undo_share=args.undo_share,
        think=args.think,
        ramp=args.ramp,
        seed=args.seed,
    )
    stats = Stats()
    players = make_players(bases, tokens, config, stats)
    info["load_before"] = tuple(round(x, 2) for x in os.getloadavg())
    cpu0 = [cpu_times(pid) for pid in pids]
    client0 = time.process_time()
    began = time.perf_counter()
    asyncio.run(run_players(players, Deadline(began + args.seconds)))
    wall = time.perf_counter() - began
    info["client_cpu"] = time.process_time() - client0
    cpu1 = [cpu_times(pid) for pid in pids]
    if pids and None not in cpu0 and None not in cpu1:
        pairs = [(a, b) for a, b in zip(cpu0, cpu1, strict=True) if a is not None and b is not None]
        info["server_cpu"] = (
            sum(b[0] - a[0] for a, b in pairs),
            sum(b[1] - a[1] for a, b in pairs),
        )
    info.update(args.server_info)
    return report(players, stats, wall, info, args)


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--url", help="base URL of a running server on 127.0.0.1 (default: own)")
    parser.add_argument("--servers", type=int, default=1, help="own daphne processes (1)")
    parser.add_argument("--players", type=int, default=100, help="concurrent players (100)")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the run (60)")
    parser.add_argument(
        "--ws-share", type=float, default=0.5, help="share of players on WebSocket (0.5)"
    )
    parser.add_argument(
        "--daily-share", type=float, default=0.2, help="share starting with today's daily (0.2)"
    )
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    parser.add_argument("--cap", type=int, default=300, help="resign a game after N moves (300)")
    parser.add_argument(
        "--undo-share", type=float, default=0.03, help="chance of an undo in practice (0.03)"
    )
    parser.add_argument(
        "--think", type=float, default=0.0, help="mean pause between a player's moves, s (0)"
    )
    parser.add_argument(
        "--ramp", type=float, default=5.0, help="players join over the first N seconds (5)"
    )
    parser.add_argument(
        "--register-concurrency", type=int, default=4, help="registrations at once (4)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the players' choices")
    server_arguments(parser, redis_db=12)
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 3600 or not 0 < args.players <= 2000:
        parser.error("--seconds must be in (0, 3600] and --players in (0, 2000]")

    if args.url:
        bases = [u.rstrip("/") for u in args.url.split(",")]
        for b in bases:
            if urlsplit(b).hostname not in LOCAL_HOSTS:
                parser.error(f"{b}: this load test only talks to 127.0.0.1")
        args.server_info = {"server": ", ".join(bases)}
        ok = play(bases, args, [])
    else:
        with servers_for(
            args, db_prefix="patience_load", count=args.servers, dailies=bool(args.daily_share)
        ) as (bases, info):
            args.server_info = info
            ok = play(bases, args, info["pids"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
