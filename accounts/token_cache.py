"""A presented token's row and its user's, cached in Redis: no PostgreSQL on the common path.

Every REST request with a token looks it up, so the look-up's statement was half
of PostgreSQL's work on a REST move. The entry for a key lives in Redis
(``REDIS_URL``, through ``core.redis_guard``), so every server process sees the
same entries, and revocation stays exact on all of them:

- whatever makes a token stop admitting (``token_revoke``; an admin edit or
  delete of the token; any save or delete of its user, deactivation included,
  through the model signals wired in ``accounts.apps``) first replaces the
  entry with a *no-fill mark*, before its own write reaches PostgreSQL. The
  next request on any process then misses and reads PostgreSQL, which has
  the change once it is committed;
- an entry is only ever added where no key is (Redis ``SET NX``), so
  a request that read the token from PostgreSQL just before the revocation
  committed cannot put it back: the mark is there. The mark outlives any such
  read (:data:`MARK_SECONDS` against :data:`FILL_WITHIN_SECONDS`);
- while Redis is unavailable, requests read PostgreSQL and fill nothing, and a
  revocation is refused (``Unavailable``, 503, nothing changed) rather than
  leave an entry behind that nobody could remove.

Without ``REDIS_URL`` every look-up reads PostgreSQL as before: a cache in each
process's memory could not be told of a revocation made by another process.
The user's password hash is never cached. A bulk ``QuerySet.update()`` or raw SQL
on users or tokens sends no signal: such a change reaches a cached token only
when its entry ends (``ENTRY_SECONDS``), so change accounts with ``save()``.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Iterable
from contextlib import suppress
from functools import cache, partial
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection, models

from accounts.models import ApiToken
from core.errors import Unavailable
from core.redis_guard import RedisUnavailable, client, guarded

#: An entry lives this long; its token's use is recorded when it is filled again.
ENTRY_SECONDS = 60
#: A no-fill mark lives this long: far longer than a revocation's transaction and a fill.
MARK_SECONDS = 3600
#: A fill whose read of PostgreSQL started longer ago than this is dropped.
FILL_WITHIN_SECONDS = 10
#: The value of a no-fill mark.
NO_FILL = b"no-fill"


def _key(key_hash: str) -> str:
    return f"{settings.REDIS_PREFIX}:token:{key_hash}"


@cache
def _fields() -> tuple[list[str], list[str]]:
    """The attribute names stored of a token and of its user (the password left out)."""

    def names(model: type[models.Model], leave_out: set[str]) -> list[str]:
        return [f.attname for f in model._meta.concrete_fields if f.attname not in leave_out]

    return names(ApiToken, set()), names(get_user_model(), {"password"})


def cached(key_hash: str) -> tuple[User, ApiToken] | None:
    """The cached user and token of a key, or None (not cached, marked, or Redis down)."""
    redis = client()
    if redis is None:
        return None
    try:
        entry = guarded(redis.get, _key(key_hash))
    except RedisUnavailable:  # logged by the guard: PostgreSQL answers meanwhile
        return None
    if entry is None or entry == NO_FILL:
        return None
    token_names, user_names = _fields()
    token_values, user_values = pickle.loads(entry)
    token = ApiToken.from_db(connection.alias, token_names, token_values)
    user = get_user_model().from_db(connection.alias, user_names, user_values)
    token.user = user
    return user, token


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
    with suppress(RedisUnavailable):  # logged by the guard; the next miss reads PostgreSQL
        guarded(partial(redis.set, _key(key_hash), value, ex=ENTRY_SECONDS, nx=True))


def forget(key_hashes: Iterable[str]) -> None:
    """Mark these keys no-fill before a write that may stop them admitting.

    Raises ``Unavailable`` when Redis cannot be told: the caller's write must not happen.
    """
    redis = client()
    if redis is None:
        return
    keys = [_key(h) for h in key_hashes]
    if not keys:
        return

    def mark() -> None:
        pipe = redis.pipeline(transaction=True)
        for key in keys:
            pipe.set(key, NO_FILL, ex=MARK_SECONDS)
        pipe.execute()

    try:
        guarded(mark)
    except RedisUnavailable:
        raise Unavailable(
            "the token cache cannot be updated just now: try again",
            details={"retry_after": 1},
        ) from None


def forget_user(user_id: Any) -> None:
    """Mark the keys of a user's tokens no-fill (before the user is changed or deleted)."""
    if client() is not None:
        active = ApiToken.objects.filter(user_id=user_id, revoked_at__isnull=True)
        forget(active.values_list("key_hash", flat=True))
