"""Leaderboards: a day's board with exact ranks, all-time boards, player records.

PostgreSQL is the truth. Counting the rows ahead of a deep result is too slow
for a board of a million results, so when ``REDIS_URL`` is set each day's board
is mirrored in a Redis sorted set of ``Result.sort_key`` strings (all with score
0, so Redis orders them by the key's bytes, the board's order) and ranks come
from ``ZRANK`` in O(log n). The set is rebuilt from PostgreSQL whenever it is
missing; a sentinel member ``""`` (which sorts first) marks a built board, so
a result added to a board that is not built yet is dropped rather than
creating a partial board, and the rank of a key is simply its ``ZRANK``.
Without Redis, or while it fails (``core.redis_guard``), ranks are counted
in PostgreSQL. A mirror that missed an update while Redis failed is dropped
once Redis answers again, and so rebuilt from PostgreSQL: no result goes
missing from it and no two results share a rank.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from core import clock
from core.redis_guard import RedisUnavailable, guarded, on_recovery
from core.redis_guard import client as _client
from games.models import Deal, Result

logger = logging.getLogger(__name__)

SENTINEL = ""
REBUILD_CHUNK = 20_000
_ADD = (
    "if redis.call('EXISTS', KEYS[1]) == 1 then "
    "return redis.call('ZADD', KEYS[1], 0, ARGV[1]) end return -1"
)


def _key(deal_id: int) -> str:
    return f"{settings.REDIS_PREFIX}:board:{deal_id}"


def counted(deal: Deal | int) -> QuerySet[Result]:
    """The results that stand on a day's board, in board order."""
    return Result.objects.filter(deal=deal, disqualified=False).order_by("sort_key")


#: Boards of this process whose mirror missed an update while Redis failed: dropped
#: (so rebuilt from PostgreSQL) before their mirror is read again.
_stale: set[int] = set()


def _mirror_update(deal_id: int, update: Callable[[Any], Any]) -> None:
    client = _client()
    if client is None:
        return
    try:
        guarded(update, client)
    except RedisUnavailable:
        # The mirror may now lack (or keep) this result: it is rebuilt once Redis answers.
        logger.warning("board %s: mirror not updated; rebuilt when Redis is back", deal_id)
        _stale.add(deal_id)


def board_add(deal_id: int, key: str) -> None:
    """Mirror a new or restored result in Redis (called after commit)."""
    _mirror_update(deal_id, lambda client: client.eval(_ADD, 1, _key(deal_id), key))


def board_remove(deal_id: int, key: str) -> None:
    """Remove a result from the Redis mirror (called after commit)."""
    _mirror_update(deal_id, lambda client: client.zrem(_key(deal_id), key))


def board_drop(deal_id: int) -> None:
    """Forget the mirror of a board; the next rank query rebuilds it."""
    _mirror_update(deal_id, lambda client: client.delete(_key(deal_id)))


def _drop_stale() -> None:
    """Drop the mirrors that missed updates (they are rebuilt from PostgreSQL on next use)."""
    client = _client()
    for deal_id in list(_stale):
        if client is not None:
            guarded(client.delete, _key(deal_id))
        _stale.discard(deal_id)


on_recovery(_drop_stale)


def boards_reconcile() -> list[int]:
    """Drop each mirror of today's and yesterday's boards whose size differs from PostgreSQL.

    Catches what no process remembers (one that died between a commit and its
    mirror update); returns the ids of the boards dropped, which are rebuilt
    on their next read. Run by ``create_dailies``.
    """
    client = _client()
    if client is None:
        return []
    today = clock.today()
    deals = Deal.objects.filter(
        kind=Deal.Kind.DAILY, date__gte=today - timedelta(days=1), date__lte=today
    )
    dropped = []
    for deal in deals:
        size = guarded(client.zcard, _key(deal.pk))
        if size and size - 1 != counted(deal).count():
            guarded(client.delete, _key(deal.pk))
            dropped.append(deal.pk)
    return dropped


def board_rebuild(deal_id: int) -> bool:
    """Rebuild a board's mirror from PostgreSQL; False if another process is at it."""
    client = _client()
    lock = client.lock(f"{_key(deal_id)}:lock", timeout=120, blocking=False)
    if not lock.acquire():
        return False
    try:
        started = clock.now()
        tmp = f"{_key(deal_id)}:build:{uuid.uuid4().hex}"
        client.zadd(tmp, {SENTINEL: 0})
        batch: dict[str, int] = {}
        for key in counted(deal_id).values_list("sort_key", flat=True).iterator(REBUILD_CHUNK):
            batch[key] = 0
            if len(batch) >= REBUILD_CHUNK:
                client.zadd(tmp, batch)
                batch = {}
        if batch:
            client.zadd(tmp, batch)
        client.rename(tmp, _key(deal_id))
        # Results committed while we read were added to no board: add them now.
        late = counted(deal_id).filter(finished_at__gte=started - timedelta(seconds=30))
        late_keys = list(late.values_list("sort_key", flat=True))
        if late_keys:
            client.zadd(_key(deal_id), dict.fromkeys(late_keys, 0))
        return True
    finally:
        lock.release()


def _rank_in_database(deal_id: int, key: str) -> int:
    return counted(deal_id).filter(sort_key__lt=key).count() + 1


def _fresh(client: Any, deal_id: int) -> None:
    """Drop this board's mirror first if it missed an update."""
    if deal_id in _stale:
        client.delete(_key(deal_id))
        _stale.discard(deal_id)


def _rank_in_mirror(client: Any, deal_id: int, key: str) -> int:
    _fresh(client, deal_id)
    rank = client.zrank(_key(deal_id), key)
    if rank is None and (client.exists(_key(deal_id)) or not board_rebuild(deal_id)):
        return _rank_in_database(deal_id, key)
    if rank is None:
        rank = client.zrank(_key(deal_id), key)
    if rank is None:
        return _rank_in_database(deal_id, key)
    return int(rank)


def rank_of(deal_id: int, key: str) -> int:
    """1-based rank of a counted result on its day's board."""
    client = _client()
    if client is None:
        return _rank_in_database(deal_id, key)
    try:
        return guarded(_rank_in_mirror, client, deal_id, key)
    except RedisUnavailable:
        return _rank_in_database(deal_id, key)


def _size_in_mirror(client: Any, deal_id: int) -> int | None:
    _fresh(client, deal_id)
    size = client.zcard(_key(deal_id))
    if not size and board_rebuild(deal_id):  # not counting a big board per request
        size = client.zcard(_key(deal_id))
    return int(size) - 1 if size else None


def board_size(deal: Deal) -> int:
    """Results on a day's board."""
    client = _client()
    if client is not None:
        try:
            size = guarded(_size_in_mirror, client, deal.pk)
        except RedisUnavailable:
            size = None
        if size is not None:
            return size
    return counted(deal).count()
