"""Caps counted by one row each (games.services.caps): exact under bursts, windowed."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import transaction

from core import clock
from games.models import CapCount
from games.services.caps import KEEP, cap_take, caps_purge

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


def test_a_cap_takes_its_limit_then_tells_the_wait_until_its_window_ends() -> None:
    assert [cap_take(key="k", limit=3, window=HOUR) for _ in range(3)] == [None] * 3
    with time_machine.travel(clock.now() + timedelta(minutes=20), tick=False):
        wait = cap_take(key="k", limit=3, window=HOUR)
    assert wait is not None and 39 * 60 <= wait <= 40 * 60
    assert cap_take(key="other", limit=3, window=HOUR) is None  # keys apart
    assert CapCount.objects.get(key="k").used == 3  # a refusal takes nothing


def test_a_new_window_opens_once_the_last_has_passed() -> None:
    for _ in range(2):
        cap_take(key="k", limit=2, window=HOUR)
    assert cap_take(key="k", limit=2, window=HOUR) is not None
    with time_machine.travel(clock.now() + HOUR + timedelta(seconds=1)):
        assert cap_take(key="k", limit=2, window=HOUR) is None
        assert cap_take(key="k", limit=2, window=HOUR) is None
        assert cap_take(key="k", limit=2, window=HOUR) is not None


def test_a_use_in_a_transaction_that_rolls_back_is_given_back() -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        cap_take(key="k", limit=1, window=HOUR)
        raise RuntimeError("the action failed")
    assert cap_take(key="k", limit=1, window=HOUR) is None


def test_counts_past_their_window_are_purged() -> None:
    cap_take(key="old", limit=1, window=HOUR)
    with time_machine.travel(clock.now() + KEEP + timedelta(minutes=1)):
        cap_take(key="new", limit=1, window=HOUR)
        assert caps_purge() == 1
    assert list(CapCount.objects.values_list("key", flat=True)) == ["new"]
