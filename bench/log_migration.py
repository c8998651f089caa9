"""How long the migration to the packed log takes, per million log entries, on PostgreSQL.

    python bench/log_migration.py                 # 1,500 games of up to 200 entries
    python bench/log_migration.py --games 5000

A fresh database of ``--pg-url``'s server (dropped at the end) is migrated to the state
before the packed log, filled with games in the earlier form (a ``games_move`` row and
the position's JSON per entry: ``devtools.old_log``, all six variants, every ending),
then migrated on: the batched conversion (``0020``, the step that runs while the earlier
version still serves) and the last step (``0021``: the catch-up and the drops, the only
one the service waits for) are timed apart, with the process's CPU and the database's
size before and after.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import _cli  # noqa: E402
from bench._server import database_arguments  # noqa: E402
from devtools.servers import pg_admin, with_database  # noqa: E402

BEFORE = ("games", "0018_cap_counts")
STEPS = (("games", "0020_compact_log_fill"), ("games", "0021_compact_log_only"))


def _timed(step: object) -> tuple[float, float]:
    """Wall and CPU seconds of migrating to ``step``."""
    from django.core.management import call_command

    wall, cpu = time.perf_counter(), time.process_time()
    call_command("migrate", *step, verbosity=0)  # type: ignore[misc]
    return time.perf_counter() - wall, time.process_time() - cpu


def _size() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        (size,) = cursor.fetchone()
    return int(size)


def main() -> None:
    parser = _cli.parser(__doc__)
    database_arguments(parser)
    parser.add_argument("--games", type=int, default=1500, help="games to convert")
    parser.add_argument("--moves", type=int, default=200, help="most entries a game")
    args = parser.parse_args()
    name = f"bench_log_migration_{os.getpid()}"
    pg_admin(args.pg_url, f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = with_database(args.pg_url, name)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", args.settings)
    os.environ.pop("REDIS_URL", None)
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection
        from django.db.migrations.executor import MigrationExecutor

        from devtools.old_log import fill

        call_command("migrate", *BEFORE, verbosity=0)
        apps = MigrationExecutor(connection).loader.project_state([BEFORE]).apps
        began = time.perf_counter()
        made = fill(apps, games=args.games, most=args.moves, at=datetime(2026, 3, 1, tzinfo=UTC))
        entries = sum(len(game.log) for game in made)
        filled, size = time.perf_counter() - began, _size()
        fill_wall, fill_cpu = _timed(STEPS[0])
        last_wall, last_cpu = _timed(STEPS[1])
        with connection.cursor() as cursor:
            cursor.execute("VACUUM FULL games_game")
        after = _size()
        connection.close()
    finally:
        pg_admin(args.pg_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    million = 1_000_000 / entries
    print(f"{len(made)} games, {entries:,} log entries (written in {filled:.0f} s)")
    print(f"  batched conversion   {fill_wall:7.1f} s, {fill_wall * million:7.1f} s per million")
    print(f"    its process's CPU  {fill_cpu:7.1f} s, {fill_cpu * million:7.1f} s per million")
    print(f"  last step (drops)    {last_wall:7.1f} s, {last_wall * million:7.1f} s per million")
    print(f"    its process's CPU  {last_cpu:7.1f} s, {last_cpu * million:7.1f} s per million")
    print(f"  database             {size / 2**20:7.1f} MB before, {after / 2**20:.1f} MB after")


if __name__ == "__main__":
    main()
