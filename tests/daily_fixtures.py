"""Fixtures and helpers for the daily-challenge and leaderboard tests.

Test modules load them with ``pytest_plugins = ["tests.daily_fixtures"]`` and
import the helpers, which happens first: PYTEST_DONT_REWRITE (plain asserts here).

- ``daily_clock``: the server's clocks (``core.clock.now`` and ``shared_now``) under
  the test's control.
- ``daily_secret``: a fixed ``DAILY_SECRET``.
- ``isolated_boards`` (every module here uses it): board mirror keys of the test's own.
- ``board_backend``: runs a test twice, with ranks counted in the database
  (``REDIS_URL=""``) and with the Redis mirror. The Redis run uses the
  environment's ``REDIS_URL`` (or a local Redis) and is skipped when none
  answers; its board keys live in a namespace of their own under
  ``patience:board:`` that is deleted afterwards, so tests running at the same
  time never see each other's boards.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from django.db import transaction
from django.test import TestCase

from core import clock
from devtools.boards import day_board as day_board  # re-exported for the tests
from games import boards
from games.engine import Position, Status, get_variant, new_position
from games.engine.record import position_bytes
from games.models import Deal, Game, Result
from games.services.results import result_record

SECRET = "test-daily-secret"
#: The test's "today" and the instant the clock starts at.
DAY = date(2026, 3, 10)
NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
LOCAL_REDIS = "redis://127.0.0.1:6379/0"


class FakeClock:
    """A settable ``core.clock.now`` (and ``shared_now``: one clock in these tests)."""

    def __init__(self, t: datetime) -> None:
        self.t = t

    def __call__(self) -> datetime:
        return self.t

    def set(self, t: datetime) -> datetime:
        self.t = t
        return t

    def advance(self, **delta: float) -> datetime:
        self.t = self.t + timedelta(**delta)
        return self.t

    def next_day(self, days: int = 1) -> datetime:
        """Noon of a later day."""
        return self.set(datetime.combine(self.t.date() + timedelta(days=days), NOON.timetz()))


@pytest.fixture
def daily_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock(NOON)
    monkeypatch.setattr(clock, "now", fake)
    monkeypatch.setattr(clock, "shared_now", fake)
    return fake


@pytest.fixture
def daily_secret(settings: Any) -> str:
    settings.DAILY_SECRET = SECRET
    return SECRET


def _namespace(monkeypatch: pytest.MonkeyPatch) -> str:
    """Give this test's board mirrors keys of their own (under ``patience:board:``)."""
    namespace = f"patience:board:test-{uuid.uuid4().hex}"
    monkeypatch.setattr(boards, "_key", lambda deal_id: f"{namespace}:{deal_id}")
    return namespace


def _delete_namespace(client: Any, namespace: str) -> None:
    keys = list(client.scan_iter(match=f"{namespace}:*"))
    if keys:
        client.delete(*keys)


