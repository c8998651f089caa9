"""A token cached in one server process's own memory is refused there the moment it is
revoked through another process.

Two processes share one database and one Redis: two daphne processes (the
``servers`` fixture), and two gunicorn masters of one gthread worker each (forked,
as the ``http`` service runs). Each round proves that process A answers the token
from its own cache (the Redis entry is altered behind it, and A still answers
what it kept), revokes it through B, and expects A's very next request refused.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
import requests

from devtools.servers import start_gunicorn, stop, wait_until_up
from tests.e2e.conftest import redis_prefix

pytestmark = pytest.mark.e2e

TIMEOUT = 15
ROUNDS = 6


def token_session(key: str) -> requests.Session:
    s = requests.Session()
    s.trust_env = False
    s.headers["Authorization"] = f"Token {key}"
    return s


def alter_redis_entry(r: redis.Redis, entry_key: str, username: str, new: str) -> None:
    """Change the user name in the token's Redis entry, telling no process of it."""
    value = r.get(entry_key)
    assert isinstance(value, bytes) and value != b"no-fill", value
    token_values, user_values = pickle.loads(value)
    assert username in user_values
    user_values = tuple(new if v == username else v for v in user_values)
    assert r.set(entry_key, pickle.dumps((token_values, user_values)), keepttl=True, xx=True)


def revoke_through_b_refused_at_once_by_a(
    a: str,
    b: str,
    player: tuple[str, str],
    r: redis.Redis,
    prefix: str,
) -> None:
    username, key = player
    api = token_session(key)
    for _ in range(2):  # the first fills Redis and A's cache, the second is A's hit
        me = api.get(f"{a}/api/v1/auth/me/", timeout=TIMEOUT)
        assert me.status_code == 200, me.text
    entry_key = f"{prefix}:token:{hashlib.sha256(key.encode()).hexdigest()}"
    alter_redis_entry(r, entry_key, username, "altered-behind-a")
    me = api.get(f"{a}/api/v1/auth/me/", timeout=TIMEOUT)
    assert me.json()["username"] == username  # answered from A's own memory, not Redis

    (token,) = api.get(f"{b}/api/v1/auth/tokens/", timeout=TIMEOUT).json()["results"]
    gone = api.delete(f"{b}/api/v1/auth/tokens/{token['id']}/", timeout=TIMEOUT)
    assert gone.status_code == 204, gone.text
    refused = api.get(f"{a}/api/v1/auth/me/", timeout=TIMEOUT)
    assert refused.status_code == 401, refused.text
    assert refused.json()["error"]["code"] == "authentication_failed"


@pytest.fixture
def redis_of_servers(e2e_redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(e2e_redis_url)
    try:
        yield client
    finally:
        client.close()


def test_daphne_a_token_revoked_through_one_process_is_refused_by_the_other_at_once(
    servers: list[str],
    e2e_env: dict[str, str],
    e2e_player: Callable[[], tuple[str, str]],
    redis_of_servers: redis.Redis,
) -> None:
    a, b = servers
    prefix = redis_prefix(e2e_env["DATABASE_URL"])
    for _ in range(ROUNDS):
        revoke_through_b_refused_at_once_by_a(a, b, e2e_player(), redis_of_servers, prefix)


@pytest.fixture
def gunicorns(e2e_env: dict[str, str], tmp_path: Path) -> Iterator[list[str]]:
    """Two gunicorn masters on the shared database, one forked gthread worker each."""
    started = []
    bases = []
    try:
        for label in ("a", "b"):
            log = (tmp_path / f"gunicorn-{label}.log").open("w")
            server, base = start_gunicorn(e2e_env, log, threads=4)
            started.append(server)
            bases.append(base)
        for server, base in zip(started, bases, strict=True):
            wait_until_up(server, base, timeout=120)
        yield bases
    finally:
        stop(started)


def test_gunicorn_a_token_revoked_through_one_process_is_refused_by_the_other_at_once(
    gunicorns: list[str],
    e2e_env: dict[str, str],
    e2e_player: Callable[[], tuple[str, str]],
    redis_of_servers: redis.Redis,
) -> None:
    a, b = gunicorns
    prefix = redis_prefix(e2e_env["DATABASE_URL"])
    for _ in range(ROUNDS):
        revoke_through_b_refused_at_once_by_a(a, b, e2e_player(), redis_of_servers, prefix)
