"""The compact log's columns, beside the old ones (instant: no table rewrite)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("games", "0018_cap_counts")]

    operations = [
        migrations.AddField("game", "log", models.BinaryField(default=b"")),
        migrations.AddField("game", "moved_at", models.DateTimeField(blank=True, null=True)),
        migrations.AddField("game", "packed", models.BinaryField(null=True)),
        migrations.AddField("game", "log_ply", models.PositiveIntegerField(null=True)),
    ]
