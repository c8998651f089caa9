"""Hints: a winning line found once in a solver worker process, then followed.

The solver never runs on a request or socket thread, and no thread waits for it. A hint
that the cache cannot answer is handed to a pool of ``HINT_WORKERS`` worker processes per
server process (``games.workers.hint_line``) and the request ends (``hint_ask``: REST
answers 202 with a place to poll, ``hint_result``; a socket awaits the solve in its event
loop and answers when it is done). The answer is stored in the shared cache by the pool's
own callback, so any server process can give it. At most ``HINT_QUEUE`` hints wait or run
in a server process at once, and a further one is refused at once with ``hint_busy``. A
solve not done within ``HINT_DEADLINE_SECONDS`` of the ask answers ``hint_timeout``; a
solve stops by itself after ``HINT_SOLVER_NODES`` positions or ``HINT_SOLVER_SECONDS``.
A player has one solve in flight, and the next no sooner than
``HINT_PLAYER_INTERVAL_SECONDS`` after it (``hint_in_progress``), so one account takes at
most a share of a worker; a position being solved for anyone is not solved twice. So
hints take at most ``HINT_WORKERS`` cores of a server's machine per server process,
however many are asked for, and the workers run at a lower priority
(``HINT_WORKER_NICE``) than the server's threads, so on a busy machine they yield the
cores to moves.

Every position along a winning line is cached with its move (the shared cache,
Redis in production, for ``HINT_CACHE_SECONDS``): a player who follows the
hints is answered from the cache to the end of that line, and the solver runs
again only when they leave it. A lost position is cached as lost; an unknown
one (limits reached) for ``HINT_UNKNOWN_CACHE_SECONDS``, so asking again at
once costs nothing.

Nothing stays broken. A worker that dies (killed, out of memory) breaks its
pool: the hint it was solving answers ``hint_unavailable`` (503, Retry-After),
and the next hint starts a new pool. Workers end with their server process
(``core.lifeline``). The cache goes through the Redis breaker
(``core.redis_guard``): while Redis is away each process caches on its own.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from django.conf import settings
from django.core.cache import cache

from core.errors import HintBusy, HintInProgress, HintTimeout, HintUnavailable
from core.redis_guard import RedisUnavailable, guarded, process_cache
from games.engine import Position
from games.engine.solver import Verdict
from games.workers import hint_line, position_key, worker_start

logger = logging.getLogger(__name__)

#: Cache values that are not a move.
LOST, UNKNOWN = "", "?"

#: Seconds a client waits after its hint met a broken pool (a new one starts meanwhile).
UNAVAILABLE_RETRY_AFTER = 2

_setup = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_slots: threading.BoundedSemaphore | None = None
_in_flight = 0  # hints of this process queued or running in the pool
_restarts = 0  # broken pools replaced since this process started
_broken = False  # the last hint found no working pool, and none has worked since
_budget = [0.0, 0.0]  # this process's hint requests in hand (token bucket), and when counted
_clock = time.monotonic  # the bucket's clock; a test sets its own, not the process's
_budget_lock = threading.Lock()  # never held across work: a socket's event loop takes it


@dataclass(frozen=True)
class Answer:
    """A position's verdict, the move to play if won, and the solver nodes spent now
    (0 when the cache answered)."""

    verdict: str
    move: str | None
    nodes: int


def _cache_key(key: str) -> str:
    return f"hint:{key}"


def _shared(method: str, *args: Any, **kwargs: Any) -> Any:
    """``cache.<method>(...)``: the shared cache, or this process's own while Redis fails
    (``core.redis_guard``), so a Redis outage costs repeated solves, never an error."""
    try:
        return guarded(partial(getattr(cache, method), *args, **kwargs))
    except RedisUnavailable:  # logged by the guard
        return getattr(process_cache(), method)(*args, **kwargs)


def _workers() -> tuple[ProcessPoolExecutor, threading.BoundedSemaphore]:
    """This server process's solver pool (started on first use) and its queue slots."""
    global _pool, _slots
    with _setup:
        if _pool is None:
            # "spawn": a fresh interpreter, never a fork of a threaded server process.
            context = multiprocessing.get_context("spawn")
            _pool = ProcessPoolExecutor(
                settings.HINT_WORKERS,
                mp_context=context,
                initializer=worker_start,
                initargs=(settings.HINT_WORKER_NICE, os.getpid()),
            )
        if _slots is None:
            _slots = threading.BoundedSemaphore(settings.HINT_QUEUE)
        return _pool, _slots


