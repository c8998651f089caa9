"""Helpers of the end-to-end tests."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import psycopg
import requests

from devtools.servers import subprocess_json, with_database

_VERIFY = """
import json
from games.models import Game
from games.selectors.games import game_verify
games = Game.objects.select_related("deal")
if {pks!r}:
    games = games.filter(pk__in={pks!r})
print(json.dumps({{g.pk: game_verify(g) for g in games}}))
"""


def games_verified(env: dict[str, str], *games: int) -> dict[int, str | None]:
    """``games.selectors.games.game_verify`` of these games (of every game when none is
    named), run in a subprocess against the servers' database."""
    code = _VERIFY.format(pks=list(games))
    verdicts = subprocess_json("manage.py", "shell", "-c", code, env=env)
    return {int(k): v for k, v in verdicts.items()}


def child_pids(parent: int) -> list[int]:
    """The processes whose parent is ``parent`` (gunicorn's workers), from ``/proc``."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[1]) == parent:
            children.append(int(stat.parent.name))
    return children


def _tcp_ports(pid: int) -> set[int]:
    """Local TCP ports of the sockets process ``pid`` holds open (Linux ``/proc``)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").glob("*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def backend_ports(pg: psycopg.Connection, database: str, pids: list[int]) -> dict[int, set[int]]:
    """The client ports of the PostgreSQL backends of ``database`` that each of ``pids``
    holds: ``pg_stat_activity`` matched with the processes' sockets."""
    rows = pg.execute(
        "SELECT client_port FROM pg_stat_activity WHERE datname = %s AND client_port > 0",
        [database],
    ).fetchall()
    owner = {port: pid for pid in pids for port in _tcp_ports(pid)}
    held: dict[int, set[int]] = {}
    for (port,) in rows:
        if port in owner:
            held.setdefault(owner[port], set()).add(port)
    return held


def backends_by_process(pg: psycopg.Connection, database: str, pids: list[int]) -> Counter[int]:
    """How many PostgreSQL backends of ``database`` each of ``pids`` holds."""
    return Counter({pid: len(ports) for pid, ports in backend_ports(pg, database, pids).items()})


def kill_backends(
    pg: psycopg.Connection, database: str, stop: threading.Event, kills: list[int], every: float
) -> None:
    """End every backend of ``database`` (only that database's) each ``every`` seconds until
    ``stop``; ``kills`` gets how many each round ended."""
    while not stop.wait(every):
        row = pg.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s",
            [database],
        ).fetchone()
        kills.append(row[0] if row else 0)


def production_env(env: dict[str, str], database_url: str, **extra: str) -> dict[str, str]:
    """``env`` (``e2e_env``) as production runs: DEBUG off, on ``database_url``; ``extra``
    settings on top."""
    production = {"DEBUG": "False", "SECRET_KEY": "x" * 50, "DAILY_SECRET": "e2e-secret"}
    return (
        {**env, "DATABASE_URL": database_url, "SECURE_SSL_REDIRECT": "False"} | production | extra
    )


def new_games(
    base: str, player: Callable[[], tuple[str, str]], count: int
) -> list[tuple[str, int]]:
    """``count`` practice games started over REST at ``base``, each by a pre-made player of
    its own (``e2e_player``): ``(token, game id)``."""
    games = []
    for seed in range(1, count + 1):
        token = player()[1]
        game = requests.post(
            f"{base}/api/v1/games/",
            json={"variant": "bristol", "seed": seed},
            headers={"Authorization": f"Token {token}"},
            timeout=30,
        )
        assert game.status_code == 201, game.text
        games.append((token, game.json()["id"]))
    return games


def under_kills(
    pg_url: str,
    database: str,
    pids: list[int],
    clients: Sequence[Callable[[threading.Event], None]],
    *,
    every: float,
    seconds: float,
) -> tuple[Counter[int], list[int]]:
    """Run ``clients`` (each in a thread, until the event it gets is set) for ``seconds``
    while every backend of ``database`` is ended each ``every`` seconds; the most backends
    each of ``pids`` held at once meanwhile, and how many each round of kills ended."""
    most: Counter[int] = Counter()
    kills: list[int] = []
    stop_clients, stop_kills = threading.Event(), threading.Event()
    admin = with_database(pg_url, "postgres")
    with (
        psycopg.connect(admin, autocommit=True) as killer,
        psycopg.connect(admin, autocommit=True) as watcher,
    ):
        threads = [threading.Thread(target=client, args=(stop_clients,)) for client in clients]
        kill_args = (killer, database, stop_kills, kills, every)
        threads.append(threading.Thread(target=kill_backends, args=kill_args))
        for thread in threads:
            thread.start()
        try:
            ends = time.monotonic() + seconds
            before: dict[int, set[int]] = {}
            while time.monotonic() < ends:
                # A backend counts once two looks 20 ms apart both see it: a killed one
                # still lists itself while it exits, after its client has had the error.
                now = backend_ports(watcher, database, pids)
                for pid, ports in now.items():
                    most[pid] = max(most[pid], len(ports & before.get(pid, set())))
                before = now
                time.sleep(0.02)
        finally:
            stop_kills.set()
            stop_clients.set()
            for thread in threads:
                thread.join()
    return most, kills
