"""Log entries' positions are required from now on (0008 filled them), and found by depth."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0008_move_positions"),
    ]

    operations = [
        migrations.AlterField(
            model_name="move",
            name="depth",
            field=models.PositiveIntegerField(),
        ),
        migrations.AlterField(
            model_name="move",
            name="position",
            field=models.JSONField(),
        ),
        migrations.AddIndex(
            model_name="move",
            index=models.Index(fields=["game", "depth", "ply"], name="move_by_depth"),
        ),
    ]
