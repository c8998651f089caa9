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
time left in it. With Redis a request costs one round trip for its account's and its
address's windows together (``RequestThrottle``).
While Redis is unavailable (``core.redis_guard``) each process counts in its
own memory with the same rates, and says so in the log.

Socket frames draw on their account's budget in leases (``account_wait``): a
process takes a few requests of the window at once, one Redis round trip for
``LEASE_SHARE``-th of the budget instead of one per frame.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import DEFAULT_CACHE_ALIAS, BaseCache, caches
from django.core.cache.backends.redis import RedisCache
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

from core.redis_guard import RedisUnavailable, guarded, process_cache

if TYPE_CHECKING:  # rest_framework.views imports the throttles: no runtime import.
    from rest_framework.views import APIView

_cache: BaseCache | None = None
_client: Any = None  # the windows' script, bound to one Redis client


def throttle_cache() -> BaseCache:
    """One cache client for the whole process.

    Under ASGI Django makes a new cache object for every request, and with Redis
    that is a new connection per request; the counters need none of that.
    """
    global _cache
    if _cache is None:
        _cache = caches.create_connection(DEFAULT_CACHE_ALIAS)
    return _cache


@receiver(setting_changed)
def _forget_cache(*, setting: str, **kwargs: Any) -> None:
    global _cache, _client
    if setting == "CACHES":
        _cache = _client = None
    if setting in ("CACHES", "REST_FRAMEWORK"):
        with _leases_lock:
            _leases.clear()


class _SettingsRateThrottle(SimpleRateThrottle):
    # Not DRF's "throttle_%(scope)s_%(ident)s": those keys hold lists of request times.
    cache_format = "throttle:%(scope)s:%(ident)s"
    # Set by SimpleRateThrottle.__init__ from the rate (django-stubs leave them out).
    num_requests: int
    duration: int
    window: float  # seconds left in the window, after a count in Redis

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
        return self._take(1) > 0

    def _take(self, wanted: int) -> int:
        """Take up to ``wanted`` requests of ``self.key``'s window: how many it had left (0:
        refused, ``wait()`` says how long). Only Redis hands out more than one at a time;
        ``self.window`` is then the seconds left in the window."""
        return _take_all([(self, wanted)])[0]

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

    def _taken(self, wanted: int, count: int, left_ms: int) -> int:
        """How many of ``wanted`` the window had left, from Redis's count after adding them
        and the window's time left.

        The count goes up by ``wanted`` even when fewer were left: the window is used up
        either way, and a count past the limit refuses the same."""
        self.window = left_ms / 1000
        taken = max(0, min(wanted, self.num_requests - (count - wanted)))
        if not taken:
            self.left = max(left_ms / 1000, 0.001)
        return taken

    def wait(self) -> float:
        return self.left


def _take_all(wants: list[tuple[_SettingsRateThrottle, int]]) -> list[int]:
    """``_take`` for several windows at once (each throttle's ``key`` set): with Redis in
    one round trip, while it is unavailable in this process's own counters."""
    if not wants:
        return []
    cache = throttle_cache()
    if isinstance(cache, RedisCache):
        try:
            return guarded(_take_redis, cache, wants)
        except RedisUnavailable:  # logged by the guard; counted in this process meanwhile
            cache = process_cache()
    return [int(throttle._allow_in(cache)) for throttle, _ in wants]


#: Each window (KEYS[i], its seconds ARGV[2i-1], the requests taken ARGV[2i]): create it
#: with its expiry unless it exists, count, read the milliseconds left. A script runs
#: whole, so a key cannot expire between its SET and INCRBY (it would live forever).
WINDOWS_SCRIPT = """
local replies = {}
for i, key in ipairs(KEYS) do
    redis.call("SET", key, 0, "EX", ARGV[2 * i - 1], "NX")
    replies[2 * i - 1] = redis.call("INCRBY", key, ARGV[2 * i])
    replies[2 * i] = redis.call("PTTL", key)
end
return replies
"""


