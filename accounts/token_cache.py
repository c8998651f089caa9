"""A presented token's row and its user's, cached: no PostgreSQL and, mostly, no Redis.

Every REST request with a token looks it up, so the look-up's statement was half
of PostgreSQL's work on a REST move, and a Redis read the next largest part of the
request's cost. Two layers answer it:

- **the shared cache**, in Redis (``REDIS_URL``, through ``core.redis_guard``):
  one entry per key, seen by every server process;
- **the process cache** (:class:`ProcessCache`): a bounded LRU of the entries this
  process read from Redis or filled itself, answered without a round trip.
  Redis tells every process of every revocation (below), so it is as exact as the
  shared cache.

Revocation, on the shared cache: whatever makes a token stop admitting
(``token_revoke``; an admin edit or delete of the token; any save or delete of its
user, deactivation included, through the model signals wired in ``accounts.apps``)
first replaces the entry with a *no-fill mark*, before its own write reaches
PostgreSQL. The next request on any process then misses and reads PostgreSQL,
which has the change once it is committed. An entry is only ever added where no
key is (Redis ``SET NX``), so a request that read the token from PostgreSQL just
before the revocation committed cannot put it back: the mark is there, and it
outlives any such read (:data:`MARK_SECONDS` against :data:`FILL_WITHIN_SECONDS`).

Revocation, on the process caches (:func:`forget`):

1. the marks and a message naming the keys are written in one Redis transaction
   (``MULTI``: ``SET`` the marks, ``PUBLISH`` on ``<REDIS_PREFIX>:token-forget``);
   ``PUBLISH`` answers how many processes are subscribed;
2. each process's listener (a thread with a subscribed connection of its own)
   drops the named entries and confirms by pushing to a list of that message;
3. :func:`forget` returns once every subscribed process confirmed. One that did
   not within :data:`LEASE_SECONDS` has stopped trusting its cache by then (the
   lease, below), so :func:`forget` returns then in any case.

A process answers from its cache only while all of these hold, and otherwise reads
Redis as before:

- its subscription stands: a connection that fails or closes empties the cache,
  and it is filled again only after a new subscription is in place. Before an
  answer, the request's thread reads whatever the connection has received (under
  the cache's lock), so a message that reached the process is never raced;
- **the lease**: the listener sends ``PING`` on the subscription every
  :data:`HEARTBEAT_SECONDS`, and the cache is trusted only until
  :data:`LEASE_SECONDS` after the sending of the last ping answered. Redis answers
  in order on one connection, so an answered ping sent after a message was
  published means the message was handled first; a process cut off from Redis
  without its connection failing (a network partition, a paused Redis) stops
  answering from its cache within the lease, which is what step 3 waits out;
- an entry is added only if no message was handled since the read of Redis
  that gave it began (a generation counter), so an entry read just before a mark
  cannot outlive the mark's message; only what Redis held as an entry (a ``GET``,
  or this process's own ``SET NX`` that succeeded) is added, never a fill refused
  by a mark;
- the entry has not outlived the Redis entry it copies (at most
  :data:`ENTRY_SECONDS`), and at most :data:`PROCESS_ENTRIES` are kept, the least
  recently used dropped first.

What the lease assumes: a Redis that replaces another (a failover to a replica) takes
no writes within :data:`LEASE_SECONDS` of the old one falling silent, since a process
still connected to the old one is not among the listeners a revocation on the new one
counts (failovers take longer: Sentinel waits 30 s by default). A Redis restarted in
place closes its connections, which a process sees on its next look-up.

While Redis is unavailable, requests read PostgreSQL and fill nothing, and a
revocation is refused (``Unavailable``, 503, nothing changed) rather than leave an
entry behind that nobody could remove. Without ``REDIS_URL`` every look-up reads
PostgreSQL as before: a cache in each process's memory could not be told of a
revocation made by another process. ``TOKEN_PROCESS_CACHE = False`` in the
settings turns the process cache off (every look-up reads Redis, as the shared
cache alone). The user's password hash is never cached. A bulk
``QuerySet.update()`` or raw SQL on users or tokens sends no signal: such a change
reaches a cached token only when its entry ends (:data:`ENTRY_SECONDS`), so change
accounts with ``save()``.
"""

