"""Deal.seed becomes a SeedField: exact on SQLite too (zero-padded text there).

On PostgreSQL the column stays numeric(20, 0). On SQLite the table is rebuilt
with a text column and the seeds already stored are rewritten as 20 digits,
with the range check removed meanwhile (unpadded text would fail it).
"""

from decimal import Decimal

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.db.models import CheckConstraint, Q

import games.models


def pad_sqlite_seeds(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT id, seed FROM games_deal")
        rows = cursor.fetchall()
        for pk, seed in rows:
            padded = f"{int(Decimal(str(seed))):020d}"
            cursor.execute("UPDATE games_deal SET seed = %s WHERE id = %s", [padded, pk])


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0002_daily_results"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="deal", name="seed_in_range"),
        migrations.AlterField(
            model_name="deal",
            name="seed",
            field=games.models.SeedField(),
        ),
        migrations.RunPython(pad_sqlite_seeds, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="deal",
            constraint=CheckConstraint(
                condition=Q(("seed__gte", 0), ("seed__lt", 18446744073709551616)),
                name="seed_in_range",
            ),
        ),
    ]
