"""The token look-up from Redis: no statement on the common path, revocation exact.

Each test runs its own redis-server (``own_redis``): a revoked token, a deactivated
or deleted account, a deleted or re-keyed token is refused on the very next
request; a read of PostgreSQL made just before a revocation cannot put the token
back; with Redis down, tokens authenticate from PostgreSQL and a revocation is
refused (503, nothing changed) rather than leave a cached entry behind.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from accounts import selectors as account_selectors
from accounts import services as account_services
from accounts import token_cache
from accounts.models import ApiToken
from core.errors import Unavailable
from devtools.servers import RedisServer

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.own_redis"]

ME = "/api/v1/auth/me/"


def tokens_url(token: ApiToken) -> str:
    return f"/api/v1/auth/tokens/{token.pk}/"


@pytest.fixture
def key(own_redis: Any, user: Any) -> str:
    """A token of ``user``, its entry in the cache (one look-up from PostgreSQL done)."""
    _, key = account_services.token_create(user=user, name="bot")
    assert account_services.token_authenticate(key) is not None
    return key


def test_a_cached_token_authenticates_without_a_statement(key: str, user: Any) -> None:
    with CaptureQueriesContext(connection) as captured:
        found = account_services.token_authenticate(key)
    assert captured.captured_queries == []
    assert found is not None
    got_user, token = found
    assert (got_user.pk, got_user.username, got_user.is_active) == (user.pk, "ann", True)
    assert token == ApiToken.objects.get(user=user) and token.user is got_user
    assert "password" in got_user.get_deferred_fields()  # never cached


def test_rest_requests_with_a_cached_token_run_no_token_statement(
    own_redis: RedisServer, api: Any
) -> None:
    assert api.get(ME).status_code == 200  # fills the entry
    with CaptureQueriesContext(connection) as captured:
        assert api.get(ME).status_code == 200
    assert not [q for q in captured.captured_queries if "games_apitoken" in q["sql"]]


def test_an_unknown_key_is_refused_and_not_cached(own_redis: RedisServer, user: Any) -> None:
    assert account_services.token_authenticate("pt_unknown") is None
    assert account_services.token_authenticate("pt_unknown") is None
    assert own_redis_keys(own_redis, "token:") == []


def own_redis_keys(server: Any, part: str) -> list[bytes]:
    import redis

    return [k for k in redis.Redis.from_url(server.url).scan_iter() if part.encode() in k]


def test_a_revoked_token_is_refused_on_the_next_request(
    own_redis: RedisServer, api: Any, user: Any
) -> None:
    assert api.get(ME).status_code == 200
    token = ApiToken.objects.get(user=user)
    assert api.delete(tokens_url(token)).status_code == 204
    answer = api.get(ME)
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "authentication_failed"
    assert account_services.token_authenticate(api.token_key) is None


def test_a_deactivated_account_is_refused_on_the_next_request(key: str, user: Any) -> None:
    user.is_active = False
    user.save()
    assert account_services.token_authenticate(key) is None
    user.is_active = True  # active again: admitted again, from PostgreSQL
    user.save()
    assert account_services.token_authenticate(key) is not None


def test_a_renamed_account_is_read_again(key: str, user: Any) -> None:
    user.username = "annabel"
    user.save()
    found = account_services.token_authenticate(key)
    assert found is not None and found[0].username == "annabel"


def test_a_deleted_account_or_token_is_refused(key: str, user: Any, other_user: Any) -> None:
    _, other_key = account_services.token_create(user=other_user, name="bot")
    assert account_services.token_authenticate(other_key) is not None
    ApiToken.objects.get(user=other_user).delete()
    assert account_services.token_authenticate(other_key) is None
    user.delete()
    assert account_services.token_authenticate(key) is None


def test_a_token_given_a_new_key_refuses_the_old_one(key: str, user: Any) -> None:
    token = ApiToken.objects.get(user=user)
    token.key_hash = account_selectors.token_hash("pt_new")
    token.save()
    assert account_services.token_authenticate(key) is None
    assert account_services.token_authenticate("pt_new") is not None


def test_a_read_from_before_a_revocation_cannot_put_the_token_back(
    own_redis: RedisServer, user: Any
) -> None:
    token, key = account_services.token_create(user=user, name="bot")
    read_at = time.monotonic()
    found = account_selectors.token_user(key)  # a request read the row, then stalled
    assert found is not None
    account_services.token_revoke(user=user, token_id=token.pk)
    token_cache.fill(account_selectors.token_hash(key), *found, read_at=read_at)
    assert token_cache.cached(account_selectors.token_hash(key)) is None
    assert account_services.token_authenticate(key) is None


def test_a_fill_from_an_old_read_is_dropped(own_redis: RedisServer, user: Any) -> None:
    _, key = account_services.token_create(user=user, name="bot")
    found = account_selectors.token_user(key)
    assert found is not None
    old = time.monotonic() - token_cache.FILL_WITHIN_SECONDS - 1
    token_cache.fill(account_selectors.token_hash(key), *found, read_at=old)
    assert token_cache.cached(account_selectors.token_hash(key)) is None


def test_the_use_is_recorded_when_the_entry_is_filled(key: str, user: Any) -> None:
    token = ApiToken.objects.get(user=user)
    assert token.last_used_at is not None
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=None)
    account_services.token_authenticate(key)  # from the cache: nothing written
    token.refresh_from_db()
    assert token.last_used_at is None


def test_with_redis_down_tokens_authenticate_from_postgresql(
    key: str, api: Any, own_redis: RedisServer
) -> None:
    own_redis.kill()
    assert account_services.token_authenticate(key) is not None
    assert api.get(ME).status_code == 200


def test_with_redis_down_a_revocation_is_refused_and_changes_nothing(
    own_redis: RedisServer, api: Any, user: Any
) -> None:
    assert api.get(ME).status_code == 200
    token = ApiToken.objects.get(user=user)
    own_redis.kill()
    answer = api.delete(tokens_url(token))
    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "unavailable"
    assert answer["Retry-After"] == "1"
    token.refresh_from_db()
    assert token.revoked_at is None
    user.is_active = False
    with pytest.raises(Unavailable):
        user.save()


def test_with_redis_down_an_admin_edit_of_an_account_answers_503(
    key: str, own_redis: RedisServer, user: Any, rf: RequestFactory
) -> None:
    from patience_site.middleware import DatabaseUnavailableMiddleware

    own_redis.kill()
    user.is_active = False
    with pytest.raises(Unavailable) as refused:
        user.save()
    middleware = DatabaseUnavailableMiddleware(lambda request: None)  # type: ignore[arg-type,return-value]
    answer = middleware.process_exception(rf.post("/admin/"), refused.value)
    assert answer is not None and answer.status_code == 503 and answer["Retry-After"] == "1"
