"""CPU per authenticated REST request: the token read from Redis, or this process's cache.

    python bench/token_lookup.py                   # 20 rounds of 1,000 requests each way
    python bench/token_lookup.py --rounds 10 --requests 5000

Sets up Django in this process on a SQLite file of its own and a redis-server of its
own (the shared Redis is never touched), makes one account and personal token, and
sends ``GET /api/v1/auth/me/`` with the token through Django's test client: the
whole request path (middleware, DRF, the rate limit in Redis), no network server.
The two ways alternate in blocks of ``--requests`` in one run, the same warm process:

* **redis read**: ``TOKEN_PROCESS_CACHE = False``, each request reads the token's
  entry from Redis (the shared cache alone);
* **process cache**: the entry is answered from the process cache, after checking
  its subscription for unread revocations (``accounts.token_cache``).

Printed per request, in CPU microseconds: this process (all its threads, the
cache's listener included, from ``time.process_time``), the redis-server (from
/proc) and their sum, as medians over the rounds; the same for the token look-up
alone (``token_authenticate``), and how many Redis commands each way sends per
request (``INFO commandstats``).

Then the same request over HTTP to two gunicorn servers (one gthread worker each, on
the same database and Redis; ``bench/token_lookup_settings.py``), one with the process
cache and one without, one client sending to each in turn: CPU per request of the
server (master and worker, from /proc) and of the redis-server. ``--no-servers``
skips this part.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._server import cpu_times, tree_cpu  # noqa: E402
from devtools.servers import RedisServer, start_gunicorn, stop, wait_until_up  # noqa: E402

WAYS = ("redis read", "process cache")


def redis_cpu(server: RedisServer) -> float:
    assert server.proc is not None
    times = cpu_times(server.proc.pid)
    assert times is not None
    return sum(times)


def saved_line(pairs: list[tuple[float, float]]) -> str:
    """The median and quartiles of the rounds' savings, ``(redis read, process cache)``."""
    saved = [read - kept for read, kept in pairs]
    low, middle, high = statistics.quantiles(saved, n=4) if len(saved) > 1 else saved * 3
    return f"{middle:10.1f}   (quartiles of the rounds {low:.1f} .. {high:.1f})"


def redis_commands(url: str) -> int:
    import redis

    stats = redis.Redis.from_url(url).info("commandstats")
    return sum(int(v["calls"]) for v in stats.values())


def measure(server: RedisServer, run: Callable[[], None], n: int) -> tuple[float, float, float]:
    """CPU µs per call of this process and of the redis-server, and Redis commands per call."""
    commands = redis_commands(server.url)
    own, theirs = time.process_time(), redis_cpu(server)
    for _ in range(n):
        run()
    own, theirs = time.process_time() - own, redis_cpu(server) - theirs
    commands = redis_commands(server.url) - commands - 1  # the INFO of the first count
    return own / n * 1e6, theirs / n * 1e6, commands / n


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--rounds", type=int, default=20, help="blocks of each way (20)")
    parser.add_argument("--requests", type=int, default=1000, help="calls per block (1000)")
    parser.add_argument(
        "--no-servers", dest="servers", action="store_false", help="skip the gunicorn part"
    )
    args = parser.parse_args(argv)

    server = RedisServer()
    server.start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-token-") as folder:
            return run(args, server, Path(folder))
    finally:
        server.stop()


def environment(server: RedisServer, folder: Path) -> dict[str, str]:
    """The settings' environment of this process and of the servers."""
    return {
        "DATABASE_URL": f"sqlite:///{folder / 'bench.sqlite3'}",
        "REDIS_URL": server.url,
        "DEBUG": "False",  # as production: no query log
        "SECRET_KEY": secrets.token_urlsafe(40),
        "DAILY_SECRET": secrets.token_urlsafe(40),
        "ALLOWED_HOSTS": "testserver,127.0.0.1",
        "SECURE_SSL_REDIRECT": "False",
        "THROTTLE_RATE_USER": "100000000/min",
        "THROTTLE_RATE_IP": "100000000/min",
        "LOG_LEVEL": "WARNING",
    }


def in_process(
    figures: dict[tuple[str, str], list[tuple[float, float, float]]], rounds: int, requests: int
) -> None:
    """Print the in-process figures: ``(process µs, redis µs, commands)`` per call."""
    print(
        f"{rounds} rounds of {requests} calls each way, alternating; CPU µs per call, "
        "medians of the rounds"
    )
    print(f"{'':36}{'process':>10}{'redis':>10}{'sum':>10}{'Redis cmds':>12}")
    for what in ("request", "look-up"):
        for name in WAYS:
            rows = figures[(what, name)]
            own = statistics.median(r[0] for r in rows)
            theirs = statistics.median(r[1] for r in rows)
            total = statistics.median(r[0] + r[1] for r in rows)
            cmds = statistics.median(r[2] for r in rows)
            label = f"{'GET /auth/me/' if what == 'request' else 'token_authenticate'}, {name}"
            print(f"{label:36}{own:10.1f}{theirs:10.1f}{total:10.1f}{cmds:12.2f}")
        pairs = zip(figures[(what, "redis read")], figures[(what, "process cache")], strict=True)
        line = saved_line([(r[0] + r[1], c[0] + c[1]) for r, c in pairs])
        print(f"{'  saved by the process cache':36}{'':20}{line}")


