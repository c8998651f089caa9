"""Redis is a helper, never a single point of failure: a circuit breaker around its calls.

Redis holds only what PostgreSQL or the process can do without (the boards'
rank mirror, rate-limit counters, events). Every call through :func:`guarded`
has its client's short timeouts (``REDIS_TIMEOUT``); the first failure opens
the circuit for ``REDIS_RETRY_AFTER`` seconds, during which calls fail at once
with :class:`RedisUnavailable` and the callers use their fallback (ranks
counted in PostgreSQL, a per-process rate limiter) instead of each waiting for
a timeout. The first call that succeeds again runs the recovery hooks (the
boards drop the mirrors whose updates were lost). Both changes are logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from circuitbreaker import CircuitBreaker
from django.conf import settings
from django.core.cache import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.signals import setting_changed
from django.dispatch import receiver
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

T = TypeVar("T")

_recovery_hooks: list[Callable[[], None]] = []
_down = threading.Event()  # set while a failure has not been followed by a success


class RedisUnavailable(Exception):
    """Redis failed just now, or recently (the circuit is open): use the fallback."""


@cache
def _breaker() -> CircuitBreaker:
    return CircuitBreaker(
        failure_threshold=1,
        recovery_timeout=settings.REDIS_RETRY_AFTER,
        expected_exception=RedisError,
        name="redis",
    )


@receiver(setting_changed)
def _forget_state(*, setting: str, **kwargs: Any) -> None:
    if setting in ("REDIS_RETRY_AFTER", "REDIS_URL"):
        _breaker.cache_clear()
        _down.clear()
    if setting in ("REDIS_URL", "REDIS_TIMEOUT"):
        client.cache_clear()


@cache
def client() -> Any:
    """This process's Redis client (None without ``REDIS_URL``), with ``REDIS_TIMEOUT``."""
    if not settings.REDIS_URL:
        return None
    import redis

    timeout = settings.REDIS_TIMEOUT
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=timeout, socket_connect_timeout=timeout
    )


@cache
def process_cache() -> BaseCache:
    """This process's own cache, standing in for the shared one while Redis is unavailable
    (rate-limit windows, hint lines): per process, so a limit is per process meanwhile."""
    return LocMemCache("redis-fallback", {})


def breaker_state() -> str:
    """The Redis breaker's state, for metrics: ``closed`` (Redis used), ``open`` (left
    alone after a failure, fallbacks in use) or ``half_open`` (the next call tries it)."""
    return str(_breaker().state)


def on_recovery(hook: Callable[[], None]) -> None:
    """Run ``hook`` when Redis answers again after a failure (in the calling thread)."""
    _recovery_hooks.append(hook)


def guarded(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)``, or :class:`RedisUnavailable` when Redis fails or recently failed.

    Only Redis errors count against Redis; any other error of ``func`` passes through.
    """
    breaker = _breaker()
    if breaker.opened:
        raise RedisUnavailable("Redis failed recently; retrying later")
    try:
        with breaker:
            result = func(*args)
    except RedisError as exc:
        if not _down.is_set():
            _down.set()
            logger.warning(
                "Redis unavailable (%s): ranks from PostgreSQL, rate limits per process; "
                "retrying every %s s",
                exc,
                settings.REDIS_RETRY_AFTER,
            )
        raise RedisUnavailable(str(exc)) from exc
    if _down.is_set():
        _down.clear()
        logger.warning("Redis is back: reconciling")
        for hook in _recovery_hooks:
            hook()
    return result
