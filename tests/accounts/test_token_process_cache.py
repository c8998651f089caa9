"""The process cache of tokens: answered without Redis, exact on revocation.

Each test runs its own redis-server (``own_redis``). A second
``token_cache.ProcessCache`` in the test's process stands for another server
process: it has its own entries, connection and listener, as another process's
would. A dropped or silent subscription makes a process read Redis again.
"""

from __future__ import annotations

import pickle
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from accounts import services as account_services
from accounts import token_cache
from accounts.models import ApiToken
from accounts.selectors import token_hash
from devtools.servers import RedisServer

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.own_redis"]

ENTRY = ((1, "bot"), (2, "ann"))


def calls(server: RedisServer, command: str) -> int:
    """How many times the server ran ``command`` so far."""
    stats = redis.Redis.from_url(server.url).info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


def eventually(check: Callable[[], bool], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def local(own_redis: RedisServer) -> token_cache.ProcessCache:
    """This process's cache, once its subscription is in place and trusted."""
    cache = token_cache.process_cache()
    assert cache is not None
    assert eventually(cache.trusted)
    return cache


@pytest.fixture
def other_process(own_redis: RedisServer, settings: Any) -> Iterator[token_cache.ProcessCache]:
    """A cache standing for another server process's, subscribed and trusted."""
    cache = token_cache.ProcessCache(own_redis.url, settings.REDIS_PREFIX, 0.3)
    assert eventually(cache.trusted)
    try:
        yield cache
    finally:
        cache.stop()


@pytest.fixture
def key(local: token_cache.ProcessCache, user: Any) -> str:
    """A token of ``user`` in Redis and in this process's cache."""
    _, key = account_services.token_create(user=user, name="bot")
    assert account_services.token_authenticate(key) is not None  # fills Redis and here
    assert local.get(token_hash(key)) is not None
    return key


@pytest.fixture
def fast_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(token_cache, "HEARTBEAT_SECONDS", 0.05)
    monkeypatch.setattr(token_cache, "LEASE_SECONDS", 0.4)


def test_a_token_in_the_process_cache_is_answered_without_redis(
    key: str, own_redis: RedisServer, user: Any
) -> None:
    before = calls(own_redis, "get")
    for _ in range(5):
        found = account_services.token_authenticate(key)
        assert found is not None and found[0].pk == user.pk
        assert "password" in found[0].get_deferred_fields()  # never cached
    assert calls(own_redis, "get") == before


def test_a_revocation_drops_the_token_from_every_process_before_it_returns(
    key: str, user: Any, local: token_cache.ProcessCache, other_process: token_cache.ProcessCache
) -> None:
    key_hash = token_hash(key)
    other_process.put(key_hash, ENTRY, 60, other_process.generation)
    token = ApiToken.objects.get(user=user)
    began = time.monotonic()
    account_services.token_revoke(user=user, token_id=token.pk)
    assert time.monotonic() - began < token_cache.LEASE_SECONDS / 2  # both confirmed
    assert other_process.get(key_hash) is None
    assert local.get(key_hash) is None
    assert account_services.token_authenticate(key) is None


def test_an_account_change_drops_its_tokens_from_every_process(
    key: str, user: Any, other_process: token_cache.ProcessCache
) -> None:
    other_process.put(token_hash(key), ENTRY, 60, other_process.generation)
    user.is_active = False
    user.save()
    assert other_process.get(token_hash(key)) is None
    assert account_services.token_authenticate(key) is None


def test_an_entry_read_before_a_revocation_is_not_kept_after_it(
    key: str, user: Any, other_process: token_cache.ProcessCache
) -> None:
    """A read of Redis that began before a revocation's message was handled, and ended
    after it, brings an entry that must not be kept."""
    generation = other_process.generation  # the other process sends its GET...
    account_services.token_revoke(user=user, token_id=ApiToken.objects.get(user=user).pk)
    other_process.put(token_hash(key), ENTRY, 60, generation)  # ...and its answer arrives
    assert other_process.get(token_hash(key)) is None


def test_a_message_for_other_tokens_keeps_this_one(
    key: str, other_user: Any, local: token_cache.ProcessCache
) -> None:
    token, other_key = account_services.token_create(user=other_user, name="bot")
    account_services.token_revoke(user=other_user, token_id=token.pk)
    assert local.get(token_hash(key)) is not None


def test_entries_are_bounded_least_recently_used_first(
    local: token_cache.ProcessCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(token_cache, "PROCESS_ENTRIES", 2)
    for name in ("a", "b"):
        local.put(name, ENTRY, 60, local.generation)
    assert local.get("a") is not None  # "b" is now the least recently used
    local.put("c", ENTRY, 60, local.generation)
    assert len(local) == 2
    assert (local.get("a"), local.get("b"), local.get("c")) == (ENTRY, None, ENTRY)


def test_an_entry_ends_with_its_time(local: token_cache.ProcessCache) -> None:
    local.put("a", ENTRY, 0.5, local.generation)
    assert local.get("a") == ENTRY
    time.sleep(0.6)
    assert local.get("a") is None and len(local) == 0


def test_an_entry_ends_no_later_than_the_redis_entry_it_copies(
    key: str, own_redis: RedisServer, other_process: token_cache.ProcessCache, settings: Any
) -> None:
    """The process cache keeps an entry only as long as Redis still holds it."""
    redis.Redis.from_url(own_redis.url).pexpire(token_cache._key(token_hash(key)), 800)
    settings.REDIS_PREFIX = settings.REDIS_PREFIX  # a new process cache here, empty
    local = token_cache.process_cache()
    assert local is not None and eventually(local.trusted)
    assert account_services.token_authenticate(key) is not None  # read from Redis, kept
    assert local.get(token_hash(key)) is not None
    time.sleep(0.9)
    assert local.get(token_hash(key)) is None


def test_a_dropped_subscription_empties_the_cache_at_once(
    key: str, own_redis: RedisServer, user: Any, other_process: token_cache.ProcessCache
) -> None:
    """Redis closes the other process's subscription, and a token is revoked before its
    listener is back: that process hears nothing of it, yet reads Redis on its next
    look-up, its cache emptied."""
    key_hash = token_hash(key)
    other_process.put(key_hash, ENTRY, 60, other_process.generation)
    admin = redis.Redis.from_url(own_redis.url)
    assert admin.client_kill_filter(_type="pubsub") >= 2  # both processes' subscriptions
    token = ApiToken.objects.get(user=user)
    account_services.token_revoke(user=user, token_id=token.pk)  # published to nobody
    assert other_process.get(key_hash) is None
    assert len(other_process) == 0
    assert account_services.token_authenticate(key) is None


class StalledListener(token_cache.ProcessCache):
    """A process whose listener subscribed, then never runs again (a busy process)."""

    def _listen(self) -> None:
        conn = self._subscribe()
        with self._lock:
            self._conn = conn
            conn.send_command("PING")
            self._pings.append(time.monotonic())
        self._stop.wait()
        conn.disconnect()


def test_a_message_the_listener_has_not_handled_is_read_before_an_answer(
    own_redis: RedisServer, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(token_cache, "LEASE_SECONDS", 1.5)  # trusted from its one ping
    stalled = StalledListener(own_redis.url, settings.REDIS_PREFIX, 0.3)
    try:
        assert eventually(stalled.trusted)  # the request's thread read the answer to the ping
        stalled.put("a", ENTRY, 60, stalled.generation)
        token_cache.forget(["a"])  # unconfirmed by the stalled process: waits out its lease
        assert len(stalled) == 1  # the message waits on the connection, unread
        assert stalled.get("a") is None
        assert len(stalled) == 0  # read and handled by the look-up itself
    finally:
        stalled.stop()


def test_a_killed_redis_empties_the_cache_and_postgresql_answers(
    key: str, own_redis: RedisServer, local: token_cache.ProcessCache
) -> None:
    own_redis.kill()
    assert local.get(token_hash(key)) is None
    assert not local.trusted()
    assert account_services.token_authenticate(key) is not None  # from PostgreSQL


def test_a_silent_redis_ends_the_trust_within_the_lease(
    fast_lease: None, own_redis: RedisServer, settings: Any
) -> None:
    """Redis stops answering without closing the connection (a partition, a stopped
    server): once the lease has run out, nothing is answered from the cache."""
    settings.REDIS_PREFIX = settings.REDIS_PREFIX  # a process cache with the short lease
    local = token_cache.process_cache()
    assert local is not None and eventually(local.trusted)
    local.put("a", ENTRY, 60, local.generation)
    own_redis.pause()
    try:
        time.sleep(token_cache.LEASE_SECONDS + 0.1)
        assert local.get("a") is None
        assert not local.trusted()
    finally:
        own_redis.resume()
    assert eventually(local.trusted)  # subscribed again, emptied
    assert local.get("a") is None


def test_a_revocation_waits_out_the_lease_of_a_process_that_does_not_confirm(
    fast_lease: None, key: str, own_redis: RedisServer, user: Any, settings: Any
) -> None:
    """A subscriber that never confirms (a process stalled or cut off): the revocation
    returns after the lease, when that process can no longer trust its cache."""
    silent = redis.Redis.from_url(own_redis.url).pubsub()
    silent.subscribe(token_cache._channel(settings.REDIS_PREFIX))
    try:
        began = time.monotonic()
        account_services.token_revoke(user=user, token_id=ApiToken.objects.get(user=user).pk)
        assert time.monotonic() - began >= token_cache.LEASE_SECONDS
    finally:
        silent.close()
    assert account_services.token_authenticate(key) is None


def test_without_a_process_cache_every_look_up_reads_redis(
    own_redis: RedisServer, user: Any, settings: Any
) -> None:
    settings.TOKEN_PROCESS_CACHE = False
    assert token_cache.process_cache() is None
    _, key = account_services.token_create(user=user, name="bot")
    assert account_services.token_authenticate(key) is not None
    before = calls(own_redis, "get")
    assert account_services.token_authenticate(key) is not None
    assert calls(own_redis, "get") == before + 1


def test_a_put_is_refused_while_the_cache_is_not_trusted(
    own_redis: RedisServer, local: token_cache.ProcessCache
) -> None:
    generation = local.generation
    own_redis.kill()
    assert not local.trusted()
    local.put("a", ENTRY, 60, generation)
    assert len(local) == 0


def test_look_ups_racing_revocations_never_keep_a_revoked_entry(
    own_redis: RedisServer, other_process: token_cache.ProcessCache
) -> None:
    """Another process looks the key up without pause (its cache, else Redis, keeping
    what Redis held) while this one fills and revokes it again and again: once a
    revocation has returned, that process never answers the entry."""
    r = redis.Redis.from_url(own_redis.url)
    key = token_cache._key("raced")
    stop = threading.Event()
    kept = []

    def look_ups() -> None:
        while not stop.is_set():
            if other_process.get("raced") is None:
                generation = other_process.generation
                value = r.get(key)
                time.sleep(random.random() / 200)  # a slow request: up to 5 ms to its answer
                if isinstance(value, bytes) and value != token_cache.NO_FILL:
                    other_process.put("raced", pickle.loads(value), 60, generation)
                    kept.append(1)

    reader = threading.Thread(target=look_ups)
    reader.start()
    try:
        for _ in range(60):
            r.set(key, pickle.dumps(ENTRY), ex=60)
            time.sleep(random.random() / 200)  # the reader looks it up meanwhile, or not
            token_cache.forget(["raced"])
            assert other_process.get("raced") is None
            time.sleep(0.01)  # a read begun before the revocation has answered by now
            assert other_process.get("raced") is None
    finally:
        stop.set()
        reader.join()
    assert kept  # the entry was kept between revocations
