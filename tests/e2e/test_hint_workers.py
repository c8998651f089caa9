"""Under a real server, a solver worker killed with SIGKILL breaks no later hint, and
killing the server leaves no solver worker running (issue 30).

Before, every hint after the kill answered 500 (``BrokenProcessPool``) on that
server process for good, and a killed daphne's worker ran on with no parent.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from devtools.servers import SERVERS, server_env, stop, wait_until_up

pytestmark = pytest.mark.e2e


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children of all its threads, recursively)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except FileNotFoundError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    todo.append(child)
    return found


def solvers(server: int) -> set[int]:
    """The solver workers below a server process (not multiprocessing's resource tracker,
    nor gunicorn's own workers)."""
    found = set()
    for pid in descendants(server):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            continue
        if b"spawn_main" in command:
            found.add(pid)
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


@pytest.mark.parametrize("kind", ["daphne", "gunicorn"])
def test_hints_heal_after_a_worker_is_killed_and_die_with_the_server(
    kind: str,
    e2e_urls: tuple[str, str],
    fresh_database: Callable[[str], str],
    e2e_player: Callable[[], tuple[str, str]],
    pinned_clock: dict[str, str],
    tmp_path: Path,
) -> None:
    _, redis_url = e2e_urls
    env = server_env(
        database_url=fresh_database(f"hints_{kind}"),
        redis_url=redis_url,
        extra={
            "HINT_SOLVER_NODES": "20000",
            "HINT_PLAYER_INTERVAL_SECONDS": "0",
            # A new pool spawns its worker (a fresh interpreter) first: on a loaded
            # machine that outlasted the default 5 s deadline (503 hint_timeout).
            "HINT_DEADLINE_SECONDS": "60",
        },
    )
    env |= pinned_clock
    with open(tmp_path / f"{kind}.log", "ab") as log:
        server, base = SERVERS[kind](env, log)
        try:
            wait_until_up(server, base)
            session = requests.Session()
            session.headers["Authorization"] = f"Token {e2e_player()[1]}"

            def hint(seed: int) -> requests.Response:
                game = session.post(
                    f"{base}/api/v1/games/", json={"variant": "bristol", "seed": seed}
                )
                assert game.status_code == 201, game.text
                answer = session.post(f"{base}/api/v1/games/{game.json()['id']}/hint/", timeout=60)
                for _ in range(1200):  # solved in the background: polled where 202 says
                    if answer.status_code != 202:
                        break
                    time.sleep(0.05)
                    answer = session.get(answer.headers["Location"], timeout=60)
                return answer

            assert hint(1).status_code == 200
            workers = solvers(server.pid)
            assert len(workers) == 1, workers
            (worker,) = workers
            os.kill(worker, signal.SIGKILL)
            assert wait_for(lambda: not alive(worker), 10)
            time.sleep(0.5)
            answers = [hint(seed) for seed in (2, 3, 4)]
            assert [a.status_code for a in answers] == [200, 200, 200], [a.text for a in answers]
            assert all(a.json()["verdict"] for a in answers)

            workers = solvers(server.pid)
            assert len(workers) == 1 and worker not in workers
            server.send_signal(signal.SIGKILL)
            server.wait(10)
            # gunicorn's own worker notices its master is gone, then the solver its parent.
            assert wait_for(lambda: not any(alive(pid) for pid in workers), 15), workers
        finally:
            stop([server])