@pytest.fixture
def isolated_boards(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test module here uses this: when the environment sets ``REDIS_URL``, the
    boards a test builds are its own and are deleted afterwards (deal ids repeat across
    test runs, and other people's tests may use the same Redis at the same time)."""
    cached = boards._client
    cached.cache_clear()
    namespace = _namespace(monkeypatch)
    yield
    cached.cache_clear()
    url = os.environ.get("REDIS_URL")
    if url:
        import redis

        with contextlib.suppress(Exception):  # nothing to clean if Redis is gone
            _delete_namespace(redis.Redis.from_url(url, socket_timeout=2), namespace)


def _use_database(settings: Any) -> None:
    settings.REDIS_URL = ""
    boards._client.cache_clear()


def _use_redis(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    url = os.environ.get("REDIS_URL") or LOCAL_REDIS
    import redis

    try:
        redis.Redis.from_url(url, socket_timeout=1).ping()
    except Exception:  # no Redis here: the database path is still tested
        pytest.skip(f"no Redis at {url}")
    settings.REDIS_URL = url
    cached = boards._client  # the real one, even if a test replaces it
    cached.cache_clear()
    namespace = _namespace(monkeypatch)
    client = boards._client()
    try:
        yield client
    finally:
        _delete_namespace(client, namespace)
        cached.cache_clear()


@pytest.fixture(params=["database", "redis"])
def board_backend(request: pytest.FixtureRequest, settings: Any, monkeypatch: Any) -> Iterator[str]:
    """Ranks from the database, then from the Redis mirror."""
    if request.param == "database":
        _use_database(settings)
        yield "database"
        boards._client.cache_clear()
    else:
        for _ in _use_redis(settings, monkeypatch):
            yield "redis"


@pytest.fixture
def redis_board(settings: Any, monkeypatch: Any) -> Iterator[Any]:
    """The Redis mirror only: yields the Redis client."""
    yield from _use_redis(settings, monkeypatch)


@pytest.fixture
def database_board(settings: Any) -> Iterator[None]:
    """No Redis: ranks are counted in the database."""
    _use_database(settings)
    yield
    boards._client.cache_clear()


# -- helpers ------------------------------------------------------------------------------


def committed(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` and run the on-commit callbacks it queued (board mirror, events)."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return fn(*args, **kwargs)


def daily(variant: str = "bristol", day: date = DAY) -> Deal:
    from games.services.dailies import daily_create

    return daily_create(variant, day)


def finished_result(
    deal: Deal,
    player: Any,
    *,
    won: bool = False,
    cards_home: int | None = None,
    moves: int = 100,
    time_ms: int = 60_000,
    finished_at: datetime | None = None,
) -> Result:
    """A ranked game of ``deal`` that ended with these values (at ``finished_at``, by
    default now), entered through result_record as it would have been then."""
    variant = get_variant(deal.variant)
    if cards_home is None:
        cards_home = variant.card_count if won else 10
    finished_at = finished_at or clock.now()
    start: Position = new_position(deal.variant, seed=int(deal.seed))

    def enter() -> Result:
        # Entered when it finished: the ranked cut-off reads the shared clock then.
        with mock.patch.object(clock, "shared_now", lambda: finished_at), transaction.atomic():
            game = Game.objects.create(
                player=player,
                deal=deal,
                ranked=True,
                status=(Status.WON if won else Status.LOST).value,
                score=cards_home,
                ply=moves,
                started_at=finished_at - timedelta(milliseconds=time_ms),
                finished_at=finished_at,
                position=position_bytes(start),
            )
            result = result_record(game)
            assert result is not None
            return result

    return committed(enter)


def legal(pos: Position) -> list[str]:
    return [str(m) for m in pos.legal_moves]


def quiet_move(pos: Position) -> str | None:
    """A legal move that reveals no stock card (not a deal, no reserve refill)."""
    for m in legal(pos):
        if not m.startswith("deal") and pos.apply(m).stock_count == pos.stock_count:
            return m
    return None


def refill_move(pos: Position) -> str | None:
    """A legal move other than a deal that takes a card from the stock (a reserve refill)."""
    for m in legal(pos):
        if not m.startswith("deal") and pos.apply(m).stock_count < pos.stock_count:
            return m
    return None


def day_where(variant: str, test: Any, *, first: date = DAY, tries: int = 200) -> date:
    """The first day from ``first`` whose daily's start position passes ``test``."""
    from games.services.dailies import daily_seed_derive

    for i in range(tries):
        day = first + timedelta(days=i)
        if test(new_position(variant, seed=daily_seed_derive(variant, day))):
            return day
    raise AssertionError(f"no {variant} daily in {tries} days fits")


def morning(day: date) -> datetime:
    """08:00 UTC of a day."""
    return datetime.combine(day, datetime.min.time(), tzinfo=UTC) + timedelta(hours=8)


def board_order(deal: Deal) -> list[int]:
    """Result ids on a day's board, in rank order, read straight from the database."""
    return list(
        Result.objects.filter(deal=deal, disqualified=False)
        .order_by("sort_key")
        .values_list("pk", flat=True)
    )