def _take_redis(cache: RedisCache, wants: list[tuple[_SettingsRateThrottle, int]]) -> list[int]:
    """All the windows in one command (``WINDOWS_SCRIPT``): one request and one reply to
    encode and parse, where a MULTI/EXEC of the same commands cost as much CPU as a round
    trip per window (py-spy, bench/README.md)."""
    global _client
    keys = [cache.make_and_validate_key(throttle.key) for throttle, _ in wants]
    if _client is None:  # Django builds a new client object per call: keep one
        _client = cache._cache.get_client(keys[0], write=True).register_script(WINDOWS_SCRIPT)
    replies = _client(keys=keys, args=[n for t, wanted in wants for n in (t.duration, wanted)])
    return [
        throttle._taken(wanted, replies[2 * i], replies[2 * i + 1])
        for i, (throttle, wanted) in enumerate(wants)
    ]


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


#: A lease is this share of an account's budget (at least one request): 12 frames of
#: the default 1200/min.
LEASE_SHARE = 100
#: Leases kept before those of ended windows are dropped (one per account with sockets).
HELD_LEASES = 1024


@dataclass
class _Lease:
    """Requests of an account's window that this process has taken and not used yet."""

    left: int
    until: float  # time.monotonic() at which the window they were taken from ends


_leases: dict[int, _Lease] = {}
_leases_lock = threading.Lock()


def account_wait(user_id: int) -> float | None:
    """Count one socket frame against its account's REST budget; None, or seconds to wait.

    The same counter as ``UserThrottle``: REST requests and the frames of all the
    account's sockets, on every server process, draw on one budget. A frame that
    finds no lease left takes a new one from Redis: up to ``LEASE_SHARE``-th of the
    budget, counted there at once, and used by this process's sockets of the account
    until the window ends. So the account is never admitted more than its budget in a
    window; it may be refused up to a lease per process early (requests counted but
    not used by the window's end).
    """
    now = time.monotonic()
    with _leases_lock:
        lease = _leases.get(user_id)
        if lease is not None and lease.left > 0 and now < lease.until:
            lease.left -= 1
            return None
    throttle = UserThrottle()
    if throttle.rate is None:
        return None
    throttle.key = throttle.cache_format % {"scope": throttle.scope, "ident": user_id}
    wanted = max(1, throttle.num_requests // LEASE_SHARE)
    taken = throttle._take(wanted)
    if not taken:
        return throttle.wait()
    if taken > 1:
        with _leases_lock:
            if len(_leases) >= HELD_LEASES:  # forget the leases of windows that ended
                for ended in [k for k, v in _leases.items() if v.until <= now]:
                    del _leases[ended]
            # The window's end from before the round trip: never later than Redis's.
            _leases[user_id] = _Lease(taken - 1, now + throttle.window)
    return None


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


class RequestThrottle(BaseThrottle):
    """The default limits of a REST request: ``UserThrottle``'s and ``IpThrottle``'s windows,
    counted as those two would count them, in one Redis round trip instead of one each.

    As with DRF's list of throttles, a request counts in both windows, is refused when
    either is used up, and waits for the later of the refusing windows to end.
    """

    parts: tuple[type[_SettingsRateThrottle], ...] = (UserThrottle, IpThrottle)
    refused: list[_SettingsRateThrottle]  # the parts whose window is used up

    def allow_request(self, request: Request, view: APIView) -> bool:
        counted = []
        for part in self.parts:
            throttle = part()
            if throttle.rate is not None:
                throttle.key = throttle.get_cache_key(request, view)
                counted.append(throttle)
        taken = _take_all([(throttle, 1) for throttle in counted])
        self.refused = [throttle for throttle, n in zip(counted, taken, strict=True) if not n]
        return not self.refused

    def wait(self) -> float:
        return max(throttle.wait() for throttle in self.refused)
