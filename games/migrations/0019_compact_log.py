"""The compact log's columns, beside the old ones (instant: no table rewrite); and room
on each page of the games' table for its rows to grow in place."""

from typing import Any

from django.db import migrations, models

#: Percent of each new page of ``games_game`` that inserts fill on PostgreSQL: a move
#: rewrites its game's row, a little longer each time, and an update that finds room on
#: the row's own page touches no index (HOT, ``bench/storage.py`` counts them).
FILLFACTOR = 80


def room(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE games_game SET (fillfactor = {FILLFACTOR})")


def no_room(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE games_game RESET (fillfactor)")


class Migration(migrations.Migration):
    dependencies = [("games", "0018_cap_counts")]

    operations = [
        migrations.AddField("game", "log", models.BinaryField(default=b"")),
        migrations.AddField("game", "moved_at", models.DateTimeField(blank=True, null=True)),
        migrations.AddField("game", "packed", models.BinaryField(null=True)),
        migrations.AddField("game", "log_ply", models.PositiveIntegerField(null=True)),
        migrations.RunPython(room, no_room),
    ]