def _replace(broken: ProcessPoolExecutor) -> None:
    """Drop a pool one of whose workers died (killed, out of memory): the next hint
    starts a new one. Without this every later hint would fail for good."""
    global _pool, _restarts
    with _setup:
        if _pool is not broken:
            return  # another thread replaced it already
        _pool = None
        _restarts += 1
    logger.warning("a hint worker died: its pool is replaced on the next hint")
    broken.shutdown(wait=False, cancel_futures=True)


def _taken(delta: int) -> None:
    global _in_flight
    with _setup:
        _in_flight += delta


def _done(slots: threading.BoundedSemaphore, pool: ProcessPoolExecutor, future: Future) -> None:
    _taken(-1)
    slots.release()
    if not future.cancelled() and isinstance(future.exception(), BrokenProcessPool):
        _replace(pool)


def pool_state() -> dict[str, Any]:
    """This process's hint pool, for metrics: live workers, hints queued or running,
    whether the last hint found no working pool, and broken pools replaced so far."""
    with _setup:
        started = _pool is not None
        in_flight, broken, restarts = _in_flight, _broken, _restarts
    workers = len(multiprocessing.active_children()) if started else 0
    return {"workers": workers, "in_flight": in_flight, "broken": broken, "restarts": restarts}


def shutdown() -> None:
    """Stop this process's solver workers (tests; the next hint starts new ones)."""
    global _pool, _slots
    with _setup:
        pool, _pool, _slots = _pool, None, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def _in_hand(now: float) -> float:
    """This process's hint requests in hand at ``now`` (the caller holds ``_budget_lock``)."""
    rate = settings.HINT_RATE
    burst = max(1.0, rate)
    return min(burst, _budget[0] + (now - _budget[1]) * rate) if _budget[1] else burst


def _busy(tokens: float) -> HintBusy:
    wait = (1 - tokens) / settings.HINT_RATE
    return HintBusy(
        "this server answers no more hints just now: try again in a moment",
        details={"retry_after": max(1, round(wait))},
    )


def hint_admit() -> None:
    """Take one of this process's hint requests (``HINT_RATE`` a second, a burst of as
    many, from all players together) or raise ``HintBusy``, before any work is done.

    The per-player limits hold one account back, not a flood from many accounts: each
    refused hint still cost a read of the game and its position (a flood of 30 accounts
    took another player's move p50 from 15 to 627 ms). Refused here, it costs nothing.
    """
    now = _clock()
    with _budget_lock:
        tokens = _in_hand(now)
        _budget[:] = [tokens - 1 if tokens >= 1 else tokens, now]
    if tokens < 1:
        raise _busy(tokens)


def hint_refusal() -> HintBusy | None:
    """The refusal the next hint request would get now, without taking a request.

    A socket asks this in its event loop: a flood of hint frames is then answered there,
    without a worker thread, the account's budget in Redis or a read of the game.
    """
    with _budget_lock:
        tokens = _in_hand(_clock())
    return _busy(tokens) if tokens < 1 else None


def _cached(key: str) -> Answer | None:
    value = _shared("get", _cache_key(key))
    if value is None:
        return None
    if value == LOST:
        return Answer(Verdict.LOST.value, None, 0)
    if value == UNKNOWN:
        return Answer(Verdict.UNKNOWN.value, None, 0)
    return Answer(Verdict.WON.value, value, 0)


def _unavailable() -> HintUnavailable:
    return HintUnavailable(
        "the hint worker stopped; a new one is starting: try again in a moment",
        details={"retry_after": UNAVAILABLE_RETRY_AFTER},
    )


def _submit(position: Position) -> Future:
    """Hand the position to a worker, on a new pool if the current one broke while idle."""
    global _broken
    for _ in range(2):
        pool, slots = _workers()
        if not slots.acquire(blocking=False):
            raise HintBusy(
                "every solver worker is busy: try again in a moment", details={"retry_after": 2}
            )
        try:
            future = pool.submit(
                hint_line,
                position.to_json(),
                max_nodes=settings.HINT_SOLVER_NODES,
                max_seconds=settings.HINT_SOLVER_SECONDS,
            )
        except BrokenProcessPool:
            slots.release()
            _replace(pool)
            continue
        except BaseException:
            slots.release()
            raise
        _broken = False
        _taken(1)
        # The slot is free once the worker is done; a pool whose worker died is replaced.
        future.add_done_callback(partial(_done, slots, pool))
        return future
    _broken = True
    raise _unavailable()


