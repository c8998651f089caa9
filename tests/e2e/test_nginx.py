"""deploy/nginx.conf in front of gunicorn and daphne, as the compose proxy runs it: Debian's
nginx (.ci/run installs it) with the file's server block, its upstreams and port rewritten
to this test's processes (``devtools.servers.nginx_conf``), in the foreground as a child
of the test.

Through it: the readiness probe, REST and a game socket answer; and slow clients
(``bench/slowloris.py``'s, more than gunicorn has threads) never reach gunicorn, so the
health checks meanwhile are all answered and nginx cuts the slow clients off.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from websockets.sync.client import connect

from bench.slowloris import health_checks, slow_client
from devtools.servers import (
    REPO_ROOT,
    Daphne,
    free_port,
    nginx_conf,
    start_gunicorn,
    start_nginx,
    stop,
    wait_until_up,
)
from tests.e2e.helpers import production_env

THREADS = 4
SLOW = 2 * THREADS


@pytest.fixture
def proxied(
    fresh_database: Callable[[str], str],
    e2e_env: dict[str, str],
    daphne: Callable[..., Daphne],
    tmp_path: Path,
) -> Iterator[tuple[str, dict]]:
    """The base URL of nginx in front of one gunicorn worker (``THREADS`` threads) and one
    daphne process on a fresh database; and their environment."""
    if shutil.which("nginx") is None:
        pytest.skip("nginx is not installed (.ci/run installs Debian's nginx-light)")
    database_url = fresh_database(f"nginx_{uuid.uuid4().hex[:6]}")
    env = production_env(e2e_env, database_url, NUM_PROXIES="1")  # one proxy, as compose
    ws = daphne(env).start()
    with open(tmp_path / "gunicorn.log", "ab") as log:
        http, http_base = start_gunicorn(env, log, threads=THREADS)
        proxy = None
        try:
            wait_until_up(http, http_base)
            port = free_port()
            conf = nginx_conf(
                http_base.removeprefix("http://"), f"127.0.0.1:{ws.port}", port, tmp_path
            )
            checked = subprocess.run(
                ["nginx", "-t", "-c", str(conf)], capture_output=True, text=True
            )
            assert checked.returncode == 0, checked.stderr
            proxy = start_nginx(conf, port)
            yield f"http://127.0.0.1:{port}", env
        finally:
            stop([p for p in (proxy, http) if p is not None])


def test_the_probe_rest_and_sockets_answer_through_nginx(
    proxied: tuple[str, dict], e2e_player: Callable[[], tuple[str, str]]
) -> None:
    base, env = proxied
    port = base.rsplit(":", 1)[1]
    probe = [sys.executable, "-m", "patience_site.probe", "ready", port]
    assert subprocess.run(probe, cwd=REPO_ROOT, env=env, timeout=30).returncode == 0
    token = e2e_player()[1]
    auth = {"Authorization": f"Token {token}"}
    game = requests.post(f"{base}/api/v1/games/", json={"variant": "bristol"}, headers=auth)
    assert game.status_code == 201, game.text
    url = f"ws://127.0.0.1:{port}/ws/v1/games/{game.json()['id']}/"
    with connect(url, additional_headers=auth) as socket:
        frame = json.loads(socket.recv(timeout=10))
    assert frame["type"] == "state" and frame["state"]["id"] == game.json()["id"]


def test_slow_clients_never_reach_gunicorn(proxied: tuple[str, dict]) -> None:
    base, _ = proxied
    port = int(base.rsplit(":", 1)[1])
    stop_drip, cut = threading.Event(), list[int]()
    slow = [
        threading.Thread(target=slow_client, args=("127.0.0.1", port, 1.0, stop_drip, cut))
        for _ in range(SLOW)
    ]
    for thread in slow:
        thread.start()
    try:
        # Longer than nginx's client_header_timeout (10 s): the slow clients are cut off.
        answered, timeouts = health_checks(base, 12.0)
    finally:
        stop_drip.set()
        for thread in slow:
            thread.join()
    print(f"health answered {len(answered)}, timed out {timeouts}; cut off {len(cut)} of {SLOW}")
    assert timeouts == 0 and len(answered) >= 10
    assert len(cut) == SLOW
