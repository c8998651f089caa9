"""Shared by the benchmarks that play against a real server (api, ws, load).

A fresh PostgreSQL database, migrated in a subprocess; server processes (daphne,
or gunicorn with threaded workers for HTTP as in production) on free ports of
127.0.0.1 with production settings (DEBUG=False, rate limits raised out
of the way, Redis for the cache and the channel layer when it answers); the
browser-like registration of a player; CPU time of a process from /proc.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

REPO_ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "bench-password-Quokka-42"
#: Rate limits of own servers: far above anything a benchmark sends.
HIGH_RATE = "1000000/min"


RATE_HELP = (
    "offer this many moves/s in all, spread evenly over the clients, each move sent on a "
    "fixed schedule (latency counts from its scheduled time); default 0: every client "
    "sends its next move as soon as the answer is in (closed loop)"
)


class Pace:
    """A fixed schedule of sends for one paced client (open loop).

    With closed-loop clients (the default) the answer time is tied to the
    throughput: N clients that never pause wait N / throughput each on average,
    so at 20 clients a p50 of 10 ms needs about 2,000 moves/s whatever the
    server does. A paced client sends at fixed times instead, as players who
    think between moves do; its latency is counted from the scheduled time, so
    a server that falls behind shows its queue in the figures.
    """

    def __init__(self, rate: float, phase: float = 0.0) -> None:
        self.interval = 1.0 / rate
        self.next = time.perf_counter() + phase * self.interval

    def due(self) -> float:
        """Seconds until the next send (0 when it is due); the caller sleeps that long."""
        return max(self.next - time.perf_counter(), 0.0)

    def take(self) -> float:
        """The scheduled time of this send; the schedule moves on by one interval."""
        scheduled, self.next = self.next, self.next + self.interval
        return scheduled

    def resume(self) -> None:
        """After other work (a game start): missed sends are dropped, not owed."""
        self.next = max(self.next, time.perf_counter())

    def wait(self) -> float:
        """Sleep until the next send is due (threads); its scheduled time."""
        time.sleep(self.due())
        return self.take()


def pacing(rate: float) -> str:
    """How the clients send, for the report."""
    return f"paced: {rate:g} moves/s offered in all" if rate else "closed loop (no pauses)"


def choose(legal: list[str], rng: random.Random) -> str:
    """A random legal move; a move to a foundation when there is one (games then end)."""
    home = [m for m in legal if m.endswith("-f") or m.endswith("-a")]
    return rng.choice(home or legal)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A redis-server of one's own on 127.0.0.1 and a free port, to inject faults into.

    ``kill`` is SIGKILL, ``pause``/``resume`` SIGSTOP/SIGCONT, ``start`` again a
    restart with an empty data set (no persistence), as Redis comes back after a crash.
    The shared Redis of the machine is never touched.
    """

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        import redis

        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
            + ["--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        for _ in range(100):
            try:
                client.ping()
                return
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.resume()
            self.kill()


def redis_answers(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port or 6379), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def pg_admin(pg_url: str, sql: str) -> None:
    """Run one statement on the server's ``postgres`` database (``pg_url`` has no name)."""
    import psycopg

    with psycopg.connect(f"{pg_url}/postgres", autocommit=True) as conn:
        conn.execute(sql)


def cpu_times(pid: int | None) -> tuple[float, float] | None:
    """User and system CPU time of a local process so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError, TypeError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def tree_cpu(pid: int) -> float | None:
    """CPU seconds so far of a local process and all its descendants (gunicorn's workers,
    solver worker processes); None if it is gone. Children that ended are counted when
    they were waited for (the ``cutime`` fields)."""
    stats: dict[int, tuple[int, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        own = sum(int(f) for f in fields[11:15]) / tick  # utime stime cutime cstime
        stats[int(stat.parent.name)] = (int(fields[1]), own)
    if pid not in stats:
        return None
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += stats[current][1]
        todo.extend(child for child, (parent, _) in stats.items() if parent == current)
    return total


def _cpu_by_command(commands: tuple[str, ...]) -> dict[str, float]:
    """CPU seconds so far of every process whose command name is one of ``commands``."""
    tick = os.sysconf("SC_CLK_TCK")
    found = dict.fromkeys(commands, 0.0)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended meanwhile
            continue
        name = text[text.find("(") + 1 : text.rfind(")")]
        if name in found:
            fields = text.rsplit(")", 1)[1].split()
            found[name] += (int(fields[11]) + int(fields[12])) / tick
    return found


class CpuAccount:
    """Where the CPU of a run went: the servers, PostgreSQL, Redis and this client.

    Read from /proc (Linux) at the start and the end of the run: CPU time, not
    wall-clock time, so other programs on the machine inflate it much less than
    the latencies. Their sum per move bounds what this machine can serve with
    every core busy (``cores / sum``), whatever the server's code does next.
    """

    COMMANDS = {"postgres": "postgres", "redis-server": "redis"}

    def __init__(self, server_pids: list[int]) -> None:
        self.server_pids = server_pids
        self.before = self._now()

    def _now(self) -> dict[str, float]:
        servers = [tree_cpu(pid) for pid in self.server_pids]
        parts = {"server": sum(t for t in servers if t is not None)}
        by_command = _cpu_by_command(tuple(self.COMMANDS))
        parts.update({self.COMMANDS[c]: v for c, v in by_command.items()})
        parts["client"] = sum(os.times()[:2])  # this process, all its threads
        return parts

    def spent(self) -> dict[str, float]:
        """CPU seconds of each part since the account was opened."""
        now = self._now()
        return {k: now[k] - self.before[k] for k in now if self.server_pids or k != "server"}


def cpu_lines(spent: dict[str, float], moves: int) -> list[str]:
    """The report's lines on the CPU per move and the machine's ceiling it implies."""
    if not moves:
        return []
    per = {k: 1000 * v / moves for k, v in spent.items()}
    total = sum(per.values())
    parts = ", ".join(f"{k} {v:.2f}" for k, v in per.items())
    cores = os.cpu_count() or 1
    ceiling = 1000 * cores / total if total else float("inf")
    return [
        f"  CPU/move   {parts} = {total:.2f} ms (game starts included)",
        f"  ceiling    {cores} cores / {total:.2f} ms = {ceiling:.0f} moves/s with every core "
        f"busy on this work alone",
    ]


def server_env(
    *,
    database_url: str,
    redis_url: str | None,
    settings: str = "patience_site.settings",
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """Environment of own server processes: production settings, rate limits out of the way
    (``extra`` overrides any of it)."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings,
        "DATABASE_URL": database_url,
        "DEBUG": "False",
        "SECRET_KEY": "bench-" + uuid.uuid4().hex,
        "DAILY_SECRET": "bench-" + uuid.uuid4().hex,
        "SECURE_SSL_REDIRECT": "False",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "THROTTLE_RATE_USER": HIGH_RATE,
        "THROTTLE_RATE_IP": HIGH_RATE,
        "THROTTLE_RATE_AUTH": HIGH_RATE,
        "LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    return {**env, **(extra or {})}


def migrate(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
    )


def deal_dailies(env: dict[str, str]) -> float:
    """Deal today's and tomorrow's dailies as the compose ``migrate`` job does (requests
    never deal them); the seconds it took."""
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", "create_dailies", "--days", "2"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - began


def _serve(
    cmd: list[str], env: dict[str, str], log: Any, port: int
) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    return server, f"http://127.0.0.1:{port}"


def start_daphne(
    env: dict[str, str], log: Any, port: int | None = None
) -> tuple[subprocess.Popen, str]:
    """One daphne process on 127.0.0.1 (a free port unless given); returns it and its URL."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    return _serve([*cmd, "patience_site.asgi:application"], env, log, port)


def start_gunicorn(
    env: dict[str, str], log: Any, port: int | None = None, threads: int = 8
) -> tuple[subprocess.Popen, str]:
    """One gunicorn worker with ``threads`` threads (gthread) running Django's WSGI handler,
    as the production ``http`` service runs them; returns the master and its URL."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}"]
    cmd += ["--worker-class", "gthread", "--workers", "1", "--threads", str(threads)]
    return _serve([*cmd, "patience_site.wsgi:application"], env, log, port)


