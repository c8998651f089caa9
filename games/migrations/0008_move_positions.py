"""Every log entry stores the position it led to, filled here by replaying the stored logs.

An undo then reads the position to go back to instead of replaying the whole
log (``games.services``); 0009 makes both fields required.
"""

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from games.engine import EngineError, new_position

UNDO = "undo"


def fill(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    game_model = apps.get_model("games", "Game")
    move_model = apps.get_model("games", "Move")
    for game in game_model.objects.select_related("deal").iterator(chunk_size=200):
        stack = [new_position(game.deal.variant, seed=int(game.deal.seed))]
        rows = list(move_model.objects.filter(game=game).order_by("ply"))
        for row in rows:
            if row.notation == UNDO:
                if len(stack) < 2:
                    raise EngineError(f"game {game.pk}: undo with no move to undo")
                stack.pop()
            else:
                stack.append(stack[-1].apply(row.notation))
            row.position, row.depth = stack[-1].to_json(), stack[-1].ply
        move_model.objects.bulk_update(rows, ["position", "depth"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0007_username_skeletons"),
    ]

    operations = [
        migrations.AddField(
            model_name="move",
            name="depth",
            field=models.PositiveIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="move",
            name="position",
            field=models.JSONField(null=True),
        ),
        migrations.AlterField(
            model_name="game",
            name="status",
            field=models.CharField(
                choices=[
                    ("playing", "Playing"),
                    ("won", "Won"),
                    ("lost", "Lost"),
                    ("resigned", "Resigned"),
                    ("move_limit", "Move limit reached"),
                    ("expired", "Day ended unfinished"),
                ],
                default="playing",
                max_length=16,
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
