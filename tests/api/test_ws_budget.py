"""A socket frame's count against its account's budget, taken from Redis in leases."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from api import throttling

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.own_redis"]


@pytest.fixture
def budget(settings: Any, own_redis: Any) -> Any:
    """``budget("300/min")``: the account budget at that rate, on a Redis of its own."""

    def set_rate(rate: str) -> None:
        rates = dict(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], user=rate)
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}

    return set_rate


@pytest.fixture
def round_trips(monkeypatch: Any) -> list[int]:
    """The size of every lease asked of Redis from now on."""
    asked: list[int] = []
    take = throttling._take_redis

    def spy(cache: Any, wants: list[tuple[Any, int]]) -> list[int]:
        asked.extend(wanted for _, wanted in wants)
        return take(cache, wants)

    monkeypatch.setattr(throttling, "_take_redis", spy)
    return asked


def test_frames_take_leases_and_are_refused_at_the_limit(
    budget: Any, round_trips: list[int], user: Any
) -> None:
    budget("300/min")  # a lease is 3 frames
    waits = [throttling.account_wait(user.pk) for _ in range(301)]
    assert waits[:300] == [None] * 300
    assert waits[300] is not None and 0 < waits[300] <= 60
    assert round_trips == [3] * 101  # one a lease, and the refused frame's


def test_a_lease_counts_in_redis_at_once_so_rest_sees_it(
    budget: Any, token_client: Callable[..., Any], user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget("6/min")
    monkeypatch.setattr(throttling, "LEASE_SHARE", 2)  # a lease is 3 requests
    assert throttling.account_wait(user.pk) is None  # takes 3
    api = token_client(user)
    assert [api.get("/api/v1/auth/me/").status_code for _ in range(4)] == [200] * 3 + [429]
    # The lease's two other frames are still this process's to use; then none is left.
    assert [throttling.account_wait(user.pk), throttling.account_wait(user.pk)] == [None, None]
    assert throttling.account_wait(user.pk) is not None


def test_two_processes_never_admit_more_than_the_budget(
    budget: Any, token_client: Callable[..., Any], user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget("1000/min")  # a lease is 10 frames
    tables: list[dict[int, Any]] = [{}, {}]  # each process's leases
    admitted = 0
    for turn in range(1200):
        monkeypatch.setattr(throttling, "_leases", tables[turn % 2])
        admitted += throttling.account_wait(user.pk) is None
    assert admitted == 1000
    assert token_client(user).get("/api/v1/auth/me/").status_code == 429


def test_a_lease_ends_with_its_window(budget: Any, round_trips: list[int], user: Any) -> None:
    budget("300/s")  # a lease is 3 frames of a one-second window
    assert throttling.account_wait(user.pk) is None
    assert throttling.account_wait(user.pk) is None
    assert round_trips == [3]
    time.sleep(1.05)
    assert throttling.account_wait(user.pk) is None
    assert round_trips == [3, 3]  # the lease's last frame was not used in the new window