SERVERS = {"daphne": start_daphne, "gunicorn": start_gunicorn}


def wait_until_up(server: subprocess.Popen, base: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.returncode}")
        try:
            if requests.get(f"{base}/api/v1/health/", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the server did not answer within {timeout:g} s")


def stop(servers: list[subprocess.Popen]) -> None:
    for server in servers:
        server.terminate()
    for server in servers:
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextmanager
def own_servers(
    *,
    db_prefix: str,
    pg_url: str,
    redis_url: str | None,
    count: int = 1,
    settings: str = "patience_site.settings",
    server_log: str | None = None,
    keep_db: bool = False,
    start_timeout: float = 60.0,
    extra_env: dict[str, str] | None = None,
    server: str = "daphne",
    dailies: bool = False,
) -> Iterator[tuple[list[str], dict[str, Any]]]:
    """A fresh database ``<db_prefix>_<pid>`` and ``count`` server processes (``server``:
    daphne, or gunicorn for HTTP only); all removed after. ``dailies``: deal today's and
    tomorrow's dailies first (``info["dailies_s"]``), as the production job does.

    Yields the servers' base URLs and ``{"database", "redis", "pids"}``. Redis is
    used when ``redis_url`` answers; several servers need it (shared channel layer).
    """
    db = f"{db_prefix}_{os.getpid()}"
    use_redis = redis_url if redis_url and redis_answers(redis_url) else None
    if count > 1 and not use_redis:
        raise SystemExit("several servers need Redis (--redis-url) to share the channel layer")
    pg_admin(pg_url, f'CREATE DATABASE "{db}"')
    env = server_env(
        database_url=f"{pg_url}/{db}", redis_url=use_redis, settings=settings, extra=extra_env
    )
    servers: list[subprocess.Popen] = []
    log = open(server_log, "wb") if server_log else subprocess.DEVNULL  # noqa: SIM115
    dealt: dict[str, float] = {}
    try:
        migrate(env)
        if dailies:
            dealt["dailies_s"] = deal_dailies(env)
        bases = []
        for _ in range(count):
            process, base = SERVERS[server](env, log)
            servers.append(process)
            bases.append(base)
        for process, base in zip(servers, bases, strict=True):
            wait_until_up(process, base, start_timeout)
        yield (
            bases,
            {
                "database": db,
                "redis": use_redis or "(none: in-memory layer)",
                "pids": [s.pid for s in servers],
                **dealt,
            },
        )
    finally:
        stop(servers)
        if not isinstance(log, int):  # a file, not subprocess.DEVNULL
            log.close()
        if not keep_db:
            pg_admin(pg_url, f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


def database_arguments(parser: argparse.ArgumentParser) -> None:
    """The settings module and PostgreSQL server of own servers (every benchmark that
    starts its own)."""
    parser.add_argument(
        "--settings",
        default="patience_site.settings",
        help="settings module of own servers, to try a change (importable from the repo root)",
    )
    parser.add_argument(
        "--pg-url",
        default=os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432"),
        help="PostgreSQL server for the database of own servers (no database name)",
    )


def server_arguments(parser: argparse.ArgumentParser, *, redis_db: int) -> None:
    """The options of the benchmarks that start their own servers (and write JSON)."""
    database_arguments(parser)
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL", f"redis://127.0.0.1:6379/{redis_db}"),
        help="Redis of own servers (cache, channel layer, boards), if it answers ('' for none)",
    )
    parser.add_argument("--keep-db", action="store_true", help="do not drop the database")
    parser.add_argument("--server-log", help="write the servers' output to this file")
    parser.add_argument("--json", help="also write the figures to this JSON file")


@contextmanager
def servers_for(
    args: argparse.Namespace,
    *,
    db_prefix: str,
    count: int = 1,
    server: str = "daphne",
    dailies: bool = False,
    extra_env: dict[str, str] | None = None,
) -> Iterator[tuple[list[str], dict[str, Any]]]:
    """``own_servers`` as the options of ``server_arguments`` ask; ``info["server"]`` says
    what runs where."""
    with own_servers(
        db_prefix=db_prefix,
        pg_url=args.pg_url,
        redis_url=args.redis_url,
        count=count,
        settings=args.settings,
        server_log=args.server_log,
        keep_db=args.keep_db,
        server=server,
        dailies=dailies,
        extra_env=extra_env,
    ) as (bases, info):
        n = len(bases)
        kind = f"{server} (1 gthread worker, 8 threads)" if server == "gunicorn" else server
        info["server"] = f"{n} {kind} process{'es' if n > 1 else ''} at {', '.join(bases)}"
        yield bases, info


def register(
    base: str, name: str, *, session: requests.Session | None = None, timeout: float = 60
) -> str:
    """Register like a browser (CSRF token, session), then create a personal token; its key."""
    s = session or requests.Session()
    s.trust_env = False
    r = s.get(f"{base}/api/v1/auth/csrf/", timeout=timeout)
    r.raise_for_status()
    jar = dict(r.cookies)
    # Production cookies are Secure and would not be sent back over plain HTTP: send them.
    headers = {
        "X-CSRFToken": r.json()["csrf_token"],
        "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items()),
    }
    r = s.post(
        f"{base}/api/v1/auth/register/",
        json={"username": name, "password": PASSWORD},
        headers=headers,
        timeout=timeout,  # password hashing is slow on purpose
    )
    if r.status_code != 201:
        raise RuntimeError(f"register: HTTP {r.status_code} {r.text[:300]}")
    jar.update(dict(r.cookies))  # the session, and the CSRF token rotated by the login
    headers = {
        "X-CSRFToken": jar["csrftoken"],
        "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items()),
    }
    r = s.post(
        f"{base}/api/v1/auth/tokens/", json={"name": "bench"}, headers=headers, timeout=timeout
    )
    if r.status_code != 201:
        raise RuntimeError(f"token: HTTP {r.status_code} {r.text[:300]}")
    s.cookies.clear()
    return r.json()["token"]


def percentile(sorted_values: list[float], q: float) -> float:
    """The value at quantile ``q`` of already sorted values (nearest rank; NaN if none)."""
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]
