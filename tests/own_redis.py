"""A redis-server of the test's own on a free port, to kill, pause and restart under play.

The shared Redis of the machine is never touched: faults are injected into this
process only (``devtools.servers.RedisServer``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from devtools.servers import RedisServer


@pytest.fixture
def own_redis(settings: Any) -> Iterator[RedisServer]:
    """Cache, board mirror and channel layer on a redis-server of this test alone."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    from games import boards

    server = RedisServer()
    server.start()
    settings.REDIS_RETRY_AFTER = 0.3
    settings.REDIS_TIMEOUT = 0.3
    settings.REDIS_URL = server.url
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": server.url,
            "OPTIONS": {"socket_timeout": 0.3, "socket_connect_timeout": 0.3},
        }
    }
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "core.fanout.FanoutChannelLayer",
            "CONFIG": {"url": server.url, "timeout": 0.3, "retry": 0.3},
        }
    }
    boards._client.cache_clear()
    try:
        yield server
    finally:
        server.stop()
        boards._client.cache_clear()
