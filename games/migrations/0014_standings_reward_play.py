"""Results not won take the new order of standings (games.standings): recompute their keys
from their logs, and drop the Redis mirrors of their boards (rebuilt on their next read)."""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from games.engine import GameLog, get_variant, new_position
from games.standings import reach_of, standing_key


def rekey(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    from games.boards import board_drop

    Result = apps.get_model("games", "Result")
    Move = apps.get_model("games", "Move")
    deals = set()
    for result in Result.objects.filter(won=False).select_related("deal").iterator(2000):
        reach = 0
        if result.cards_home:
            log = Move.objects.filter(game_id=result.game_id).order_by("ply")
            start = new_position(result.deal.variant, seed=int(result.deal.seed))
            steps = GameLog.replay_steps(start, log.values_list("notation", flat=True))
            reach = reach_of([step.position.score for step in steps], start.score)
        result.sort_key = standing_key(
            won=False,
            cards_missing=get_variant(result.deal.variant).card_count - result.cards_home,
            moves=result.moves,
            time_ms=result.time_ms,
            finished_ms=int(result.finished_at.timestamp() * 1000),
            game_id=result.game_id,
            reach=reach,
        )
        result.save(update_fields=["sort_key"])
        deals.add(result.deal_id)
    for deal_id in deals:
        board_drop(deal_id)


class Migration(migrations.Migration):
    dependencies = [("games", "0013_race_pool_guard")]

    operations = [migrations.RunPython(rekey, migrations.RunPython.noop)]
