"""deploy/backup.sh and deploy/restore.sh: a dump restored into a fresh database holds the
same games, logs, results and boards, and the service runs on it.

Skipped unless DATABASE_URL names a reachable PostgreSQL server and pg_dump, pg_restore
and psql are installed (CI has them). The figures of a larger run: ``bench/backup.py``.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools import backups
from devtools.servers import pg_admin, server_env, with_database
from tests.e2e.conftest import POSTGRES_HOW

TOOLS = ("pg_dump", "pg_restore", "psql")


@pytest.fixture
def pg_server() -> str:
    import os

    import psycopg

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip(f"needs PostgreSQL (pg_dump and pg_restore): {POSTGRES_HOW}")
    if missing := [tool for tool in TOOLS if shutil.which(tool) is None]:
        pytest.skip(f"the restore test needs {', '.join(missing)}")
    try:
        psycopg.connect(with_database(url, "postgres"), connect_timeout=3).close()
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL is not reachable: {exc}")
    return url


@pytest.fixture
def databases(pg_server: str) -> Iterator[tuple[str, str]]:
    """A source and an empty target database of the test's own, dropped afterwards."""
    names = [f"patience_backup_{kind}_{uuid.uuid4().hex[:8]}" for kind in ("src", "dst")]
    for name in names:
        pg_admin(pg_server, f"CREATE DATABASE {name}")
    yield with_database(pg_server, names[0]), with_database(pg_server, names[1])
    for name in names:
        pg_admin(pg_server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_a_dump_restores_into_a_fresh_database(databases: tuple[str, str], tmp_path: Path) -> None:
    source, target = databases
    env = server_env(database_url=source, redis_url=None, extra={"SHARED_CLOCK": "process"})
    backups.populate(env, players=6, moves=40)
    before = backups.table_digests(source)
    assert before["games_game"][0] == 12 and before["games_result"][0] == 6  # games and results
    read = backups.app_digest(env)
    assert read["faults"] == {} and read["games"] == 12

    dump, _ = backups.backup(source, tmp_path)
    backups.restore(dump, target)

    assert backups.table_digests(target) == before
    restored = backups.app_digest({**env, "DATABASE_URL": target}, write=True)
    assert restored == read
    assert any(lines for lines in restored["boards"].values())


def test_a_restore_refuses_a_database_with_tables(
    databases: tuple[str, str], tmp_path: Path
) -> None:
    import subprocess

    source, target = databases
    env = server_env(database_url=source, redis_url=None, extra={"SHARED_CLOCK": "process"})
    backups.populate(env, players=1, moves=5)
    dump, _ = backups.backup(source, tmp_path)
    with pytest.raises(subprocess.CalledProcessError) as refused:
        backups.restore(dump, source)
    assert "restore into a fresh one" in refused.value.stderr


def test_backups_are_kept_by_count_and_age(pg_server: str, tmp_path: Path) -> None:
    """Past BACKUP_KEEP newest dumps, those older than BACKUP_KEEP_DAYS are deleted."""
    import os
    import subprocess

    url = with_database(pg_server, "postgres")
    old = [tmp_path / f"patience-2020010{day}T000000Z.dump" for day in range(1, 5)]
    for path in old:
        path.write_bytes(b"old")
        os.utime(path, (0, 0))
    recent = tmp_path / "patience-20100101T000000Z.dump"  # the oldest name, a young file
    recent.write_bytes(b"recent, kept by age")
    env = {**os.environ, "DATABASE_URL": url, "BACKUP_DIR": str(tmp_path)}
    env.update(BACKUP_KEEP="2", BACKUP_KEEP_DAYS="30")
    subprocess.run(["sh", str(backups.DEPLOY / "backup.sh"), "--once"], env=env, check=True)
    kept = sorted(p.name for p in tmp_path.glob("patience-*.dump"))
    # The new dump and the newest old one are the 2 newest; the other is young enough.
    assert len(kept) == 3 and recent.name in kept and old[-1].name in kept
    assert not list(tmp_path.glob(".patience-*"))
