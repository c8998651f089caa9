"""Worker threads for the synchronous Django work of daphne's HTTP requests and sockets.

Django's own ASGI handler starts a new thread for every HTTP request and, with
async-capable middleware, hops between the event loop and a thread twice per
middleware; Channels hops twice more per database call to tidy connections.
On this project's hardware each hop costs tenths of a millisecond and a new
thread more than a millisecond, more than the move itself. Here the work runs
on fixed threads that keep their database connection between calls and tidy it
the way Django's request signals would (``close_old_connections``), with the
health check only after a pause: a thread's connection is handed back to
psycopg's pool after each call when ``CONN_MAX_AGE`` is 0 (the default), and
kept otherwise.

HTTP requests share one pool of ``HTTP_THREADS`` threads. Each socket is bound
to one of ``SOCKET_THREADS`` single threads, so its calls stay in order. The
fixed counts bound the database connections a server process holds however
many requests and sockets are open.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from games import events

T = TypeVar("T")

#: A database connection idle for longer is health-checked before its next use.
IDLE_CHECK_S = 5.0

_last_use = threading.local()
_http: ThreadPoolExecutor | None = None
_http_size = 0
_sockets: list[ThreadPoolExecutor] = []
_next_socket = itertools.count()
_setup = threading.Lock()


def _upkeep() -> None:
    """Django's ``close_old_connections``, without a health check on every call.

    ``close_old_connections`` makes the next query of a persistent connection
    with health checks send a ``SELECT 1`` first: one more database round trip
    per call. Here a connection is checked only when it has been idle for a
    while, had an error, or must be closed (its ``CONN_MAX_AGE`` is over: at
    once with 0, which hands a pooled connection back to the pool after every call).
    """
    now = time.monotonic()
    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        idle = now - getattr(_last_use, conn.alias, now) > IDLE_CHECK_S
        if (
            idle
            or conn.errors_occurred
            or (conn.close_at is not None and now >= conn.close_at)
            or conn.get_autocommit() != conn.settings_dict["AUTOCOMMIT"]
        ):
            conn.close_if_unusable_or_obsolete()
        setattr(_last_use, conn.alias, now)


def tidy_call(loop: asyncio.AbstractEventLoop, func: Callable[..., T], *args: Any) -> T:
    """Call ``func`` in a worker thread: its connection tidied before and after, events
    handed to the server's event loop ``loop`` without waiting (``games.events``)."""
    _upkeep()
    try:
        with events.sending_on(loop):
            return func(*args)
    finally:
        _upkeep()


def _runner(executor: ThreadPoolExecutor) -> Callable[..., Awaitable[Any]]:
    run = sync_to_async(tidy_call, thread_sensitive=False, executor=executor)

    async def runner(func: Callable[..., T], *args: Any) -> T:
        return await run(asyncio.get_running_loop(), func, *args)

    return runner


def _executors() -> tuple[ThreadPoolExecutor, list[ThreadPoolExecutor]]:
    global _http, _http_size
    with _setup:
        if _http is None:
            _http_size = settings.HTTP_THREADS
            _http = ThreadPoolExecutor(_http_size, thread_name_prefix="http")
            _sockets.extend(
                ThreadPoolExecutor(1, thread_name_prefix=f"socket-{i}")
                for i in range(settings.SOCKET_THREADS)
            )
    return _http, _sockets


def http_runner() -> Callable[..., Awaitable[Any]]:
    """``await runner(func, *args)`` runs ``func(*args)`` by ``tidy_call`` on the HTTP pool."""
    http, _ = _executors()
    return _runner(http)


def socket_runner() -> Callable[..., Awaitable[Any]]:
    """A runner bound to the next socket thread (round robin), for one socket's calls."""
    _, sockets = _executors()
    return _runner(sockets[next(_next_socket) % len(sockets)])


def close_db_connections() -> None:
    """Close the database connections of the worker threads started so far (tests, shutdown)."""
    with _setup:
        http, size, sockets = _http, _http_size, list(_sockets)
    for executor in sockets:
        executor.submit(connections.close_all).result()
    if http is None:
        return
    # As many calls as threads, each holding its thread until all have run,
    # so every thread of the pool runs one.
    barrier = threading.Barrier(size)

    def close_here() -> None:
        connections.close_all()
        barrier.wait(timeout=10)

    for future in [http.submit(close_here) for _ in range(size)]:
        future.result()
