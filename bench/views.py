"""CPU per board view: the day's board over REST, as a player looks at it once a minute.

    python bench/views.py                     # own gunicorn, 8 clients, 15 s
    python bench/views.py --path /leaderboards/bristol/today/   # the web page instead

Starts one gunicorn (one gthread worker of 8 threads, as production) on a fresh
PostgreSQL database with today's dailies dealt, registers ``--clients`` players
and has each fetch ``--path`` (default: today's Bristol board, ``me`` line
included) as fast as it answers. Printed: views/s, p50/p99 and the CPU per view
by part (server, PostgreSQL backends of its database, Redis, client), read from
/proc as in ``bench/compare.py``.
The board holds the players' own finished dailies only (a few lines): the cost of
the request path, which the capacity model in docs/scaling.md scales.
"""

from __future__ import annotations

import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._server import (  # noqa: E402
    CpuAccount,
    cpu_lines,
    percentile,
    server_arguments,
    servers_for,
)
from bench.compare import pg_backends_cpu  # noqa: E402
from devtools.accounts import register  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients (8)")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of the run (15)")
    parser.add_argument("--path", default="/api/v1/daily/bristol/today/board/")
    server_arguments(parser, redis_db=11)
    args = parser.parse_args(argv)
    with servers_for(
        args,
        db_prefix="patience_views",
        start_timeout=600,  # a busy machine imports Django slowly
        server="gunicorn",
        dailies=True,
    ) as (bases, info):
        base = bases[0]
        sessions = []
        for _ in range(args.clients):
            s = requests.Session()
            s.trust_env = False
            token = register(base, f"views-{uuid.uuid4().hex[:12]}", timeout=600)
            s.headers["Authorization"] = f"Token {token}"
            sessions.append(s)
        deadline = time.perf_counter() + args.seconds

        def fetch(s: requests.Session) -> list[float]:
            times = []
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                r = s.get(base + args.path, timeout=30)
                r.raise_for_status()
                times.append((time.perf_counter() - t0) * 1000)
            return times

        account, pg = CpuAccount(info["pids"]), pg_backends_cpu(info["database"])
        began = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.clients) as pool:
            done = sorted(t for ts in pool.map(fetch, sessions) for t in ts)
        wall = time.perf_counter() - began
        spent = account.spent()
        spent["postgres"] = pg_backends_cpu(info["database"]) - pg  # own database's backends
    print(f"Board views (1 gunicorn worker, 8 threads): GET {args.path}")
    print(
        f"  views      {len(done)}, {len(done) / wall:.1f} views/s, p50 "
        f"{percentile(done, 0.5):.2f} ms, p99 {percentile(done, 0.99):.2f} ms"
    )
    for line in cpu_lines(spent, len(done)):
        print(line.replace("move", "view"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
