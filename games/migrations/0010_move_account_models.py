"""ApiToken and UsernameSkeleton leave games for the accounts app, in the state only.

Their tables stay as they are (``games_apitoken``, ``games_usernameskeleton``):
``accounts.0001_initial`` takes the models over with those table names.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0009_move_positions_required"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="ApiToken"),
                migrations.DeleteModel(name="UsernameSkeleton"),
            ],
            database_operations=[],
        ),
    ]
