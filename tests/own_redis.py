"""A redis-server of the test's own on a free port, to kill, pause and restart under play.

The shared Redis of the machine is never touched: faults are injected into this
process only (``kill`` = SIGKILL, ``pause``/``resume`` = SIGSTOP/SIGCONT, ``start``
again = a restart with an empty data set, as a Redis without persistence comes back).
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OwnRedis:
    """One redis-server process on 127.0.0.1:``port``."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        import redis

        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
            + ["--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        for _ in range(100):
            try:
                client.ping()
                return
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.resume()
            self.kill()


@pytest.fixture
def own_redis(settings: Any) -> Iterator[OwnRedis]:
    """Cache, board mirror and channel layer on a redis-server of this test alone."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    from games import boards

    server = OwnRedis()
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
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {
                "hosts": [
                    {"address": server.url, "socket_timeout": 0.3, "socket_connect_timeout": 0.3}
                ]
            },
        }
    }
    boards._client.cache_clear()
    try:
        yield server
    finally:
        server.stop()
        boards._client.cache_clear()
