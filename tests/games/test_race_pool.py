"""The race pool against one account draining it and a burst of joins (issue 32, part 2):
deals of races nobody raced come back, private races per account are limited, the pool
is filled once per cluster at low priority and never past its target, and simultaneous
quick joins fill one race at a time."""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection, connections
from pytest_django import Settings

from core.errors import RaceLimit
from games.management.commands import races as races_command
from games.models import Race
from games.services import race_pool
from games.services import races as race_services
from games.services.race_pool import race_pool_fill
from tests.race_fixtures import pool

pytestmark = pytest.mark.django_db


def pool_size(variant: str = "bristol") -> int:
    return race_pool._pool(variant).count()


def test_a_race_nobody_raced_gives_its_deal_back(
    settings: Settings, make_user: Callable[..., Any], race_pool_jobs: list[int]
) -> None:
    ann, bob = make_user("ann"), make_user("bob")
    pool(settings, size=2)
    race = race_services.race_create(user=ann, variant="bristol")
    race_services.race_join(user=bob, code=race.code)
    race_services.race_start(user=ann, code=race.code)  # a countdown: games are dealt
    assert pool_size() == 1
    race_services.race_leave(user=bob, code=race.code)
    race_services.race_leave(user=ann, code=race.code)
    race.refresh_from_db()
    assert race.status == Race.Status.FINISHED and race.deal is None
    assert pool_size() == 2  # and no game of it is left to tell its cards
    assert not race_services.Game.objects.exists()


def test_one_account_cannot_drain_the_pool(
    settings: Settings, make_user: Callable[..., Any], race_pool_jobs: list[int]
) -> None:
    """The drain of issue 32: open and leave private races as fast as answered."""
    drainer, other = make_user("drainer"), make_user("other")
    pool(settings, size=3)
    opened = 0
    with pytest.raises(RaceLimit) as refused:
        for _ in range(race_services.PRIVATE_RACES_PER_HOUR + 5):
            race = race_services.race_create(user=drainer, variant="bristol")
            opened += 1
            race_services.race_leave(user=drainer, code=race.code)
    assert opened == race_services.PRIVATE_RACES_PER_HOUR
    assert refused.value.code == "race_limit"
    assert 0 < refused.value.details["retry_after"] <= 3601
    assert pool_size() == 3 and not race_pool_jobs
    race, created = race_services.race_quick_join(user=other, variant="bristol")
    assert created and race.deal is not None


def test_the_pool_is_filled_once_per_cluster(settings: Settings) -> None:
    """While one process fills the pool, another one's fill deals nothing."""
    settings.RACE_POOL_SIZE, settings.RACE_SOLVER_NODES = 3, 0
    dealt: list[int] = []

    def other_process() -> None:
        try:
            dealt.append(race_pool_fill(variants=["bristol"]))
        finally:
            connections.close_all()

    with race_pool._pool_fill_lock() as got:
        assert got
        thread = threading.Thread(target=other_process)
        thread.start()
        thread.join()
    assert dealt == [0] and pool_size() == 0
    assert race_pool_fill(variants=["bristol"]) == 3


def test_the_pool_is_never_filled_past_its_target(settings: Settings) -> None:
    pool(settings, size=2)
    settings.RACE_POOL_SIZE = 3
    assert race_pool_fill(variants=["bristol"]) == 1
    assert race_pool_fill(variants=["bristol"]) == 0
    assert pool_size() == 3


def test_the_job_runs_at_low_priority(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    niced: list[int] = []
    monkeypatch.setattr(os, "nice", niced.append)
    settings.RACE_POOL_SIZE, settings.RACE_SOLVER_NODES = 2, 0
    call_command("races")
    assert niced == [races_command.NICENESS] and niced[0] > 0
    assert pool_size("bristol") == 2


@pytest.mark.django_db(transaction=True)
def test_simultaneous_quick_joins_fill_one_race_at_a_time(
    settings: Settings, make_user: Callable[..., Any], race_pool_jobs: list[int]
) -> None:
    """The burst of issue 32 on PostgreSQL: 20 players join at once; the races are 8, 8, 4."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serializes every write; the lock is PostgreSQL's")
    players = [make_user(f"burst{i}") for i in range(20)]
    pool(settings, size=6)
    gate = threading.Barrier(len(players))
    errors: list[BaseException] = []

    def join(player: Any) -> None:
        try:
            gate.wait()
            race_services.race_quick_join(user=player, variant="bristol")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=join, args=(p,)) for p in players]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    sizes = Counter(Race.objects.values_list("entries__race", flat=True))
    assert sorted(sizes.values(), reverse=True) == [8, 8, 4]


def test_the_loop_stops_after_its_time(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--loop 1 --for 5``: a CronJob's run ends; the clock is moved, no time is spent."""
    monkeypatch.setattr(os, "nice", lambda n: None)
    settings.RACE_POOL_SIZE, settings.RACE_SOLVER_NODES = 1, 0
    now = [0.0]
    monkeypatch.setattr(races_command.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(races_command.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    call_command("races", "--loop", "1", "--for", "5")
    assert 5 <= now[0] <= 6
    assert pool_size("bristol") == 1