from __future__ import annotations

import logging
import os
import pickle
import secrets
import select
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable
from contextlib import suppress
from functools import cache, partial
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.signals import setting_changed
from django.db import connection, models
from django.dispatch import receiver

from accounts.models import ApiToken
from core.errors import Unavailable
from core.redis_guard import RedisUnavailable, client, guarded

logger = logging.getLogger(__name__)

#: An entry lives this long; its token's use is recorded when it is filled again.
ENTRY_SECONDS = 60
#: A no-fill mark lives this long: far longer than a revocation's transaction and a fill.
MARK_SECONDS = 3600
#: A fill whose read of PostgreSQL started longer ago than this is dropped.
FILL_WITHIN_SECONDS = 10
#: The value of a no-fill mark.
NO_FILL = b"no-fill"
#: Entries a process keeps at most (about a kilobyte each), the least recently used
#: dropped first.
PROCESS_ENTRIES = 10_000
#: How often a process's listener pings Redis on its subscription.
HEARTBEAT_SECONDS = 1.0
#: How long after sending its last answered ping a process trusts its cache; also how
#: long a revocation waits at most for the processes' confirmations.
LEASE_SECONDS = 3.0
#: How long a listener waits before subscribing again after its connection failed.
RESUBSCRIBE_SECONDS = 1.0

#: A cached entry: the values of the token's fields and of its user's (``_fields``).
Entry = tuple[tuple[Any, ...], tuple[Any, ...]]


def _key(key_hash: str) -> str:
    return f"{settings.REDIS_PREFIX}:token:{key_hash}"


def _channel(prefix: str) -> str:
    return f"{prefix}:token-forget"


def _ack_key(prefix: str, message_id: str) -> str:
    return f"{prefix}:token-forgotten:{message_id}"


@cache
def _fields() -> tuple[list[str], list[str]]:
    """The attribute names stored of a token and of its user (the password left out)."""

    def names(model: type[models.Model], leave_out: set[str]) -> list[str]:
        return [f.attname for f in model._meta.concrete_fields if f.attname not in leave_out]

    return names(ApiToken, set()), names(get_user_model(), {"password"})


