"""Pages of the leaderboards read in process, as the REST doors page them (no HTTP): for
the tests and bench/leaderboard.py, which measure and check the reads, not the server."""

from __future__ import annotations

from typing import Any

from rest_framework.pagination import Cursor
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from api import shapes
from api.daily import board_page
from api.pagination import CursorPage
from games.models import Deal
from games.selectors import boards as board_selectors


def _request(url: str | None, limit: int, after: str | None) -> Request:
    """The request of the page at ``url`` (a page's link), else of the first ``limit`` rows
    after the row whose cursor position is ``after`` (or the first ones). DRF's stubs type
    a position as an int; it is any field's value as a string."""
    if url is None:
        url = f"http://testserver/board/?limit={limit}"
        if after is not None:
            paginator = CursorPage()
            paginator.base_url = url
            cursor = Cursor(offset=0, reverse=False, position=after)  # type: ignore[arg-type]
            url = paginator.encode_cursor(cursor)
    return Request(APIRequestFactory().get(url))


def day_board(
    *,
    deal: Deal,
    user: Any = None,
    limit: int = 50,
    after: str | None = None,
    around: int = 3,
    url: str | None = None,
) -> dict[str, Any]:
    """A page of a day's board as ``GET daily/{variant}/{day}/board/`` answers it: the page
    at ``url``, else the first ``limit`` lines after the line whose sort key is ``after``,
    with ``user``'s line and neighbours."""
    return board_page(
        CursorPage(), _request(url, limit, after), deal=deal, user=user, around=around
    )


def alltime_board(*, variant: str, order: str, limit: int = 50) -> list[dict[str, Any]]:
    """The top ``limit`` lines of an all-time board, as ``GET leaderboards/{variant}/``
    renders them."""
    board = board_selectors.alltime_board(variant=variant, order=order)
    paginator = CursorPage()
    paginator.ordering = board_selectors.ALLTIME_ORDER
    page = paginator.paginate_queryset(board, _request(None, limit, None))
    assert page is not None  # None only without a page size, and the paginator has one
    return shapes.alltime_lines(board_selectors.alltime_ranked(board, page, first=True))
