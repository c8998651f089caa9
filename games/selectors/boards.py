"""Reads of the leaderboards: a day's board page with exact ranks, all-time boards and
a player's record (ranks come from ``games.boards``, the Redis mirror or PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, timedelta
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import connection
from django.db.models import Field
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from games import clock
from games.boards import board_size, rank_of
from games.models import Deal, PlayerStats, Result


@cache
def _board_sql() -> dict[str, str]:
    """The day board's reads as plain SQL, one statement each.

    They are the hottest reads of the service, and building them with the ORM
    cost more than running them (figures in bench/README.md, bench/leaderboard.py).
    Columns: a board line's fields as ``games.shapes``
    names them (rank aside), then sort_key and player_id.
    """
    User = get_user_model()
    q = connection.ops.quote_name
    result, users = q(Result._meta.db_table), q(User._meta.db_table)
    username, pk = User._meta.get_field(User.USERNAME_FIELD), User._meta.pk
    assert isinstance(username, Field) and username.column and pk.column, "concrete fields"
    name = q(username.column)
    line = (
        f"r.id AS result_id, u.{name} AS player, r.won, r.cards_home, r.moves, r.time_ms, "
        "r.finished_at, r.sort_key, r.player_id"
    )
    board = (
        f"FROM {result} r JOIN {users} u ON u.{q(pk.column)} = r.player_id "
        "WHERE r.deal_id = %s AND NOT r.disqualified"
    )
    keys = f"SELECT sort_key FROM {result} WHERE deal_id = %s AND NOT disqualified"
    mine = f"({keys} AND player_id = %s)"
    return {
        # A page after a cursor ('' is before every key).
        "page": f"SELECT {line} {board} AND r.sort_key > %s ORDER BY r.sort_key LIMIT %s",
        # My line alone.
        "me": f"SELECT {line} {board} AND r.sort_key = {mine}",
        # One result's line.
        "one": f"SELECT {line} {board} AND r.id = %s",
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


def _lines(cursor: Any) -> list[dict[str, Any]]:
    """The rows of a ``_board_sql`` statement by column name, times as aware datetimes."""
    names = [col[0] for col in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    for row in rows:
        finished = row["finished_at"]
        if isinstance(finished, str):  # SQLite without a declared type
            finished = parse_datetime(finished)
        if timezone.is_naive(finished):
            finished = timezone.make_aware(finished, UTC)
        row["finished_at"] = finished
    return rows


def result_line(result: Result) -> dict[str, Any] | None:
    """A result's board line (for ``games.shapes.board_line``), ranked now; None if it is
    not on the board (disqualified since)."""
    with connection.cursor() as cursor:
        cursor.execute(_board_sql()["one"], [result.deal_id, result.pk])
        lines = _lines(cursor)
    if not lines:
        return None
    return {**lines[0], "rank": rank_of(result.deal_id, result.sort_key)}


def day_board(
    *,
    deal: Deal,
    user: AbstractBaseUser | AnonymousUser | None = None,
    limit: int = 50,
    after: str | None = None,
    around: int = 3,
) -> dict[str, Any]:
    """A page of a day's board (keyset paging by sort key), my line and my neighbours.

    Two SQL statements (the page; my line with its neighbours) and, with Redis,
    two O(log n) rank/size lookups.
    """
    sql = _board_sql()
    near: list[dict[str, Any]] = []
    with connection.cursor() as cursor:
        cursor.execute(sql["page"], [deal.pk, after or "", limit + 1])
        rows = _lines(cursor)
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
            near = _lines(cursor)
    more = len(rows) > limit
    rows = rows[:limit]
    first = 1 if not after or not rows else rank_of(deal.pk, rows[0]["sort_key"])
    data: dict[str, Any] = {
        "total": board_size(deal),
        "results": [{**r, "rank": first + i} for i, r in enumerate(rows)],
        "next": rows[-1]["sort_key"] if more else None,
        "me": None,
        "around": [],
    }
    at = next(
        (i for i, r in enumerate(near) if user is not None and r["player_id"] == user.pk), None
    )
    if at is not None:
        rank = rank_of(deal.pk, near[at]["sort_key"])
        data["around"] = [{**r, "rank": rank + i - at} for i, r in enumerate(near)]
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
    """A page of a variant's all-time board by days won, best streak or current streak:
    the keyword arguments of ``games.shapes.alltime_board``."""
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
        "offset": offset,
        "stats": rows[:limit],
        "next_offset": offset + limit if len(rows) > limit else None,
    }


def stats_of_player(*, user: User) -> list[PlayerStats]:
    """A player's daily record per variant, with each best result and its deal."""
    return list(PlayerStats.objects.filter(player=user).select_related("best_result__deal"))