class ProcessCache:
    """This process's entries, and the listener that keeps them exact (see the module).

    Every read of the connection, and every change of the entries, happens under
    one lock, by the listener thread or by a request's thread before it answers.
    """

    def __init__(self, url: str, prefix: str, timeout: float) -> None:
        self.url, self.prefix, self.timeout = url, prefix, timeout
        #: Moves on at every message handled, subscription made or lost: an entry read
        #: under an older generation is not added.
        self.generation = 0
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[float, Entry]] = OrderedDict()
        self._conn: Any = None  # the subscribed connection, while it stands
        self._pings: deque[float] = deque()  # when each unanswered ping was sent
        self._trusted_until = 0.0
        self._confirm: list[str] = []  # messages handled, not yet confirmed
        self._lost_logged = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="token-cache", daemon=True)
        self._thread.start()

    # The request's side.

    def get(self, key_hash: str) -> Entry | None:
        """The entry of a key, if this process holds it and may trust it now."""
        with self._lock:
            if self._conn is None or not self._read_messages():
                return None
            now = time.monotonic()
            found = self._entries.get(key_hash)
            if found is None or now >= self._trusted_until:
                entry = None
            elif now >= found[0]:
                del self._entries[key_hash]
                entry = None
            else:
                self._entries.move_to_end(key_hash)
                entry = found[1]
            confirm = self._take_confirmations()
        if confirm:
            self._send_confirmations(confirm)
        return entry

    def put(self, key_hash: str, entry: Entry, seconds: float, generation: int) -> None:
        """Keep an entry for ``seconds``, if nothing was forgotten since ``generation``
        (read before the Redis command that gave the entry) and the cache is trusted."""
        with self._lock:
            now = time.monotonic()
            if (
                self._conn is None
                or generation != self.generation
                or now >= self._trusted_until
                or seconds <= 0
            ):
                return
            self._entries[key_hash] = (now + seconds, entry)
            self._entries.move_to_end(key_hash)
            while len(self._entries) > PROCESS_ENTRIES:
                self._entries.popitem(last=False)

    def drop(self, key_hashes: Iterable[str]) -> None:
        """Forget these keys here at once (the revoking process, ahead of its message)."""
        with self._lock:
            for key_hash in key_hashes:
                self._entries.pop(key_hash, None)
            self.generation += 1

    def trusted(self) -> bool:
        """Whether entries may be answered now (subscribed, within the lease)."""
        with self._lock:
            return (
                self._conn is not None
                and self._read_messages()
                and time.monotonic() < self._trusted_until
            )

    def __len__(self) -> int:
        return len(self._entries)

    def stop(self) -> None:
        """Stop listening and empty the cache (settings changed, or the test ends)."""
        self._stop.set()
        with self._lock:
            self._lose()

    # The listener's side, all under the lock.

    def _read_messages(self) -> bool:
        """Handle what the connection received; False (the cache emptied) if it failed."""
        conn = self._conn
        try:
            while conn.can_read(timeout=0):
                self._handle(conn.read_response())
        except Exception:  # noqa: BLE001 - any failure of the connection: trust nothing
            self._lose()
            return False
        return True

    def _handle(self, message: Any) -> None:
        kind = message[0]
        if kind == b"message":
            message_id, *key_hashes = message[2].decode().split()
            for key_hash in key_hashes:
                self._entries.pop(key_hash, None)
            self.generation += 1
            self._confirm.append(message_id)
        elif kind == b"pong" and self._pings:
            self._trusted_until = self._pings.popleft() + LEASE_SECONDS

    def _lose(self) -> None:
        self._conn = None
        self._entries.clear()
        self._pings.clear()
        self._trusted_until = 0.0
        self.generation += 1

    def _take_confirmations(self) -> list[str]:
        confirm, self._confirm = self._confirm, []
        return confirm

    def _send_confirmations(self, message_ids: list[str]) -> None:
        redis = client()
        if redis is None:
            return

        def push() -> None:
            pipe = redis.pipeline(transaction=False)
            for message_id in message_ids:
                key = _ack_key(self.prefix, message_id)
                pipe.rpush(key, 1)
                pipe.expire(key, int(LEASE_SECONDS) + 60)
            pipe.execute()

        # Unconfirmed, the revocation waits out the lease instead.
        with suppress(RedisUnavailable):
            guarded(push)

    def _listen(self) -> None:
        while not self._stop.is_set():
            conn = None
            try:
                conn = self._subscribe()
                self._serve(conn)
            except Exception as exc:  # noqa: BLE001 - the listener must outlive any failure
                if not self._stop.is_set() and not self._lost_logged:
                    self._lost_logged = True
                    logger.warning(
                        "token cache: no subscription to Redis (%s): tokens are read "
                        "from Redis, not this process's cache, until it is back",
                        exc,
                    )
            finally:
                with self._lock:
                    if conn is not None and self._conn is conn:
                        self._lose()  # never a closed connection in use: it would reconnect
                if conn is not None:
                    conn.disconnect()
            self._stop.wait(RESUBSCRIBE_SECONDS)

    def _subscribe(self) -> Any:
        import redis

        # RESP2: a subscription's messages and its pings' answers are plain replies, read
        # in order (RESP3 would hand them to a push handler instead).
        pool = redis.ConnectionPool.from_url(
            self.url, protocol=2, socket_timeout=self.timeout, socket_connect_timeout=self.timeout
        )
        conn = pool.make_connection()
        conn.connect()
        conn.send_command("SUBSCRIBE", _channel(self.prefix))
        conn.read_response()  # the subscription's confirmation
        return conn

    def _serve(self, conn: Any) -> None:
        """Handle messages and ping, until the connection fails or the cache stops."""
        with self._lock:
            if self._stop.is_set():
                return
            self._lose()  # nothing from before this subscription is trusted
            self._conn = conn
            sent = time.monotonic()  # taken before the send: the lease never runs late
            conn.send_command("PING")
            self._pings.append(sent)
        next_ping = time.monotonic() + HEARTBEAT_SECONDS
        sock = conn._sock
        while not self._stop.is_set():
            select.select([sock], [], [], max(0.0, next_ping - time.monotonic()))
            with self._lock:
                if self._conn is not conn:
                    raise ConnectionError("the subscription was lost")
                if not self._read_messages():
                    raise ConnectionError("the subscription failed")
                now = time.monotonic()
                if now >= next_ping:
                    if self._pings and now - self._pings[0] > LEASE_SECONDS:
                        raise ConnectionError("Redis did not answer a ping within the lease")
                    conn.send_command("PING")
                    self._pings.append(now)
                    next_ping = now + HEARTBEAT_SECONDS
                if self._lost_logged and now < self._trusted_until:
                    self._lost_logged = False
                    logger.warning("token cache: subscribed to Redis again")
                confirm = self._take_confirmations()
            if confirm:
                self._send_confirmations(confirm)


