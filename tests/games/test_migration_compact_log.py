"""The migration to the packed log loses nothing: games written in the earlier form (a
row and the position's JSON per entry) replay, after it, to the same position after
every entry, with the same score, counters, status and results; and a game an older
server moved on after its batch is converted again by the last step."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from devtools.old_log import OldGame, fill
from games.engine import GameLog
from games.engine.record import position_bytes
from games.models import Game
from games.selectors.games import deal_start, game_entries, game_log, game_verify

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("games", "0018_cap_counts")]
FILLED = [("games", "0020_compact_log_fill")]
AT = datetime(2026, 3, 1, 12, tzinfo=UTC)


def migrate(targets: list[tuple[str, str]]) -> Any:
    """Migrate to ``targets``; the historical apps there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.fixture
def old_schema() -> Iterator[Any]:
    """The games' tables as they were before the packed log; the latest ones after."""
    apps = migrate(BEFORE)
    yield apps
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def latest() -> None:
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def check(old: OldGame) -> None:
    """The game after the migration is the game before it."""
    game = Game.objects.select_related("deal").get(pk=old.game_id)
    assert game_log(game) == old.log
    assert game_verify(game) is None
    replayed = list(GameLog.replay_steps(deal_start(game.deal), game_log(game)))
    assert [step.position for step in replayed] == old.positions
    assert (game.score, game.status, game.undo_floor, game.ply) == (
        old.score,
        old.status,
        old.undo_floor,
        len(old.log),
    )
    times = [game.started_at] + [e.created_at for e in game_entries(game)]
    assert times == sorted(times)
    if old.log:
        assert game.moved_at is not None
        assert timedelta(0) <= game.moved_at - times[-1] < timedelta(milliseconds=1)
    else:
        assert game.moved_at is None


def test_every_game_replays_as_before(old_schema: Any) -> None:
    made = fill(old_schema, games=18, most=120, at=AT)
    Move = old_schema.get_model("games", "Move")
    stamps = {
        old.game_id: list(
            Move.objects.filter(game_id=old.game_id)
            .order_by("ply")
            .values_list("created_at", flat=True)
        )
        for old in made
    }
    latest()
    assert {old.status for old in made} >= {"playing", "resigned"}
    assert sum(len(old.log) for old in made) > 500
    for old in made:
        check(old)
        entries = game_entries(Game.objects.select_related("deal").get(pk=old.game_id))
        for entry, stamp in zip(entries, stamps[old.game_id], strict=True):
            assert timedelta(0) <= stamp - entry.created_at < timedelta(milliseconds=1)


def test_a_game_moved_after_its_batch_is_converted_again(old_schema: Any) -> None:
    made = fill(old_schema, games=3, most=40, at=AT)
    migrate(FILLED)
    apps = MigrationExecutor(connection).loader.project_state(FILLED).apps
    Game_, Move = apps.get_model("games", "Game"), apps.get_model("games", "Move")
    playing = next(old for old in made if old.status == "playing")
    game = Game_.objects.select_related("deal").get(pk=playing.game_id)
    # An older server plays one more entry of the game, in the earlier form.
    current = GameLog.replay(deal_start(game.deal), playing.log)
    notation = str(current.position.legal_moves[0])
    after = current.play(notation)
    Move.objects.create(
        game_id=game.pk,
        ply=len(playing.log),
        notation=notation,
        position=after.position.to_json(),
        depth=after.moves_on_board,
    )
    Game_.objects.filter(pk=game.pk).update(
        ply=len(playing.log) + 1, position=after.position.to_json(), score=after.position.score
    )
    latest()
    moved = Game.objects.select_related("deal").get(pk=game.pk)
    assert game_log(moved) == [*playing.log, notation]
    assert bytes(moved.position) == position_bytes(after.position)
    assert game_verify(moved) is None
