"""Usernames are unique whatever their case, enforced by the database.

``games.services.user_register`` refuses a name that differs from a taken one
only in case, but it checked before hashing the password (about a second, on
purpose), so registrations of "Ann" and "ann" sent at the same moment both
passed the check and both accounts were created: two players showing as the
same name on the boards. A unique index on ``UPPER(username)`` (what Django's
``iexact`` compares on PostgreSQL) makes the later insert fail, which
``user_register`` already answers as "that username is taken". The user model
is ``django.contrib.auth``'s, so the index is made here.
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

INDEX = "games_username_upper_uniq"


def _table(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> tuple[str, str]:
    user = apps.get_model(settings.AUTH_USER_MODEL)  # historical models have no USERNAME_FIELD
    column = user._meta.get_field(get_user_model().USERNAME_FIELD).column
    q = schema_editor.quote_name
    return q(user._meta.db_table), q(column)


def create_index(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    table, column = _table(apps, schema_editor)
    schema_editor.execute(
        f"CREATE UNIQUE INDEX {schema_editor.quote_name(INDEX)} ON {table} (UPPER({column}))"
    )


def drop_index(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(INDEX)}")


class Migration(migrations.Migration):
    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("games", "0005_daily_par"),
    ]

    operations = [migrations.RunPython(create_index, drop_index)]