_process: ProcessCache | None = None
_process_lock = threading.Lock()
_enabled: bool | None = None  # ``TOKEN_PROCESS_CACHE``, read once (a missing setting is slow)


def process_cache() -> ProcessCache | None:
    """This process's cache of tokens (its listener started on first use), or None
    without ``REDIS_URL`` or with ``TOKEN_PROCESS_CACHE = False``."""
    global _process, _enabled
    current = _process
    url = settings.REDIS_URL
    if _enabled is None:
        _enabled = bool(getattr(settings, "TOKEN_PROCESS_CACHE", True))
    if not url or not _enabled:
        return None
    if current is not None and current.url == url and current.prefix == settings.REDIS_PREFIX:
        return current
    with _process_lock:
        if _process is not None:
            _process.stop()
        _process = ProcessCache(url, settings.REDIS_PREFIX, settings.REDIS_TIMEOUT)
        return _process


def _forget_process_cache() -> None:
    global _process
    with _process_lock:
        if _process is not None:
            _process.stop()
        _process = None


def _forked() -> None:
    # The parent's listener thread does not exist in the child: start one of its own.
    global _process, _process_lock
    _process, _process_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forked)


@receiver(setting_changed)
def _settings_changed(*, setting: str, **kwargs: Any) -> None:
    global _enabled
    if setting == "TOKEN_PROCESS_CACHE":
        # Turned off, the listener goes on handling messages: turned on again, the
        # entries kept are as exact as ever.
        _enabled = None
    elif setting in ("REDIS_URL", "REDIS_PREFIX", "REDIS_TIMEOUT"):
        _forget_process_cache()


def _instances(entry: Entry) -> tuple[User, ApiToken]:
    token_names, user_names = _fields()
    token_values, user_values = entry
    token = ApiToken.from_db(connection.alias, token_names, token_values)
    user = get_user_model().from_db(connection.alias, user_names, user_values)
    token.user = user
    return user, token


def _get_with_ttl(redis: Any, key: str) -> tuple[bytes | None, int]:
    pipe = redis.pipeline(transaction=False)
    pipe.get(key)
    pipe.pttl(key)
    value, ttl_ms = pipe.execute()
    return value, ttl_ms


def cached(key_hash: str) -> tuple[User, ApiToken] | None:
    """The cached user and token of a key, or None (not cached, marked, or Redis down)."""
    local = process_cache()
    generation = 0
    if local is not None:
        entry = local.get(key_hash)
        if entry is not None:
            return _instances(entry)
        generation = local.generation
    redis = client()
    if redis is None:
        return None
    sent = time.monotonic()
    try:
        if local is None:
            value, ttl_ms = guarded(redis.get, _key(key_hash)), 0
        else:
            value, ttl_ms = guarded(_get_with_ttl, redis, _key(key_hash))
    except RedisUnavailable:  # logged by the guard: PostgreSQL answers meanwhile
        return None
    if value is None or value == NO_FILL:
        return None
    entry = pickle.loads(value)
    if local is not None:
        # Ends no later than the Redis entry, whose time ran from before the read was sent.
        left = min(ttl_ms / 1000, ENTRY_SECONDS) - (time.monotonic() - sent)
        local.put(key_hash, entry, left, generation)
    return _instances(entry)


