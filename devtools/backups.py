"""Backups for the restore test and its bench: a database with games, logs, results and
boards in it, deploy/backup.sh and deploy/restore.sh run on it, and what to compare.

``populate`` plays real games through the services in a process of its own (on the
database ``env`` names): practice games with their logs, and a ranked daily each that
ends with a result, so today's board has a line per player. ``table_digests`` reads every
table's rows in order (PostgreSQL only, no Django), ``app_digest`` what the service makes
of them: each game checked against the replay of its log, and every daily's board.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from devtools.servers import REPO_ROOT, subprocess_json

DEPLOY = REPO_ROOT / "deploy"

_POPULATE = """
import io, json, random, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from core import clock
from api import shapes
from games.play import finish, move
from games.services import dailies, games

call_command("migrate", interactive=False, verbosity=0)
call_command("create_dailies", days=1, stdout=io.StringIO())
players, moves = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(5)

def play(game, user, most):
    state = shapes.game_state(game)
    for _ in range(most):
        if state["status"] != "playing" or not state["legal_moves"]:
            return
        choice = rng.choice(state["legal_moves"])
        done = move.apply_move(game_id=game.pk, user=user, move=choice, ply=state["ply"])
        state = done.state.as_json()

for i in range(players):
    user = get_user_model().objects.create_user(username=f"backup-{i:04d}", password=None)
    seed = rng.randrange(2**32)
    play(games.practice_game_start(user=user, variant="bristol", seed=seed), user, moves)
    daily, _ = dailies.daily_game_start(user=user, variant="bristol", day=clock.today())
    play(daily, user, moves)
    if daily.__class__.objects.get(pk=daily.pk).status == "playing":
        finish.resign(game_id=daily.pk, user=user)
print(json.dumps({"players": players}))
"""

_APP_DIGEST = """
import json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from games.models import Deal, Game
from games.selectors.boards import day_board_lines
from games.selectors.games import game_verify

faults = {g.pk: game_verify(g) for g in Game.objects.select_related("deal")}
boards = {
    f"{d.variant} {d.date}": list(day_board_lines(d)[:1000])
    for d in Deal.objects.filter(kind="daily").order_by("pk")
}
if sys.argv[1] == "write":  # the restored database takes new rows (its sequences came too)
    get_user_model().objects.create_user(username="after-restore", password=None)
print(json.dumps({"faults": {k: v for k, v in faults.items() if v}, "games": len(faults),
                  "boards": boards}, default=str))
"""


def populate(env: Mapping[str, str], *, players: int, moves: int) -> None:
    """Migrate the database of ``env`` and play ``players`` players' games in it."""
    subprocess_json("-c", _POPULATE, str(players), str(moves), env=env, timeout=1800)


def app_digest(env: Mapping[str, str], *, write: bool = False) -> dict[str, Any]:
    """Games that differ from their logs' replay (none, if sound), and every daily's board."""
    return dict(subprocess_json("-c", _APP_DIGEST, "write" if write else "read", env=env))


def table_digests(database_url: str) -> dict[str, tuple[int, str]]:
    """Every table of the public schema: its row count and an MD5 of its rows in order."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(database_url) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            )
        ]
        digests = {}
        for table in tables:
            query = sql.SQL(
                "SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), ''))"
                " FROM {} t"
            ).format(sql.Identifier(table))
            count, digest = conn.execute(query).fetchone()  # type: ignore[misc]
            digests[table] = (int(count), str(digest))
    return digests


def _run(script: str, *args: str, env: Mapping[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(
        ["sh", str(DEPLOY / script), *args],
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - began


def backup(database_url: str, directory: Path) -> tuple[Path, float]:
    """``deploy/backup.sh --once`` into ``directory``: the dump and the seconds it took."""
    seconds = _run(
        "backup.sh", "--once", env={"DATABASE_URL": database_url, "BACKUP_DIR": str(directory)}
    )
    (dump,) = directory.glob("patience-*.dump")
    return dump, seconds


def restore(dump: Path, database_url: str) -> float:
    """``deploy/restore.sh`` of ``dump`` into the (empty) database: the seconds it took."""
    return _run("restore.sh", str(dump), database_url, env={})
