"""core.metrics: moves counted and timed in the move service, states read at a scrape."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY
from pytest_django import Settings

from api import shapes
from core import metrics, redis_guard
from core.errors import StalePly
from games import gauges
from games.engine import VARIANTS
from games.models import Deal
from games.play import move as play_move
from games.services import games as game_services

pytestmark = pytest.mark.django_db


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def game(user: Any) -> Any:
    return game_services.practice_game_start(user=user, variant="bristol", seed=1)


def test_a_move_is_counted_and_timed_by_door_and_outcome(user: Any, game: Any) -> None:
    legal = shapes.game_state(game)["legal_moves"][0]
    ok = sample("patience_moves_total", transport="ws", outcome="ok")
    stale = sample("patience_moves_total", transport="ws", outcome="stale_ply")
    timed = sample("patience_move_seconds_count", transport="ws")
    play_move.apply_move(game_id=game.pk, user=user, move=legal, ply=0, transport="ws")
    with pytest.raises(StalePly):
        play_move.apply_move(game_id=game.pk, user=user, move="undo", ply=0, transport="ws")
    assert sample("patience_moves_total", transport="ws", outcome="ok") == ok + 1
    assert sample("patience_moves_total", transport="ws", outcome="stale_ply") == stale + 1
    assert sample("patience_move_seconds_count", transport="ws") == timed + 2


def test_a_scrape_reads_the_race_pool_and_todays_dailies() -> None:
    from core import clock
    from games.services.dailies import daily_create

    Deal.objects.create(kind=Deal.Kind.RACE, variant="bristol", seed=11)
    Deal.objects.create(kind=Deal.Kind.RACE, variant="bristol", seed=12)
    gauges.gauges_refresh()
    assert sample("patience_race_pool_deals", variant="bristol") == 2
    assert all(
        sample("patience_race_pool_deals", variant=k) == 0 for k in VARIANTS if k != "bristol"
    )
    assert sample("patience_dailies_dealt_today") == 0
    deals = [daily_create(key, clock.today()) for key in VARIANTS]
    gauges.gauges_refresh()
    assert sample("patience_dailies_dealt_today") == 1
    newest = max(deal.created_at for deal in deals).timestamp()
    assert sample("patience_daily_last_dealt_timestamp_seconds") == pytest.approx(newest)


def test_a_scrape_reads_the_redis_breaker(settings: Settings) -> None:
    from redis.exceptions import ConnectionError as RedisConnectionError

    def down() -> None:
        raise RedisConnectionError("refused")

    gauges.gauges_refresh()
    assert sample("patience_redis_breaker_open") == 0
    with pytest.raises(redis_guard.RedisUnavailable):
        redis_guard.guarded(down)
    assert redis_guard.breaker_state() == "open"
    gauges.gauges_refresh()
    assert sample("patience_redis_breaker_open") == 1


def test_a_scrape_reads_the_hint_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    state = {"workers": 2, "in_flight": 1, "broken": True, "restarts": 3}
    monkeypatch.setattr(gauges.hints, "pool_state", lambda: state)
    gauges.gauges_refresh()
    assert sample("patience_hint_workers") == 2
    assert sample("patience_hints_in_flight") == 1
    assert sample("patience_hint_pool_broken") == 1
    assert sample("patience_hint_pool_restarts") == 3


def test_a_scrape_reads_the_database_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    stats = {"size": 4, "available": 3, "waiting": 0, "max": 20}
    monkeypatch.setattr(gauges, "pool_stats", lambda: stats)
    gauges.gauges_refresh()
    assert sample("patience_db_pool_connections", state="size") == 4
    assert sample("patience_db_pool_connections", state="max") == 20


def test_the_exposition_names_every_metric() -> None:
    body, content_type = metrics.exposition()
    assert content_type.startswith("text/plain")
    for name in ("patience_moves_total", "patience_move_seconds", "patience_open_sockets"):
        assert f"# TYPE {name} ".encode() in body


def test_a_scrape_answers_without_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the database is away the scrape matters most: its states are skipped, said so."""
    from django.db import OperationalError

    def down() -> dict[str, int]:
        raise OperationalError("connection refused")

    gauges.gauges_refresh()
    assert sample("patience_database_up") == 1
    monkeypatch.setattr(gauges.races, "race_pool_sizes", down)
    gauges.gauges_refresh()
    body, _ = metrics.exposition()
    assert b"patience_database_up 0.0" in body