def fill(key_hash: str, user: User, token: ApiToken, *, read_at: float) -> None:
    """Cache a token read from PostgreSQL at ``read_at`` (``time.monotonic()`` before the
    read), unless a no-fill mark or another entry holds its key or the read is too old."""
    redis = client()
    if redis is None or time.monotonic() - read_at > FILL_WITHIN_SECONDS:
        return
    token_names, user_names = _fields()
    entry = (
        tuple(getattr(token, name) for name in token_names),
        tuple(getattr(user, name) for name in user_names),
    )
    value = pickle.dumps(entry, pickle.HIGHEST_PROTOCOL)
    local = process_cache()
    generation = local.generation if local is not None else 0
    sent = time.monotonic()
    try:
        stored = guarded(partial(redis.set, _key(key_hash), value, ex=ENTRY_SECONDS, nx=True))
    except RedisUnavailable:  # logged by the guard; the next miss reads PostgreSQL
        return
    if stored and local is not None:
        local.put(key_hash, entry, ENTRY_SECONDS - (time.monotonic() - sent), generation)


def forget(key_hashes: Iterable[str]) -> None:
    """Mark these keys no-fill before a write that may stop them admitting, and return
    once no process answers them from its own cache (see the module).

    Raises ``Unavailable`` when Redis cannot be told: the caller's write must not happen.
    """
    redis = client()
    if redis is None:
        return
    hashes = list(key_hashes)
    if not hashes:
        return
    prefix = settings.REDIS_PREFIX
    message_id = secrets.token_hex(8)

    def mark() -> int:
        pipe = redis.pipeline(transaction=True)
        for key_hash in hashes:
            pipe.set(_key(key_hash), NO_FILL, ex=MARK_SECONDS)
        pipe.publish(_channel(prefix), " ".join([message_id, *hashes]))
        return int(pipe.execute()[-1])

    try:
        listeners = guarded(mark)
    except RedisUnavailable:
        raise Unavailable(
            "the token cache cannot be updated just now: try again",
            details={"retry_after": 1},
        ) from None
    deadline = time.monotonic() + LEASE_SECONDS
    if _process is not None:
        _process.drop(hashes)
    _await_confirmations(redis, _ack_key(prefix, message_id), listeners, deadline)


def _await_confirmations(redis: Any, key: str, listeners: int, deadline: float) -> None:
    """Wait until ``listeners`` processes confirmed a message, or ``deadline`` passed (by
    then the lease has ended any trust in a cache that did not hear it)."""
    confirmed = 0
    step = max(0.01, settings.REDIS_TIMEOUT / 2)  # each wait well within the socket timeout
    try:
        while confirmed < listeners:
            left = deadline - time.monotonic()
            if left <= 0:
                logger.warning(
                    "token cache: %d of %d processes did not confirm a revocation; "
                    "their caches' lease has ended",
                    listeners - confirmed,
                    listeners,
                )
                return
            wait = max(0.01, round(min(left, step), 3))  # BLPOP's 0 would wait forever
            if guarded(partial(redis.blpop, [key], timeout=wait)) is not None:
                confirmed += 1
    except RedisUnavailable:  # the listeners lost Redis too: their caches are not trusted
        time.sleep(max(0.0, deadline - time.monotonic()))
    finally:
        with suppress(RedisUnavailable):
            guarded(redis.delete, key)


def forget_user(user_id: Any) -> None:
    """Mark the keys of a user's tokens no-fill (before the user is changed or deleted)."""
    if client() is not None:
        active = ApiToken.objects.filter(user_id=user_id, revoked_at__isnull=True)
        forget(active.values_list("key_hash", flat=True))
