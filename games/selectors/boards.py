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
    username, pk = User._meta.get_field(User.USERNAME_FIELD), User._meta.pk
    assert isinstance(username, Field) and username.column and pk.column, "concrete fields"
    name = q(username.column)
    line = (
        f"r.id, u.{name}, r.won, r.cards_home, r.moves, r.time_ms, r.finished_at, "
        "r.sort_key, r.player_id"
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
    at = next((i for i, r in enumerate(near) if user is not None and r[8] == user.pk), None)
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


def player_record(*, user: User) -> dict[str, Any]:
    """A player's daily record per variant: played, won, win rate, streaks, best result."""
    variants: list[dict[str, Any]] = []
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
