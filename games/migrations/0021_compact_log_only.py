"""The compact log alone: the games moved since their batch are converted again, then
the positions' JSON and the log's table go, in one transaction."""

from typing import Any

from django.db import migrations, models

from games.migrations._compact_log import convert


def catch_up(apps: Any, schema_editor: Any) -> None:
    convert(apps.get_model("games", "Game"), apps.get_model("games", "Move"))


class Migration(migrations.Migration):
    dependencies = [("games", "0020_compact_log_fill")]

    operations = [
        migrations.RunPython(catch_up, migrations.RunPython.noop),
        migrations.RemoveField("game", "position"),
        migrations.RemoveField("game", "log_ply"),
        migrations.RenameField("game", "packed", "position"),
        migrations.AlterField("game", "position", models.BinaryField()),
        migrations.DeleteModel("Move"),
    ]