def run(args: argparse.Namespace, server: RedisServer, folder: Path) -> int:
    rounds, requests = args.rounds, args.requests
    _cli.django_setup(environment(server, folder))
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client, override_settings

    from accounts import services, token_cache

    call_command("migrate", interactive=False, verbosity=0)
    user = get_user_model().objects.create_user(username="bench-token")
    _, key = services.token_create(user=user, name="bench")
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")

    def request() -> None:
        answer = client.get("/api/v1/auth/me/", secure=True)  # as behind the proxy
        assert answer.status_code == 200, answer.content

    def look_up() -> None:
        assert services.token_authenticate(key) is not None

    def way(name: str) -> override_settings:
        """The setting each way (both ways under one override, equally dear to read)."""
        return override_settings(TOKEN_PROCESS_CACHE=name == "process cache")

    local = token_cache.process_cache()
    assert local is not None
    deadline = time.monotonic() + 10
    while not local.trusted():
        assert time.monotonic() < deadline, "the token cache did not subscribe"
        time.sleep(0.01)
    for name in WAYS:  # warm both ways: imports, the entries in Redis and here
        with way(name):
            for _ in range(200):
                request()

    figures: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for i in range(rounds):
        order = WAYS if i % 2 == 0 else WAYS[::-1]  # either way first as often: no drift
        for what, call in (("request", request), ("look-up", look_up)):
            for name in order:
                with way(name):
                    figures.setdefault((what, name), []).append(measure(server, call, requests))
    token_cache._forget_process_cache()  # its listener stops before the redis-server does

    in_process(figures, rounds, requests)
    if args.servers:
        servers(args, server, folder, key)
    return 0


def servers(args: argparse.Namespace, server: RedisServer, folder: Path, key: str) -> None:
    """CPU per request over HTTP: a gunicorn server each way, one client, in turn."""
    import requests as http

    env = {
        **os.environ,
        **environment(server, folder),
        "DJANGO_SETTINGS_MODULE": "bench.token_lookup_settings",
    }
    started: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        for name in WAYS:
            log = (folder / f"gunicorn-{name.replace(' ', '-')}.log").open("w")
            way_env = {**env, "TOKEN_PROCESS_CACHE": "1" if name == "process cache" else "0"}
            started[name] = start_gunicorn(way_env, log, threads=2)
        for proc, base in started.values():
            wait_until_up(proc, base, timeout=300)
        session = http.Session()
        session.trust_env = False
        session.headers["Authorization"] = f"Token {key}"

        def block(base: str, n: int) -> None:
            for _ in range(n):
                answer = session.get(f"{base}/api/v1/auth/me/", timeout=30)
                assert answer.status_code == 200, answer.text

        for _, base in started.values():  # warm: imports, the entries in Redis and there
            block(base, 200)
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in WAYS}
        for i in range(args.rounds):
            for name in WAYS if i % 2 == 0 else WAYS[::-1]:
                proc, base = started[name]
                own, theirs = tree_cpu(proc.pid), redis_cpu(server)
                assert own is not None
                block(base, args.requests)
                own_after = tree_cpu(proc.pid)
                assert own_after is not None
                per = 1e6 / args.requests
                figures[name].append(((own_after - own) * per, (redis_cpu(server) - theirs) * per))
    finally:
        stop([proc for proc, _ in started.values()])

    print()
    print(f"over HTTP, gunicorn (1 gthread worker each), {args.rounds} rounds of {args.requests}")
    print(f"{'':36}{'gunicorn':>10}{'redis':>10}{'sum':>10}")
    for name in WAYS:
        rows = figures[name]
        own = statistics.median(r[0] for r in rows)
        theirs = statistics.median(r[1] for r in rows)
        total = statistics.median(r[0] + r[1] for r in rows)
        print(f"{'GET /auth/me/, ' + name:36}{own:10.1f}{theirs:10.1f}{total:10.1f}")
    pairs = zip(figures["redis read"], figures["process cache"], strict=True)
    line = saved_line([(sum(r), sum(c)) for r, c in pairs])
    print(f"{'  saved by the process cache':36}{'':20}{line}")


if __name__ == "__main__":
    raise SystemExit(main())
