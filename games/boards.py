"""Leaderboards: a day's board with exact ranks, all-time boards, player records.

PostgreSQL is the truth. Counting the rows ahead of a deep result is too slow
for a board of a million results, so when ``REDIS_URL`` is set each day's board
is mirrored in a Redis sorted set of ``Result.sort_key`` strings (all with score
0, so Redis orders them by the key's bytes, the board's order) and ranks come
from ``ZRANK`` in O(log n). The set is rebuilt from PostgreSQL whenever it is
missing; a sentinel member ``""`` (which sorts first) marks a built board, so
a result added to a board that is not built yet is dropped rather than
creating a partial board, and the rank of a key is simply its ``ZRANK``.
Without Redis, or while it fails (``games.redis_guard``), ranks are counted
in PostgreSQL. A mirror that missed an update while Redis failed is dropped
once Redis answers again, and so rebuilt from PostgreSQL: no result goes
missing from it and no two results share a rank.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from datetime import UTC, timedelta
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from games import clock
from games.models import Deal, PlayerStats, Result
from games.redis_guard import RedisUnavailable, guarded, on_recovery

logger = logging.getLogger(__name__)

SENTINEL = ""
REBUILD_CHUNK = 20_000
_ADD = (
    "if redis.call('EXISTS', KEYS[1]) == 1 then "
    "return redis.call('ZADD', KEYS[1], 0, ARGV[1]) end return -1"
)


@cache
def _client() -> Any:
    if not settings.REDIS_URL:
        return None
    import redis

    timeout = settings.REDIS_TIMEOUT
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=timeout, socket_connect_timeout=timeout
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


def entry(result: Result, rank: int) -> dict[str, Any]:
    """One line of a day's board."""
    return {
        "rank": rank,
        "result_id": result.pk,
        "player": result.player.get_username(),
        "won": result.won,
        "cards_home": result.cards_home,
        "moves": result.moves,
        "time_ms": result.time_ms,
        "finished_at": result.finished_at,
    }


@cache
def _board_sql() -> dict[str, str]:
    """The day board's reads as plain SQL, one statement each.

    They are the hottest reads of the service, and building them with the ORM
    cost more than running them (about 1 ms per query on the benchmark machine,
    see bench/leaderboard.py). Rows: id, username, won, cards_home, moves,
    time_ms, finished_at, sort_key, player_id.
    """
    User = get_user_model()
    q = connection.ops.quote_name
    result, users = q(Result._meta.db_table), q(User._meta.db_table)
    name = q(User._meta.get_field(User.USERNAME_FIELD).column)
    line = (
        f"r.id, u.{name}, r.won, r.cards_home, r.moves, r.time_ms, r.finished_at, "
        "r.sort_key, r.player_id"
    )
    board = (
        f"FROM {result} r JOIN {users} u ON u.{q(User._meta.pk.column)} = r.player_id "
        "WHERE r.deal_id = %s AND NOT r.disqualified"
    )
    keys = f"SELECT sort_key FROM {result} WHERE deal_id = %s AND NOT disqualified"
    mine = f"({keys} AND player_id = %s)"
    return {
        # A page after a cursor ('' is before every key).
        "page": f"SELECT {line} {board} AND r.sort_key > %s ORDER BY r.sort_key LIMIT %s",
        # My line alone.
        "me": f"SELECT {line} {board} AND r.sort_key = {mine}",
        # My line and up to k lines each side: from the k-th key above mine (or the
        # first) to the k-th key below it (or the last). Nothing if I have no line.
        "near": (
            f"SELECT {line} {board} "
            f"AND r.sort_key >= COALESCE(({keys} AND sort_key < {mine} "
            "ORDER BY sort_key DESC LIMIT 1 OFFSET %s), '') "
            f"AND r.sort_key <= COALESCE(({keys} AND sort_key > {mine} "
            "ORDER BY sort_key LIMIT 1 OFFSET %s), "
            f"({keys.replace('SELECT sort_key', 'SELECT max(sort_key)')} "
            f"AND sort_key >= {mine})) "
            "ORDER BY r.sort_key LIMIT %s"
        ),
    }


def _line(row: tuple[Any, ...], rank: int) -> dict[str, Any]:
    """A board line (as ``entry``) from a row of ``_board_sql``."""
    finished = row[6]
    if isinstance(finished, str):  # SQLite without a declared type
        finished = parse_datetime(finished)
    if timezone.is_naive(finished):
        finished = timezone.make_aware(finished, UTC)
    return {
        "rank": rank,
        "result_id": row[0],
        "player": row[1],
        "won": bool(row[2]),
        "cards_home": row[3],
        "moves": row[4],
        "time_ms": row[5],
        "finished_at": finished,
    }


