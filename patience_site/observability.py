"""What an operator sees of a running server: the metrics scrape, one log line per HTTP
request and per socket session, and the request id that ties them to the answer.

- ``ObservedMiddleware`` (first of ``MIDDLEWARE``) gives each request its id
  (``core.tracing``), returns it as ``X-Request-ID``, counts the answer by route and
  status class and logs one line (logger ``patience.request``). It answers ``/metrics``
  itself, before Django's host check: Prometheus scrapes each process at its own address.
- ``SocketSessions`` wraps every WebSocket: the open sockets gauge and one line per
  session (logger ``patience.socket``).

A log line carries no header but the request id, and a path without its query (a socket
may carry ``?token=``): no token, password, cookie or ``Authorization`` reaches the logs.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.functional import empty

from core import metrics, tracing
from games import gauges

logger = logging.getLogger("patience.request")
socket_logger = logging.getLogger("patience.socket")

METRICS_PATH = "/metrics"
#: Socket kinds by path prefix, for the open sockets gauge.
SOCKET_KINDS = {"/ws/v1/games/": "game", "/ws/v1/daily/": "daily", "/ws/v1/races/": "race"}


def metrics_response(request: HttpRequest) -> HttpResponse:
    """The scrape, for a bearer of ``METRICS_TOKEN``; 404 while none is set (no endpoint)."""
    token = settings.METRICS_TOKEN
    if not token:
        return HttpResponse("not found", status=404, content_type="text/plain")
    presented = request.headers.get("Authorization", "").encode()
    if not hmac.compare_digest(presented, f"Bearer {token}".encode()):
        response = HttpResponse("a bearer token is needed", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    gauges.gauges_refresh()
    body, content_type = metrics.exposition()
    return HttpResponse(body, content_type=content_type)


def _user_id(request: HttpRequest) -> int | None:
    """The signed-in user's id if the request looked them up (never a lookup of its own)."""
    user = request.__dict__.get("user")
    user = getattr(user, "_wrapped", user)  # Django's lazy user, unless evaluated
    if user is None or user is empty or not user.is_authenticated:
        return None
    return int(user.pk)


class ObservedMiddleware:
    """Request id, HTTP metrics and the request's log line (module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        # META, not request.headers: that builds a mapping of every header on each request.
        request_id = tracing.request_id_from(request.META.get("HTTP_X_REQUEST_ID"))
        reset = tracing.request_id.set(request_id)
        request.request_id = request_id  # type: ignore[attr-defined]  # for Django's own records
        start = time.perf_counter()
        try:
            if request.path == METRICS_PATH:
                response: HttpResponseBase = metrics_response(request)
            else:
                response = self.get_response(request)
            match = request.resolver_match
            route = match.route if match is not None else "unmatched"
            metrics.http_response_count(route, response.status_code)
            response["X-Request-ID"] = request_id
            status = response.status_code
            logger.log(
                logging.ERROR if status >= 500 else logging.INFO,
                "%s %s %s",
                request.method,
                request.path,
                status,
                extra={
                    "method": request.method,
                    "path": request.path,
                    "route": route,
                    "status": status,
                    "duration_ms": round((time.perf_counter() - start) * 1000, 2),
                    "user_id": _user_id(request),
                },
            )
            return response
        finally:
            tracing.request_id.reset(reset)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class _Session:
    """What a socket session's log line tells."""

    accepted: bool = False
    code: int | None = None
    received: int = 0
    sent: int = 0


class SocketSessions:
    """ASGI wrapper of the WebSocket application: the open sockets gauge, and one log line
    per session with its request id, kind, frames each way, close code and duration."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        kind = next((k for p, k in SOCKET_KINDS.items() if path.startswith(p)), "other")
        request_id = tracing.request_id_from(_header(scope, b"x-request-id"))
        reset = tracing.request_id.set(request_id)
        seen = _Session()

        async def observed_receive() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "websocket.receive":
                seen.received += 1
            elif message["type"] == "websocket.disconnect" and seen.code is None:
                seen.code = message.get("code")
            return message

        async def observed_send(message: dict[str, Any]) -> None:
            if message["type"] == "websocket.accept":
                seen.accepted = True
                metrics.OPEN_SOCKETS.labels(kind).inc()
            elif message["type"] == "websocket.send":
                seen.sent += 1
            elif message["type"] == "websocket.close" and seen.code is None:
                seen.code = message.get("code", 1000)
            await send(message)

        start = time.perf_counter()
        try:
            await self.inner(scope, observed_receive, observed_send)
        finally:
            if seen.accepted:
                metrics.OPEN_SOCKETS.labels(kind).dec()
            socket_logger.info(
                "socket %s closed %s",
                path,
                seen.code,
                extra={
                    "path": path,
                    "kind": kind,
                    "accepted": seen.accepted,
                    "close_code": seen.code,
                    "frames_received": seen.received,
                    "frames_sent": seen.sent,
                    "duration_ms": round((time.perf_counter() - start) * 1000, 2),
                },
            )
            tracing.request_id.reset(reset)
