"""Reads of the leaderboards: a day's board page with exact ranks, all-time boards and
a player's record (ranks come from ``games.boards``, the Redis mirror or PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, timedelta
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import connection
from django.db.models import F, Field, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core import clock
from games.boards import board_size, rank_of
from games.models import ALLTIME_KEYS, Deal, PlayerStats, Result


@cache
def _board_sql() -> dict[str, str]:
    """My line and my neighbours on a day's board as plain SQL, one statement each.

    They are among the hottest reads of the service, and building them with the
    ORM cost more than running them (figures in bench/README.md, bench/leaderboard.py).
    Columns: those of ``day_board_lines``, as ``api.shapes.BoardEntrySerializer`` reads
    them (rank aside).
    """
    User = get_user_model()
    q = connection.ops.quote_name
    result, users = q(Result._meta.db_table), q(User._meta.db_table)
    username, pk = User._meta.get_field(User.USERNAME_FIELD), User._meta.pk
    assert isinstance(username, Field) and username.column and pk.column, "concrete fields"
    name = q(username.column)
    line = (
        f"r.id AS result_id, u.{name} AS player_name, r.won, r.cards_home, r.moves, r.time_ms, "
        "r.finished_at, r.sort_key, r.player_id"
    )
    board = (
        f"FROM {result} r JOIN {users} u ON u.{q(pk.column)} = r.player_id "
        "WHERE r.deal_id = %s AND NOT r.disqualified"
    )
    keys = f"SELECT sort_key FROM {result} WHERE deal_id = %s AND NOT disqualified"
    mine = f"({keys} AND player_id = %s)"
    return {
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
    """A result's board line (for ``api.shapes.board_line``), ranked now; None if it is
    not on the board (disqualified since)."""
    with connection.cursor() as cursor:
        cursor.execute(_board_sql()["one"], [result.deal_id, result.pk])
        lines = _lines(cursor)
    if not lines:
        return None
    return {**lines[0], "rank": rank_of(result.deal_id, result.sort_key)}


#: A day's board in rank order: ``sort_key`` is unique (``games.standings``), and a
#: result's key never changes, so a cursor page neither repeats nor skips a line while
#: results arrive (a disqualified result leaves the board).
DAY_BOARD_ORDER = ("sort_key",)


def day_board_lines(deal: Deal) -> QuerySet[Result, Any]:
    """A day's board lines (``DAY_BOARD_ORDER``), unranked: page them, then ``ranked``.

    An index range scan on (deal, sort_key) from the cursor on.
    """
    User = get_user_model()
    return (
        Result.objects.filter(deal=deal, disqualified=False)
        .order_by(*DAY_BOARD_ORDER)
        .values(
            "won",
            "cards_home",
            "moves",
            "time_ms",
            "finished_at",
            "sort_key",
            "player_id",
            result_id=F("id"),
            player_name=F(f"player__{User.USERNAME_FIELD}"),
        )
    )


def ranked(deal: Deal, lines: list[dict[str, Any]], *, first: bool) -> list[dict[str, Any]]:
    """A page of ``day_board_lines`` with ranks: from 1 on the board's first page, else from
    the first line's rank (one O(log n) lookup with Redis)."""
    if not lines:
        return []
    top = 1 if first else rank_of(deal.pk, lines[0]["sort_key"])
    return [{**line, "rank": top + i} for i, line in enumerate(lines)]


def day_board_me(
    *, deal: Deal, user: AbstractBaseUser | AnonymousUser | None = None, around: int = 3
) -> dict[str, Any]:
    """What a page of a day's board carries besides its lines: the board's size, my line
    and up to ``around`` neighbours each side of it (none if I have no line).

    One SQL statement and, with Redis, two O(log n) rank/size lookups.
    """
    near: list[dict[str, Any]] = []
    if user is not None and user.is_authenticated:
        sql = _board_sql()
        with connection.cursor() as cursor:
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
    data: dict[str, Any] = {"total": board_size(deal), "me": None, "around": []}
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


#: An all-time board from its top: its key (``games.models.alltime_key``) descending.
#: The key is unique, but not fixed: a row moves when its player wins a day, so a walk
#: over pages may meet a player twice, or miss one, that moved meanwhile.
ALLTIME_ORDER = ("-board_key",)


def alltime_board(*, variant: str, order: str) -> QuerySet[PlayerStats]:
    """A variant's all-time board by days won, best streak or current streak
    (``ALLTIME_ORDER``): page it, then ``alltime_ranked``.

    A board lists the players with something to rank by, at least one day won (a live
    streak for the current-streak board): ranking everyone who ever played would fill it
    with ties at zero. A player's own record (``stats_of_player``) shows every variant
    played, won or not; docs/daily.md says so to readers of the boards."""
    qs = PlayerStats.objects.filter(variant=variant).select_related("player")
    if order == "days_won":
        qs = qs.filter(won__gt=0)
    elif order == "best_streak":
        qs = qs.filter(best_streak__gt=0)
    else:
        qs = qs.filter(streak__gt=0, last_won__gte=clock.today() - timedelta(days=1))
    return qs.annotate(board_key=ALLTIME_KEYS[order]).order_by(*ALLTIME_ORDER)


def alltime_ranked(
    board: QuerySet[PlayerStats], page: list[PlayerStats], *, first: bool
) -> list[tuple[PlayerStats, int]]:
    """A page of ``alltime_board`` with ranks (places on the board, ties apart): from 1 on
    its first page, else one more than the rows above the page (an index range count)."""
    if not page:
        return []
    top = 1
    if not first:
        key = page[0].board_key  # type: ignore[attr-defined]  # annotated by alltime_board
        top += board.filter(board_key__gt=key).count()  # type: ignore[misc]
    return [(stats, top + i) for i, stats in enumerate(page)]


def stats_of_player(*, user: User) -> list[PlayerStats]:
    """A player's daily record per variant, with each best result and its deal."""
    return list(PlayerStats.objects.filter(player=user).select_related("best_result__deal"))
