"""Site-wide middleware: a lost database connection is a 503 on every page, not a 500."""

from __future__ import annotations

from collections.abc import Callable

from django.db import connections
from django.http import HttpRequest, HttpResponse

from api.errors import database_unavailable, mark_unavailable
from core.db import pool_sweep
from core.errors import Unavailable

#: Requests that change nothing, so running them again is safe.
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS"})


def _close_dead_connections() -> None:
    """Close (and so hand back to the pool, which drops them) the connections that died."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and not conn.is_usable():
            conn.close()


class DatabaseUnavailableMiddleware:
    """A read that lost its database connection is tried once more on a new one; pages and
    the admin answer 503 with ``Retry-After`` when the database drops away, or when a
    write needs Redis while it is away (``Unavailable``: a token's cache entry).

    The API's views answer the same case themselves (``unavailable`` in the error
    envelope, ``api.errors``); this covers the views outside DRF and the retry of both.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.method in IDEMPOTENT and getattr(response, "database_unavailable", False):
            _close_dead_connections()
            response = self.get_response(request)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not (database_unavailable(exception) or isinstance(exception, Unavailable)):
            return None
        if database_unavailable(exception):
            pool_sweep()
        response = HttpResponse(
            "The service is briefly unavailable: try again in a moment.",
            status=503,
            content_type="text/plain; charset=utf-8",
        )
        return mark_unavailable(response)