def day_board(
    *,
    deal: Deal,
    user: AbstractBaseUser | None = None,
    limit: int = 50,
    after: str | None = None,
    around: int = 3,
) -> dict[str, Any]:
    """A page of a day's board (keyset paging by sort key), my line and my neighbours.

    Two SQL statements (the page; my line with its neighbours) and, with Redis,
    two O(log n) rank/size lookups.
    """
    sql = _board_sql()
    near: list[tuple[Any, ...]] = []
    with connection.cursor() as cursor:
        cursor.execute(sql["page"], [deal.pk, after or "", limit + 1])
        rows = cursor.fetchall()
        if user is not None and user.is_authenticated:
            if around:
                cursor.execute(
                    sql["near"],
                    [deal.pk, deal.pk, deal.pk, user.pk, around - 1]
                    + [deal.pk, deal.pk, user.pk, around - 1]
                    + [deal.pk, deal.pk, user.pk, 2 * around + 1],
                )
            else:
                cursor.execute(sql["me"], [deal.pk, deal.pk, user.pk])
            near = cursor.fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    first = 1 if not after or not rows else rank_of(deal.pk, rows[0][7])
    data: dict[str, Any] = {
        "total": board_size(deal),
        "results": [_line(r, first + i) for i, r in enumerate(rows)],
        "next": rows[-1][7] if more else None,
        "me": None,
        "around": [],
    }
    at = next((i for i, r in enumerate(near) if r[8] == user.pk), None)
    if at is not None:
        rank = rank_of(deal.pk, near[at][7])
        data["around"] = [_line(r, rank + i - at) for i, r in enumerate(near)]
        data["me"] = data["around"][at]
    return data


ALLTIME_ORDERS = ("days_won", "best_streak", "streak")


def current_streak(stats: PlayerStats) -> int:
    """The run of days won that is still alive (won today or yesterday)."""
    if stats.last_won is None or stats.last_won < clock.today() - timedelta(days=1):
        return 0
    return stats.streak


#: No board is longer; a larger offset is past the end (and too large for the database).
MAX_OFFSET = 2**31 - 1


def alltime_board(*, variant: str, order: str, limit: int, offset: int) -> dict[str, Any]:
    """All-time board of a variant by days won, best streak or current streak."""
    qs = PlayerStats.objects.filter(variant=variant).select_related("player")
    if order == "days_won":
        qs = qs.filter(won__gt=0).order_by("-won", "-best_streak", "player_id")
    elif order == "best_streak":
        qs = qs.filter(best_streak__gt=0).order_by("-best_streak", "-won", "player_id")
    else:
        qs = qs.filter(streak__gt=0, last_won__gte=clock.today() - timedelta(days=1)).order_by(
            "-streak", "-won", "player_id"
        )
    rows = list(qs[offset : offset + limit + 1]) if offset <= MAX_OFFSET else []
    return {
        "order": order,
        "results": [
            {
                "rank": offset + i + 1,
                "player": s.player.get_username(),
                "days_won": s.won,
                "played": s.played,
                "best_streak": s.best_streak,
                "current_streak": current_streak(s),
            }
            for i, s in enumerate(rows[:limit])
        ],
        "next_offset": offset + limit if len(rows) > limit else None,
    }


def player_record(*, user: AbstractBaseUser) -> dict[str, Any]:
    """A player's daily record per variant: played, won, win rate, streaks, best result."""
    variants = []
    for s in PlayerStats.objects.filter(player=user).select_related("best_result__deal"):
        best = s.best_result
        variants.append(
            {
                "variant": s.variant,
                "played": s.played,
                "won": s.won,
                "win_rate": round(s.won / s.played, 4) if s.played else 0.0,
                "best_streak": s.best_streak,
                "current_streak": current_streak(s),
                "best": None
                if best is None
                else {
                    "date": best.deal.date,
                    "won": best.won,
                    "cards_home": best.cards_home,
                    "moves": best.moves,
                    "time_ms": best.time_ms,
                },
            }
        )
    played = sum(v["played"] for v in variants)
    won = sum(v["won"] for v in variants)
    return {
        "player": user.get_username(),
        "played": played,
        "won": won,
        "win_rate": round(won / played, 4) if played else 0.0,
        "variants": sorted(variants, key=lambda v: v["variant"]),
    }
