"""Backup and restore times: deploy/backup.sh and deploy/restore.sh on a database of games.

    python bench/backup.py                      # 200 players, up to 100 moves a game
    python bench/backup.py --players 1000 --database-url postgres://postgres@127.0.0.1:5432/postgres

Plays ``--players`` players' games (a practice game and a ranked daily each, with their
logs, results and today's board) into a database of its own on the PostgreSQL server of
``--database-url`` (default: ``DATABASE_URL``), dumps it with deploy/backup.sh, restores
the dump into a second fresh database with deploy/restore.sh, checks that every table's
rows are the same, and prints the rows, the dump's size and the seconds of each step.
Both databases are dropped at the end.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from devtools import backups  # noqa: E402
from devtools.servers import pg_admin, server_env, with_database  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = _cli.parser(__doc__)
    parser.add_argument("--players", type=int, default=200, help="players (200)")
    parser.add_argument("--moves", type=int, default=100, help="most moves a game (100)")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    args = parser.parse_args(argv)
    if not (args.database_url or "").startswith(("postgres://", "postgresql://")):
        parser.error("--database-url (or DATABASE_URL) must name a PostgreSQL server")
    names = [f"patience_bench_backup_{kind}_{uuid.uuid4().hex[:8]}" for kind in ("src", "dst")]
    for name in names:
        pg_admin(args.database_url, f"CREATE DATABASE {name}")
    source, target = (with_database(args.database_url, name) for name in names)
    try:
        env = server_env(database_url=source, redis_url=None, extra={"SHARED_CLOCK": "process"})
        began = time.perf_counter()
        backups.populate(env, players=args.players, moves=args.moves)
        played = time.perf_counter() - began
        before = backups.table_digests(source)
        with tempfile.TemporaryDirectory() as tmp:
            dump, dumped = backups.backup(source, Path(tmp))
            size = dump.stat().st_size
            restored = backups.restore(dump, target)
        same = backups.table_digests(target) == before
    finally:
        for name in names:
            pg_admin(args.database_url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    rows = sum(count for count, _ in before.values())
    print(f"Backup and restore: {args.players} players, up to {args.moves} moves a game")
    print(
        f"  data     {rows} rows in {len(before)} tables ({before['games_game'][0]} games, "
        f"{before['games_result'][0]} results); "
        f"played in {played:.1f} s"
    )
    print(f"  dump     {dumped:.2f} s, {size / 1024:.0f} KiB (pg_dump custom format)")
    print(f"  restore  {restored:.2f} s into a fresh database")
    print(f"  check    every table's rows {'identical' if same else 'DIFFER'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
