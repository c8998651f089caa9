"""Django's HTTP handler for daphne, run the way a threaded WSGI server runs it.

The views are synchronous (DRF), so the middleware chain is built in sync mode
and the chain with the view runs in one hop on the fixed HTTP threads of
``api.threads``, which keep their database connection between requests. With
Django's stock ``ASGIHandler`` a request costs a new thread plus two thread hops
per middleware: 2.5 times the CPU of this handler for an empty view on the
development machine (see bench/README.md).
"""

from __future__ import annotations

from typing import Any

from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase

from api.threads import http_runner


class ThreadPoolASGIHandler(ASGIHandler):
    """``ASGIHandler`` with a sync middleware chain run on a fixed pool of threads."""

    def __init__(self) -> None:
        # Not ASGIHandler.__init__: it would build the chain in async mode first.
        self.load_middleware(is_async=False)
        self._run = http_runner()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        # No ThreadSensitiveContext (a new thread per request): nothing here needs it.
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        await self.handle(scope, receive, send)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await self._run(self.get_response, request)