@dataclass(frozen=True)
class Pending:
    """A hint being solved: its position's key and, in the process that asked, the
    solve's future (a socket awaits it; REST polls ``hint_result``)."""

    key: str
    future: Future | None = None


#: Cache values of a solve whose worker died (``hint_result`` answers ``hint_unavailable``),
#: and of one done (followed by the nodes it took).
FAILED, DONE = "!", "="


def _pending_key(key: str) -> str:
    return f"hint-pending:{key}"


def _stored(key: str, player: int, future: Future) -> None:
    """The pool's callback when a solve ends (in the pool's thread, not a request's): its
    answer goes to the shared cache for whoever asks next, in any server process."""
    interval = settings.HINT_PLAYER_INTERVAL_SECONDS
    try:
        verdict, steps, nodes = future.result()
    except BrokenProcessPool:  # the worker died under this hint
        _shared("set", _pending_key(key), FAILED, UNAVAILABLE_RETRY_AFTER + 1)
        return
    except BaseException:  # cancelled at shutdown: the next ask solves it again
        _shared("delete", _pending_key(key))
        return
    finally:
        _shared("set", f"hint-solving:{player}", 1, interval)  # 0: gone at once
    if verdict == Verdict.WON.value:
        _shared("set_many", {_cache_key(k): move for k, move in steps}, settings.HINT_CACHE_SECONDS)
    elif verdict == Verdict.LOST.value:
        _shared("set", _cache_key(key), LOST, settings.HINT_CACHE_SECONDS)
    else:
        _shared("set", _cache_key(key), UNKNOWN, settings.HINT_UNKNOWN_CACHE_SECONDS)
    # Done: the answer is cached; what it cost stays beside it for whoever polls.
    _shared("set", _pending_key(key), f"{DONE}{nodes}", settings.HINT_DEADLINE_SECONDS + 60)


def _pending(key: str) -> Pending | None:
    """The solve under way for ``key``, if one was asked within the deadline; raises
    ``HintTimeout`` past it, ``HintUnavailable`` if its worker died."""
    asked = _shared("get", _pending_key(key))
    if asked is None or str(asked).startswith(DONE):
        return None
    if asked == FAILED:
        raise _unavailable()
    if time.time() - float(asked) > settings.HINT_DEADLINE_SECONDS:
        raise HintTimeout(
            f"no hint within {settings.HINT_DEADLINE_SECONDS:g} s: try again in a moment",
            details={"retry_after": 5},
        )
    return Pending(key)


def hint_ask(position: Position, *, player: int) -> Answer | Pending:
    """The next move of a winning line from ``position`` when the cache knows it; else a
    solve handed to a worker, not waited for (raises ``HintInProgress``, ``HintBusy``).

    A player has one solve at a time, and the next one no sooner than
    ``HINT_PLAYER_INTERVAL_SECONDS`` after it: answers from the cache are never held up,
    and a position already being solved (for anyone) joins that solve.
    """
    key = position_key(position)
    cached = _cached(key)
    if cached is not None:
        return cached
    try:
        if (pending := _pending(key)) is not None:
            return pending
    except (HintTimeout, HintUnavailable):
        pass  # that solve is over: solve it again
    solving = f"hint-solving:{player}"
    interval = settings.HINT_PLAYER_INTERVAL_SECONDS
    if not _shared("add", solving, 1, timeout=settings.HINT_DEADLINE_SECONDS + interval + 5):
        raise HintInProgress(
            "your last hint is being solved, or was just now: one at a time",
            details={"retry_after": max(1, interval)},
        )
    try:
        future = _submit(position)
    except BaseException:
        _shared("delete", solving)
        raise
    _shared("set", _pending_key(key), time.time(), settings.HINT_DEADLINE_SECONDS + 60)
    future.add_done_callback(partial(_stored, key, player))
    return Pending(key, future)


def hint_result(position: Position) -> Answer | Pending | None:
    """What a hint asked at ``position`` came to: its answer, the solve still under way,
    or None if none was asked (or it was forgotten); raises ``HintTimeout`` once the
    solve is past its deadline, ``HintUnavailable`` if its worker died."""
    key = position_key(position)
    cached = _cached(key)
    if cached is None:
        if (pending := _pending(key)) is not None:
            return pending
        # The solve may have ended between the two reads: its answer is cached first.
        if (cached := _cached(key)) is None:
            return None
    done = str(_shared("get", _pending_key(key)) or "")
    return replace(cached, nodes=int(done[1:])) if done.startswith(DONE) else cached
