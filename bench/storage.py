"""What a move costs the database to keep: bytes stored, WAL written, the game row, and
the time to undo and to replay a long game, on PostgreSQL.

    python bench/storage.py                          # this tree, 12 games of each variant
    python bench/storage.py --tree /tmp/old --games 6
    python bench/storage.py --tree /tmp/old --tree .  # two trees, side by side in one run

Each tree runs in a process of its own, on a fresh database of the PostgreSQL server
``--pg-url`` names (dropped at the end), migrated by that tree's code. Its players play
practice games of all six variants through the REST API in-process (the test client: the
whole stack but the network), each game to its end or ``--moves`` entries: the first
legal move home if any, else a deal, else a seeded random legal move, and an undo every
``--undo-every`` moves. The figures come from PostgreSQL itself:

- **stored per move**: the move log after ``VACUUM FULL``, over the log entries: its
  table with indexes and TOAST (``pg_total_relation_size``) where it has one, else the
  packed column of the games' rows (``pg_column_size``); the same for finished games
  alone; and with the whole games' table counted too (a tree with a log table: both);
- **WAL per move**: ``pg_current_wal_lsn()`` before and after the play, over the log
  entries, on a PostgreSQL server the run starts for itself (``initdb`` in a temporary
  folder; ``--shared-server`` uses ``--pg-url``'s, whose WAL is everyone's), after a
  ``CHECKPOINT``: so every page's first change writes its full image, counted apart;
- **PostgreSQL CPU per move**: the CPU time of the backend that served the play;
- **game row**: the mean ``pg_column_size`` of a game's row;
- **undo / replay at ply 300**: one game played to 300 entries, then the median time of
  an undo through the API, and of replaying its log from the deal.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The repository this script belongs to; a measured tree may be another checkout.
ROOT = Path(__file__).resolve().parents[1]

ROWS = [
    ("moves", "log entries"),
    ("stored_per_move", "stored per move, B (the log: its table or the games' column)"),
    ("finished_per_move", "stored per move of a finished game, B"),
    ("with_games_per_move", "stored per move with the games' table, B"),
    ("wal_per_move", "WAL per move, B"),
    ("fpi_per_1000", "full-page images per 1,000 moves"),
    ("hot_share", "updates of a game's row in place (HOT), %"),
    ("pg_cpu_ms", "PostgreSQL backend CPU per move, ms"),
    ("game_row", "game row, B (mean)"),
    ("undo_ms", "undo at ply 300, ms (median)"),
    ("replay_ms", "replay of 300 entries, ms (median)"),
]


def _choose(state: dict[str, Any], rng: random.Random) -> str:
    """A move: one home if any, else a deal, else a random legal one."""
    moves = state["legal_moves"]
    home = [m for m in moves if m.endswith(("-f", "-a"))]
    deals = [m for m in moves if m.startswith("deal")]
    return (home or deals or [rng.choice(moves)])[0]


def _play(client: Any, game: dict[str, Any], most: int, undo_every: int, rng: random.Random) -> int:
    """Play ``game`` to its end or ``most`` entries; the entries it logged."""
    url = f"/api/v1/games/{game['id']}/"
    while game["status"] == "playing" and game["ply"] < most and game["legal_moves"]:
        if undo_every and game["can_undo"] and game["ply"] % undo_every == undo_every - 1:
            answer = client.post(url + "undo/", {"ply": game["ply"]}, format="json")
        else:
            move = {"move": _choose(game, rng), "ply": game["ply"]}
            answer = client.post(url + "moves/", move, format="json")
        assert answer.status_code == 200, answer.content
        game = answer.json()
    return int(game["ply"])


def measure(games: int, most: int, undo_every: int) -> dict[str, float]:
    """Play and measure in this process (its tree, its database: the environment's). It
    imports only what every tree has, so it can measure an older checkout."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "patience_site.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from rest_framework.test import APIClient

    from games.engine import VARIANTS

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")  # every page's first change from here has its image
        cursor.execute("SELECT pg_stat_reset_shared('wal')")
        cursor.execute("SELECT pg_current_wal_lsn(), pg_backend_pid()")
        wal_before, backend = cursor.fetchone()
    cpu_before = _cpu_seconds(backend)
    rng = random.Random(7)
    entries = 0
    for n, variant in enumerate(v for v in VARIANTS for _ in range(games)):
        user = get_user_model().objects.create_user(username=f"storage-{n}", password=None)
        client = APIClient()
        client.force_authenticate(user)
        body = {"variant": variant, "seed": 1000 + n}
        game = client.post("/api/v1/games/", body, format="json").json()
        entries += _play(client, game, most, undo_every, rng)
    cpu = _cpu_seconds(backend) - cpu_before
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", [wal_before])
        (wal,) = cursor.fetchone()
        cursor.execute("SELECT wal_fpi FROM pg_stat_wal")
        (images,) = cursor.fetchone()
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute(
            "SELECT n_tup_hot_upd::float / greatest(n_tup_upd, 1) FROM pg_stat_user_tables "
            "WHERE relname = 'games_game'"
        )
        (hot,) = cursor.fetchone()
        stored = _stored(cursor)
        cursor.execute("SELECT avg(pg_column_size(g.*)) FROM games_game g")
        (row,) = cursor.fetchone()
    undo_ms, replay_ms = _long_game(rng)
    return {
        "moves": entries,
        "stored_per_move": stored["log"] / entries,
        "finished_per_move": stored["finished_log"] / max(1, stored["finished_entries"]),
        "with_games_per_move": (stored["log_table"] + stored["games"]) / entries,
        "wal_per_move": float(wal) / entries,
        "fpi_per_1000": 1000 * images / entries,
        "hot_share": 100 * hot,
        "pg_cpu_ms": 1000 * cpu / entries,
        "game_row": float(row),
        "undo_ms": undo_ms,
        "replay_ms": replay_ms,
    }


def _cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stored(cursor: Any) -> dict[str, int]:
    """Bytes of the log, after ``VACUUM FULL``: a table of its own (``games_move``, a row
    an entry, with its indexes and TOAST) or packed in the games' rows (``games_game.log``);
    of the finished games' logs alone; and of the games' table."""
    cursor.execute("SELECT to_regclass('games_move') IS NOT NULL")
    (table,) = cursor.fetchone()
    for name in ("games_move", "games_game") if table else ("games_game",):
        cursor.execute(f"VACUUM FULL {name}")
    cursor.execute("SELECT pg_total_relation_size('games_game')")
    (games,) = cursor.fetchone()
    finished = "FROM games_game WHERE status <> 'playing'"
    cursor.execute(f"SELECT coalesce(sum(ply), 0) {finished}")
    (finished_entries,) = cursor.fetchone()
    if table:
        cursor.execute("SELECT pg_total_relation_size('games_move'), count(*) FROM games_move")
        log, rows = cursor.fetchone()
        per_row = log / max(1, rows)
        return {
            "log": log,
            "log_table": log,
            "games": games,
            "finished_log": int(per_row * finished_entries),
            "finished_entries": finished_entries,
        }
    cursor.execute("SELECT coalesce(sum(pg_column_size(log)), 0) FROM games_game")
    (log,) = cursor.fetchone()
    cursor.execute(f"SELECT coalesce(sum(pg_column_size(log)), 0) {finished}")
    (finished_log,) = cursor.fetchone()
    return {
        "log": log,
        "log_table": 0,
        "games": games,
        "finished_log": finished_log,
        "finished_entries": finished_entries,
    }


def _long_game(rng: random.Random) -> tuple[float, float]:
    """A Bristol game of 300 entries (moves and undos back and forth): the median time of
    an undo through the API, and of a replay of its log from the deal."""
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    from games.models import Game
    from games.selectors.games import game_replay

    user = get_user_model().objects.create_user(username="storage-long", password=None)
    client = APIClient()
    client.force_authenticate(user)
    game = client.post("/api/v1/games/", {"variant": "bristol", "seed": 11}, format="json").json()
    url = f"/api/v1/games/{game['id']}/"
    undos: list[float] = []
    while game["ply"] < 300 and game["status"] == "playing":
        if game["can_undo"] and game["ply"] % 2:
            start = time.perf_counter()
            answer = client.post(url + "undo/", {"ply": game["ply"]}, format="json")
            undos.append((time.perf_counter() - start) * 1000)
        else:
            move = {"move": rng.choice(game["legal_moves"]), "ply": game["ply"]}
            answer = client.post(url + "moves/", move, format="json")
        game = answer.json()
    stored = Game.objects.select_related("deal").get(pk=game["id"])
    replays = []
    for _ in range(20):
        start = time.perf_counter()
        game_replay(stored)
        replays.append((time.perf_counter() - start) * 1000)
    return statistics.median(undos or [0.0]), statistics.median(replays)


@contextmanager
def own_cluster() -> Iterator[str]:
    """A PostgreSQL server of this run's own (``initdb`` in a temporary folder, a free
    port), so that its WAL and CPU are this run's alone; its URL (no database name)."""
    from devtools.servers import free_port

    binaries = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]
    folder = Path(tempfile.mkdtemp(prefix="bench-storage-"))
    as_owner: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: the server's own account runs it
        shutil.chown(folder, "postgres")
        as_owner = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", free_port()
    subprocess.run(
        [*as_owner, str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
        check=True,
        capture_output=True,
    )
    settings = ["-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={folder}"]
    server = subprocess.Popen(
        [*as_owner, str(binaries / "postgres"), "-D", str(data), "-p", str(port), *settings],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            ready = subprocess.run(
                [str(binaries / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                capture_output=True,
                check=False,
            )
            if ready.returncode == 0:
                break
            time.sleep(0.1)
        yield f"postgres://postgres@127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


def run_tree(tree: Path, args: Any) -> dict[str, float]:
    """Measure ``tree`` in a process of its own on a fresh database, dropped after."""
    from devtools.servers import pg_admin, with_database

    name = f"bench_storage_{os.getpid()}_{abs(hash(str(tree))) % 10**6}"
    pg_admin(args.pg_url, f'CREATE DATABASE "{name}"')
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "DATABASE_URL": with_database(args.pg_url, name),
        "THROTTLE_RATE_USER": "100000/min",
        "THROTTLE_RATE_IP": "100000/min",
    }
    env.pop("REDIS_URL", None)
    code = (
        "import json, runpy, sys; measure = runpy.run_path(sys.argv[1])['measure']; "
        "print(json.dumps(measure(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))"
    )
    argv = [__file__, str(args.games), str(args.moves), str(args.undo_every)]
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, *argv],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    finally:
        pg_admin(args.pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from bench import _cli
    from bench._server import database_arguments

    parser = _cli.parser(__doc__)
    database_arguments(parser)
    parser.add_argument("--tree", action="append", help="a checkout to measure (repeatable)")
    parser.add_argument("--games", type=int, default=12, help="games of each variant")
    parser.add_argument("--moves", type=int, default=200, help="most entries a game")
    parser.add_argument("--undo-every", type=int, default=15, help="an undo every n entries")
    parser.add_argument(
        "--shared-server",
        action="store_true",
        help="use --pg-url's server, not one of the run's own (its WAL is everyone's)",
    )
    args = parser.parse_args()
    trees = [Path(t).resolve() for t in (args.tree or [str(ROOT)])]
    if args.shared_server:
        figures = {str(tree): run_tree(tree, args) for tree in trees}
    else:
        with own_cluster() as args.pg_url:
            figures = {str(tree): run_tree(tree, args) for tree in trees}
    width = max(len(label) for _, label in ROWS)
    print(f"{'':<{width}}" + "".join(f"{Path(t).name:>16}" for t in figures))
    for key, label in ROWS:
        digits = 2 if key.endswith("_ms") else 1
        print(f"{label:<{width}}" + "".join(f"{f[key]:>16,.{digits}f}" for f in figures.values()))


if __name__ == "__main__":
    main()
