"""One error envelope for every API error: ``{"error": {"code", "message", "details"}}``.

Service and engine errors keep their codes, and their HTTP statuses are set here
(``STATUSES``): the domain knows nothing of HTTP. DRF's own errors use DRF's
default codes (``not_authenticated``, ``throttled``, ...) and validation errors
``validation_error`` with the field messages in ``details``.
"""

from __future__ import annotations

import logging
import math
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponseBase
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import APIView

from api.negotiation import JSON
from core import errors as domain
from core.db import pool_sweep
from games.engine import EngineError, GameOverError

logger = logging.getLogger(__name__)

#: Seconds a client is asked to wait after the database was unreachable (``Retry-After``).
UNAVAILABLE_RETRY_AFTER = 1


#: HTTP status of each service and engine error; an error without an entry of its own
#: takes its nearest base class's (``bad_ply`` is a ``stale_ply``, ``day_over`` a
#: ``game_finished``).
STATUSES: dict[type[Exception], int] = {
    domain.ServiceError: 400,
    domain.InvalidInput: 400,
    domain.NotFound: 404,
    domain.StalePly: 409,
    domain.GameFinished: 409,
    domain.UndoNotAllowed: 409,
    domain.HintNotAllowed: 409,
    domain.HintInProgress: 429,
    domain.NoCertifiedDeal: 503,
    domain.HintBusy: 503,
    domain.HintTimeout: 503,
    domain.HintUnavailable: 503,
    domain.DailyNotReady: 503,
    domain.GameNotFinished: 409,
    domain.DayNotOver: 409,
    domain.RaceNotStarted: 409,
    domain.RaceOver: 409,
    domain.AlreadyRacing: 409,
    domain.RaceFull: 409,
    domain.RaceStarted: 409,
    domain.TooFewPlayers: 409,
    domain.NotRaceCreator: 403,
    domain.RaceNotFinished: 409,
    domain.RacePoolEmpty: 503,
    domain.RaceLimit: 429,
    domain.GuestLimit: 429,
    domain.GuestNotAllowed: 403,
    domain.Unavailable: 503,
    domain.NotReady: 503,
    EngineError: 400,
    GameOverError: 409,
}


def error_status(exc: Exception) -> int:
    """HTTP status for a service or engine error (500 for anything else)."""
    for cls in type(exc).__mro__:
        if cls in STATUSES:
            return STATUSES[cls]
    return 500


def database_unavailable(exc: Exception) -> bool:
    """Whether ``exc`` is a lost or refused database connection (a hiccup, not a bug).

    The connection is not reused: Django closes a connection that had an error at
    the end of the request, and psycopg's pool discards a broken one.
    """
    return isinstance(exc, OperationalError | InterfaceError)


def envelope(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """The error body shared by REST and WebSocket."""
    return {"error": {"code": code, "message": message, "details": details or {}}}


_Response = TypeVar("_Response", bound=HttpResponseBase)


def mark_unavailable(response: _Response) -> _Response:
    """Mark a 503 as the answer to a lost database connection: a read may be tried again."""
    response["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER)
    response.database_unavailable = True  # type: ignore[attr-defined]
    return response


def error_payload(exc: Exception) -> tuple[int, dict[str, Any]] | None:
    """Status and envelope for a known error, None for an unexpected one."""
    if isinstance(exc, domain.ServiceError | EngineError):
        details = dict(getattr(exc, "details", {}) or {})
        if hasattr(exc, "index"):
            details["index"] = exc.index
        return error_status(exc), envelope(exc.code, str(exc), details)
    if isinstance(exc, Http404):
        return 404, envelope("not_found", "not found")
    if isinstance(exc, PermissionDenied):
        return 403, envelope("permission_denied", "permission denied")
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return 413, envelope("request_too_large", f"the request body is over {limit} bytes")
    if database_unavailable(exc):
        logger.warning("database unavailable: %s", exc)
        pool_sweep()
        message = "the service is briefly unavailable: try again"
        return 503, envelope("unavailable", message, {"retry_after": UNAVAILABLE_RETRY_AFTER})
    if isinstance(exc, exceptions.ValidationError):
        return 400, envelope("validation_error", "the request is not valid", exc.detail)
    if isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
        wait = getattr(exc, "wait", None)  # throttled: when the window lets it through
        retry = {"retry_after": math.ceil(wait)} if wait is not None else None
        return exc.status_code, envelope(code, str(exc.detail), retry)
    return None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF exception handler: every error, expected or not, as the envelope."""
    payload = error_payload(exc)
    if payload is None:
        logger.exception("unhandled error in %s", context.get("view"), exc_info=exc)
        payload = (500, envelope("server_error", "internal server error"))
    code, body = payload
    headers = {}
    details = body["error"]["details"]
    retry_after = details.get("retry_after") if isinstance(details, dict) else None
    if isinstance(retry_after, int | float):  # throttled, hint_busy, unavailable, ...
        # One retry hint, in the body (sockets too) and in the header (HTTP's own).
        headers["Retry-After"] = str(math.ceil(retry_after))
    if isinstance(exc, exceptions.APIException):
        auth_header = getattr(exc, "auth_header", None)
        if auth_header:
            headers["WWW-Authenticate"] = auth_header
    response = Response(body, status=code, headers=headers)
    request = context.get("request")
    if request is not None:  # the envelope is JSON, even from a view that renders HTML
        request.accepted_renderer, request.accepted_media_type = JSON, JSON.media_type
    return mark_unavailable(response) if database_unavailable(exc) else response


class NotFoundView(APIView):
    """Catch-all under /api/v1/: unknown paths answer with the envelope, not HTML."""

    authentication_classes: list = []
    permission_classes: list = []
    throttle_classes: list = []
    schema = None

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        # What APIView.dispatch sets up before finalize_response can render.
        self.args, self.kwargs = args, kwargs
        self.request = drf_request = self.initialize_request(request, *args, **kwargs)
        self.headers = self.default_response_headers
        response = Response(
            envelope("not_found", f"no API endpoint at {drf_request.path}"),
            status=status.HTTP_404_NOT_FOUND,
        )
        self.response = self.finalize_response(drf_request, response, *args, **kwargs)
        return self.response
