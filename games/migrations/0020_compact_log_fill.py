"""Every game converted to the compact log, a batch of games a transaction
(docs/operations.md: while the previous version still serves)."""

from typing import Any

from django.db import migrations

from games.migrations._compact_log import convert


def fill(apps: Any, schema_editor: Any) -> None:
    convert(apps.get_model("games", "Game"), apps.get_model("games", "Move"))


class Migration(migrations.Migration):
    atomic = False  # each batch commits on its own: no transaction over millions of rows

    dependencies = [("games", "0019_compact_log")]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop)]
