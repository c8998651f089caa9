"""Rate limits per user and per client IP; rates come from settings at call time.

DRF's throttles read their rates once at import, which makes them impossible to
change in tests or per deployment; these look the rate up on every request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

if TYPE_CHECKING:  # rest_framework.views imports the throttles: no runtime import.
    from rest_framework.views import APIView


class _SettingsRateThrottle(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class UserThrottle(_SettingsRateThrottle):
    """Per account (per IP for anonymous requests)."""

    scope = "user"

    def get_cache_key(self, request: Request, view: APIView) -> str:
        ident = request.user.pk if request.user.is_authenticated else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


class IpThrottle(_SettingsRateThrottle):
    """Per client IP, whoever is logged in: caps one machine with many accounts."""

    scope = "ip"

    def get_cache_key(self, request: Request, view: APIView) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class AuthThrottle(IpThrottle):
    """Stricter per-IP limit for log-in and registration (password guessing)."""

    scope = "auth"
