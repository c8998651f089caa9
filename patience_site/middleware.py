"""Site-wide middleware: a lost database connection is a 503 on every page, not a 500."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from api.errors import UNAVAILABLE_RETRY_AFTER, database_unavailable


class DatabaseUnavailableMiddleware:
    """Pages and the admin answer 503 with ``Retry-After`` when the database drops away.

    The API's views answer the same case themselves (``unavailable`` in the error
    envelope, ``api.errors``); this covers the views outside DRF.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not database_unavailable(exception):
            return None
        response = HttpResponse(
            "The service is briefly unavailable: try again in a moment.",
            status=503,
            content_type="text/plain; charset=utf-8",
        )
        response["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER)
        return response
