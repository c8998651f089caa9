"""Own server processes for the end-to-end and browser tests and the benchmarks.

A fresh PostgreSQL database, migrated in a subprocess; server processes (daphne,
or gunicorn with threaded workers for HTTP as in production) on free ports of
127.0.0.1 with production settings (DEBUG=False, rate limits raised out of the
way, Redis for the cache and the channel layer when it answers); a redis-server
of one's own to inject faults into; Python run in a subprocess on the repository
(another database, another clock) that answers with one JSON line.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Rate limits of own servers: far above anything a test or benchmark sends.
HIGH_RATE = "1000000/min"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def subprocess_json(*argv: str, env: Mapping[str, str], timeout: float = 120.0) -> Any:
    """Run ``python *argv`` at the repository's root with ``env``; the JSON of its last line.

    For code that must run in a process of its own (another database, a shifted
    clock): ``subprocess_json("manage.py", "shell", "-c", code, env=env)`` or
    ``subprocess_json("-c", code, *args, env=env)``; the code prints its answer last.
    """
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=REPO_ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"python {argv[0]} exited with {done.returncode}:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


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


def with_database(url: str, name: str) -> str:
    """``url`` (a PostgreSQL server, with or without a database) naming database ``name``."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def pg_admin(pg_url: str, sql: str) -> None:
    """Run one statement on the ``postgres`` database of the server ``pg_url`` names."""
    import psycopg

    with psycopg.connect(with_database(pg_url, "postgres"), autocommit=True) as conn:
        conn.execute(sql)


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


def migrate(env: dict[str, str], *, timeout: float | None = None) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        timeout=timeout,
    )


def deal_dailies(env: dict[str, str], *, timeout: float | None = None) -> float:
    """Deal today's and tomorrow's dailies as the compose ``migrate`` job does (requests
    never deal them); the seconds it took."""
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", "create_dailies", "--days", "2"],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        timeout=timeout,
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
    env: dict[str, str], log: Any, port: int | None = None, threads: int = 8, workers: int = 1
) -> tuple[subprocess.Popen, str]:
    """``workers`` gunicorn workers with ``threads`` threads (gthread) running Django's WSGI
    handler, as the production ``http`` service runs them; returns the master and its URL."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}"]
    cmd += ["--worker-class", "gthread", "--workers", str(workers), "--threads", str(threads)]
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


def nginx_conf(http: str, ws: str, port: int, workdir: Path) -> Path:
    """A whole nginx configuration in ``workdir`` around ``deploy/nginx.conf`` (the compose
    proxy's server block): its upstreams on ``http`` and ``ws`` (``host:port``) instead of
    Docker's service names, listening on 127.0.0.1:``port``, Docker's resolver left out,
    logs and temporary files in ``workdir``, in the foreground. Raises ``ValueError`` when
    ``deploy/nginx.conf`` no longer has a line this rewrites."""
    conf = (REPO_ROOT / "deploy" / "nginx.conf").read_text()
    rewrites = [
        (r"^resolver .*;$", ""),
        (r"server http:8000 resolve;", f"server {http};"),
        (r"server ws:8000 resolve;", f"server {ws};"),
        (r"listen 80;", f"listen 127.0.0.1:{port};"),
    ]
    for pattern, replacement in rewrites:
        conf, found = re.subn(pattern, replacement, conf, flags=re.M)
        if found != 1:
            raise ValueError(f"deploy/nginx.conf: {pattern!r} found {found} times, not once")
    temp = "\n".join(
        f"{kind}_temp_path {workdir}/{kind};" for kind in ("client_body", "proxy", "fastcgi")
    )
    # As root, nginx's workers run as root here too: the temporary files are in workdir.
    user = "user root;\n" if os.geteuid() == 0 else ""
    main = workdir / "nginx.conf"
    main.write_text(
        f"daemon off;\n{user}worker_processes 1;\npid {workdir}/nginx.pid;\n"
        f"error_log {workdir}/error.log;\nevents {{ worker_connections 1024; }}\n"
        f"http {{\naccess_log {workdir}/access.log;\n{temp}\n{conf}\n}}\n"
    )
    return main


def start_nginx(conf: Path, port: int, timeout: float = 10.0) -> subprocess.Popen:
    """nginx in the foreground with ``conf`` (``nginx_conf``), once it listens on ``port``;
    the caller stops it (``stop``)."""
    proc = subprocess.Popen(["nginx", "-c", str(conf)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"nginx exited with status {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.05)
    stop([proc])
    raise RuntimeError(f"nginx did not listen on {port} within {timeout:g} s")


class Daphne:
    """One daphne process on a port of its own: started, killed (SIGKILL) and restarted there."""

    def __init__(self, env: dict[str, str], log_path: Path, port: int | None = None) -> None:
        self.env = env
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self._log: Any = None

    def start(self, *, wait: bool = True) -> Daphne:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed in stop/kill)
        self.proc, _ = start_daphne(self.env, self._log, self.port)
        if wait:
            self.wait()
        return self

    def wait(self) -> None:
        assert self.proc is not None
        wait_until_up(self.proc, self.url, timeout=60)

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs; open transactions die with their connections."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._close_log()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            stop([self.proc])
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


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
