"""The admin site, with its log-in limited like the API's (password guessing)."""

from __future__ import annotations

import math
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from api.throttling import login_attempt_wait


class PatienceAdminSite(admin.AdminSite):
    """Django's admin site; a log-in attempt beyond the budget is refused with 429.

    Attempts count on the same per-address budget as the API's log-in and
    registration (``THROTTLE_RATE_AUTH``), in Redis, so across server processes.
    """

    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        if request.method == "POST":
            wait = login_attempt_wait(request)
            if wait is not None:
                response = HttpResponse(
                    "Too many log-in attempts: try again later.",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(math.ceil(wait))
                return response
        return super().login(request, extra_context)
