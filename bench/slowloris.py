"""Slow clients against gunicorn, straight and through the compose stack's nginx (issue 30).

    python bench/slowloris.py                  # 16 slow connections, 30 s, both ways
    python bench/slowloris.py --slow 8 --seconds 20

One gunicorn worker with 8 threads (gthread, as the compose ``http`` service
runs it) on a fresh PostgreSQL database. ``--slow`` connections each send a
request line and then one header byte every ``--drip`` seconds, never finishing
their headers (slowloris); meanwhile a health check asks ``/api/v1/health/``
once a second with a 10 s timeout. The run is made twice: straight to gunicorn,
then through nginx with ``deploy/nginx.conf`` (its upstreams pointed at the
local gunicorn, Docker's resolver left out). Printed for each: health checks
answered and timed out, their p50 and max, and how many slow connections the
front end had cut off by the end. Needs ``nginx`` on the PATH (Debian's
``nginx-light``); without it only the straight run is made.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._server import database_arguments, percentile  # noqa: E402
from devtools.servers import free_port, nginx_conf, own_servers, start_nginx, stop  # noqa: E402


def slow_client(host: str, port: int, drip: float, stop: threading.Event, cut: list[int]) -> None:
    """Open a request and never finish its headers: a byte every ``drip`` seconds."""
    try:
        conn = socket.create_connection((host, port), timeout=5)
        conn.sendall(b"GET /api/v1/health/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        while not stop.wait(drip):
            conn.sendall(b"X")
    except OSError:
        cut.append(1)  # the front end hung up on it
        return
    conn.close()


def health_checks(base: str, seconds: float) -> tuple[list[float], int]:
    """One health check a second for ``seconds``: latencies (ms) of the answered, timeouts."""
    answered, timeouts = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            if requests.get(f"{base}/api/v1/health/", timeout=10).status_code == 200:
                answered.append((time.monotonic() - t0) * 1000)
        except requests.RequestException:
            timeouts += 1
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))
    return sorted(answered), timeouts


def attack(label: str, base: str, args: argparse.Namespace) -> None:
    host, port = base.removeprefix("http://").split(":")
    stop, cut = threading.Event(), list[int]()
    threads = [
        threading.Thread(target=slow_client, args=(host, int(port), args.drip, stop, cut))
        for _ in range(args.slow)
    ]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    answered, timeouts = health_checks(base, args.seconds)
    stop.set()
    for thread in threads:
        thread.join(args.drip + 10)
    p50 = f"{percentile(answered, 0.5):7.1f}" if answered else "      -"
    top = f"{answered[-1]:7.1f}" if answered else "      -"
    print(
        f"  {label:22} health answered {len(answered):3}, timed out {timeouts:3}  "
        f"p50 {p50} ms  max {top} ms  slow connections cut off: {len(cut)} of {args.slow}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    database_arguments(parser)
    parser.add_argument("--slow", type=int, default=16, help="slow connections")
    parser.add_argument("--drip", type=float, default=2.0, help="seconds between their bytes")
    parser.add_argument("--seconds", type=float, default=30.0, help="health checks for this long")
    args = parser.parse_args(argv)
    with own_servers(
        db_prefix="patience_slowloris",
        pg_url=args.pg_url,
        redis_url=None,
        settings=args.settings,
        server="gunicorn",
    ) as (bases, _):
        print(f"{args.slow} slow clients (a header byte every {args.drip:g} s), health 1/s")
        attack("straight to gunicorn", bases[0], args)
        time.sleep(args.drip + 5)  # gunicorn frees its threads
        if shutil.which("nginx") is None:
            print("  (no nginx on the PATH: the run through it is left out)")
            return 0
        with tempfile.TemporaryDirectory() as tmp:
            port, upstream = free_port(), bases[0].removeprefix("http://")
            proxy = start_nginx(nginx_conf(upstream, upstream, port, Path(tmp)), port)
            try:
                attack("through nginx", f"http://127.0.0.1:{port}", args)
            finally:
                stop([proxy])
    return 0


if __name__ == "__main__":
    sys.exit(main())
