"""Look-alike forms of user names (``accounts.usernames``), unique, for the existing accounts too.

Accounts registered before this migration whose names already look alike keep
their names; the older one gets the skeleton, so further look-alikes are refused.
"""

import django.db.models.deletion
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from accounts.usernames import username_skeleton


def fill(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    user_model = apps.get_model(settings.AUTH_USER_MODEL)
    skeletons = apps.get_model("games", "UsernameSkeleton")
    field = get_user_model().USERNAME_FIELD  # historical models have no USERNAME_FIELD
    seen = set()
    rows = []
    for pk, name in user_model.objects.order_by("pk").values_list("pk", field).iterator():
        skeleton = username_skeleton(name)
        if skeleton not in seen:
            seen.add(skeleton)
            rows.append(skeletons(user_id=pk, skeleton=skeleton))
    skeletons.objects.bulk_create(rows, batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("games", "0006_username_unique_in_any_case"),
    ]

    operations = [
        migrations.CreateModel(
            name="UsernameSkeleton",
            fields=[
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="username_skeleton",
                        serialize=False,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                ("skeleton", models.TextField(unique=True)),
            ],
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
