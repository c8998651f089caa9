"""Rate limits per user and per client IP; rates come from settings at call time.

DRF's throttles read their rates once at import, which makes them impossible to
change in tests or per deployment; these look the rate up on every request.

They count requests in fixed windows: one integer per client in the cache
(Redis when REDIS_URL is set, so every server process shares the counts), which
costs the same on every request. DRF's SimpleRateThrottle instead reads and
rewrites the list of every request time in the window, which grows with the
traffic (thousands of timestamps for a busy address, all pickled twice per
request) and loses counts when requests of one client overlap. A window starts
with a client's first request and lasts the rate's period; Retry-After is the
time left in it. With Redis a request costs one round trip per throttle.
While Redis is unavailable (``games.redis_guard``) each process counts in its
own memory with the same rates, and says so in the log.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from django.core.cache import DEFAULT_CACHE_ALIAS, BaseCache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from games.redis_guard import RedisUnavailable, guarded

if TYPE_CHECKING:  # rest_framework.views imports the throttles: no runtime import.
    from rest_framework.views import APIView

_cache: BaseCache | None = None
_client: Any = None


def throttle_cache() -> BaseCache:
    """One cache client for the whole process.

    Under ASGI Django makes a new cache object for every request, and with Redis
    that is a new connection per request; the counters need none of that.
    """
    global _cache
    if _cache is None:
        _cache = caches.create_connection(DEFAULT_CACHE_ALIAS)
    return _cache


@cache
def _fallback_cache() -> BaseCache:
    """This process's own counters, used while Redis is unavailable."""
    return LocMemCache("throttle-fallback", {})


@receiver(setting_changed)
def _forget_cache(*, setting: str, **kwargs: Any) -> None:
    global _cache, _client
    if setting == "CACHES":
        _cache = _client = None


class _SettingsRateThrottle(SimpleRateThrottle):
    # Not DRF's "throttle_%(scope)s_%(ident)s": those keys hold lists of request times.
    cache_format = "throttle:%(scope)s:%(ident)s"
    # Set by SimpleRateThrottle.__init__ from the rate (django-stubs leave them out).
    num_requests: int
    duration: int

    def get_rate(self) -> str | None:
        if self.scope is None:
            return None
        # The stubs type the rates as numbers; DRF's are "N/period" strings.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)  # type: ignore[return-value]

    def allow_request(self, request: Request, view: APIView) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        return self._allow_key()

    def _allow_key(self) -> bool:
        """Count one request against ``self.key``; False once its window is used up."""
        cache = throttle_cache()
        if isinstance(cache, RedisCache):
            try:
                return guarded(self._allow_redis, cache)
            except RedisUnavailable:  # logged by the guard; counted in this process meanwhile
                return self._allow_in(_fallback_cache())
        return self._allow_in(cache)

    def _allow_in(self, cache: BaseCache) -> bool:
        """The window in any Django cache (in-process, or a shared one without Redis)."""
        self.now = self.timer()
        start_key = f"{self.key}:start"
        if cache.add(self.key, 1, timeout=self.duration):
            cache.set(start_key, self.now, timeout=self.duration)
            return True
        try:
            count = cache.incr(self.key)
        except ValueError:  # the window ended between the two calls: a new one starts
            cache.set(self.key, 1, timeout=self.duration)
            cache.set(start_key, self.now, timeout=self.duration)
            return True
        if count <= self.num_requests:
            return True
        start = cache.get(start_key, self.now)
        self.left = max(start + self.duration - self.now, 0.001)
        return False

    def _allow_redis(self, cache: RedisCache) -> bool:
        """The same window in one round trip: create with expiry, count, read the time left."""
        global _client
        key = cache.make_and_validate_key(self.key)
        if _client is None:  # Django builds a new client object per call: keep one
            _client = cache._cache.get_client(key, write=True)
        # MULTI/EXEC: the key cannot expire between SET and INCR (it would live forever).
        pipe = _client.pipeline(transaction=True)
        pipe.set(key, 0, ex=self.duration, nx=True)
        pipe.incr(key)
        pipe.pttl(key)
        _, count, left_ms = pipe.execute()
        if count <= self.num_requests:
            return True
        self.left = max(left_ms / 1000, 0.001)
        return False

    def wait(self) -> float:
        return self.left


class UserThrottle(_SettingsRateThrottle):
    """Per account (per IP for anonymous requests)."""

    scope = "user"

    def get_cache_key(self, request: Request, view: APIView) -> str:
        ident = request.user.pk if request.user.is_authenticated else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


def _wait(throttle: _SettingsRateThrottle, ident: Any) -> float | None:
    if throttle.rate is None:
        return None
    throttle.key = throttle.cache_format % {"scope": throttle.scope, "ident": ident}
    return None if throttle._allow_key() else throttle.wait()


def account_wait(user_id: int) -> float | None:
    """Count one socket frame against its account's REST budget; None, or seconds to wait.

    The same counter as ``UserThrottle``: REST requests and the frames of all the
    account's sockets, on every server process, draw on one budget.
    """
    return _wait(UserThrottle(), user_id)


def login_attempt_wait(request: HttpRequest) -> float | None:
    """Count a log-in attempt made outside the API (the admin's) on the API's log-in budget."""
    throttle = AuthThrottle()
    # get_ident reads only request.META, which a Django request has too.
    return _wait(throttle, throttle.get_ident(request))  # type: ignore[arg-type]


class IpThrottle(_SettingsRateThrottle):
    """Per client IP, whoever is logged in: caps one machine with many accounts."""

    scope = "ip"

    def get_cache_key(self, request: Request, view: APIView) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class AuthThrottle(IpThrottle):
    """Stricter per-IP limit for log-in and registration (password guessing)."""

    scope = "auth"
