"""Rate limits: per user, per client IP, and for log-in attempts; 429 with Retry-After."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.http import HttpRequest
from django.test import override_settings
from rest_framework.request import Request
from rest_framework.test import APIClient
from rest_framework.views import APIView

from devtools.servers import RedisServer

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.own_redis"]

ME = "/api/v1/auth/me/"
LOGIN = "/api/v1/auth/login/"


def rates(**lowered: str) -> dict:
    """The REST_FRAMEWORK settings with some throttle rates replaced."""
    conf = dict(settings.REST_FRAMEWORK)
    conf["DEFAULT_THROTTLE_RATES"] = {**conf["DEFAULT_THROTTLE_RATES"], **lowered}
    return conf


def assert_throttled(response: Any) -> None:
    assert response.status_code == 429, response.content
    body = response.json()
    assert body["error"]["code"] == "throttled"
    assert set(body["error"]) == {"code", "message", "details"}
    wait = int(response["Retry-After"])
    assert 0 < wait <= 60


def test_per_user_limit(user: Any, other_user: Any, token_client: Callable[..., Any]) -> None:
    ann = token_client(user)
    bob = token_client(other_user, REMOTE_ADDR="10.0.0.2")
    with override_settings(REST_FRAMEWORK=rates(user="3/min", ip="1000/min")):
        for _ in range(3):
            assert ann.get(ME).status_code == 200
        assert_throttled(ann.get(ME))
        assert_throttled(ann.post("/api/v1/games/", {"variant": "bristol"}, format="json"))
        # Another account is counted on its own.
        assert bob.get(ME).status_code == 200


def test_the_user_limit_follows_the_account_across_addresses(
    user: Any, token_client: Callable[..., Any]
) -> None:
    one = token_client(user, REMOTE_ADDR="10.0.0.1")
    two = token_client(user, REMOTE_ADDR="10.0.0.2")
    with override_settings(REST_FRAMEWORK=rates(user="2/min", ip="1000/min")):
        assert one.get(ME).status_code == 200
        assert two.get(ME).status_code == 200
        assert_throttled(one.get(ME))
        assert_throttled(two.get(ME))


def test_per_ip_limit_covers_several_accounts(
    user: Any, other_user: Any, token_client: Callable[..., Any]
) -> None:
    ann = token_client(user)
    bob = token_client(other_user)
    elsewhere = token_client(other_user, REMOTE_ADDR="10.9.9.9")
    with override_settings(REST_FRAMEWORK=rates(user="1000/min", ip="4/min")):
        assert ann.get(ME).status_code == 200
        assert bob.get(ME).status_code == 200
        assert ann.get(ME).status_code == 200
        assert bob.get(ME).status_code == 200
        assert_throttled(ann.get(ME))
        assert_throttled(bob.get(ME))
        # The same account from another address is not held back by this one's limit.
        assert elsewhere.get(ME).status_code == 200


def test_anonymous_requests_are_limited_by_address(db: None) -> None:
    client = APIClient()
    with override_settings(REST_FRAMEWORK=rates(user="2/min", ip="1000/min")):
        assert client.get("/api/v1/variants/").status_code == 200
        assert client.get("/api/v1/variants/").status_code == 200
        assert_throttled(client.get("/api/v1/variants/"))


def test_login_attempts_are_limited(user: Any, password: str) -> None:
    client = APIClient()
    other = APIClient(REMOTE_ADDR="10.0.0.7")
    with override_settings(REST_FRAMEWORK=rates(auth="3/min")):
        for _ in range(3):
            response = client.post(LOGIN, {"username": "ann", "password": "guess"}, format="json")
            assert response.status_code == 401
        # Even the right password waits now: guessing is capped per address.
        assert_throttled(
            client.post(LOGIN, {"username": "ann", "password": password}, format="json")
        )
        assert_throttled(
            client.post(
                "/api/v1/auth/register/", {"username": "x", "password": password}, format="json"
            )
        )
        response = other.post(LOGIN, {"username": "ann", "password": password}, format="json")
        assert response.status_code == 200


def test_default_rates_do_not_hold_back_normal_play(api: Any) -> None:
    for _ in range(30):
        assert api.get(ME).status_code == 200


def test_each_client_costs_one_counter_in_the_cache(
    user: Any, token_client: Callable[..., Any]
) -> None:
    from api.throttling import UserThrottle, throttle_cache

    api = token_client(user)
    for _ in range(25):
        assert api.get(ME).status_code == 200
    key = UserThrottle.cache_format % {"scope": "user", "ident": user.pk}
    assert throttle_cache().get(key) == 25  # a number, not a list of request times


def test_overlapping_requests_are_all_counted() -> None:
    """Concurrent requests of one client: exactly the rate gets through, no count is lost."""
    from concurrent.futures import ThreadPoolExecutor

    from api.throttling import UserThrottle

    class OneClient(UserThrottle):
        def get_cache_key(self, request: Request, view: APIView) -> str:
            return "throttle_test_one_client"

    request, view = Request(HttpRequest()), APIView()  # unread: the key is fixed
    with override_settings(REST_FRAMEWORK=rates(user="30/min")):

        def attempt(_: int) -> bool:
            return OneClient().allow_request(request, view)

        with ThreadPoolExecutor(max_workers=8) as pool:
            allowed = list(pool.map(attempt, range(48)))
    assert allowed.count(True) == 30


def test_retry_after_is_the_time_left_in_the_window(
    user: Any, token_client: Callable[..., Any]
) -> None:
    import time

    api = token_client(user)
    with override_settings(REST_FRAMEWORK=rates(user="2/min", ip="1000/min")):
        assert api.get(ME).status_code == 200  # the window opens here
        time.sleep(1.2)
        assert api.get(ME).status_code == 200
        response = api.get(ME)
        assert_throttled(response)
        assert response["Retry-After"] == "59"


def test_the_limit_lifts_when_the_window_ends(user: Any, token_client: Callable[..., Any]) -> None:
    import time

    api = token_client(user)
    with override_settings(REST_FRAMEWORK=rates(user="2/s", ip="1000/min")):
        assert api.get(ME).status_code == 200
        assert api.get(ME).status_code == 200
        response = api.get(ME)
        assert response.status_code == 429
        assert response["Retry-After"] == "1"
        time.sleep(1.1)
        assert api.get(ME).status_code == 200


def test_admin_login_attempts_are_limited_on_the_same_budget(
    make_user: Callable[..., Any], password: str
) -> None:
    from django.test import Client

    make_user("boss", is_staff=True, is_superuser=True)
    admin = Client()
    api = APIClient()
    guess = {"username": "boss", "password": "guess"}
    with override_settings(REST_FRAMEWORK=rates(auth="4/min")):
        for _ in range(3):
            assert admin.post("/admin/login/", guess).status_code == 200  # the form again
        assert api.post(LOGIN, guess, format="json").status_code == 401  # wrong password
        # Even the right password waits now, on the admin and on the API.
        refused = admin.post("/admin/login/", {"username": "boss", "password": password})
        assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 60
        assert_throttled(api.post(LOGIN, {"username": "boss", "password": password}, format="json"))
        assert admin.get("/admin/login/").status_code == 200  # reading the form is not an attempt
        other = Client(REMOTE_ADDR="10.0.0.7")
        assert (
            other.post("/admin/login/", {"username": "boss", "password": password}).status_code
            == 302
        )


def test_both_windows_refuse_until_the_later_one_ends(
    user: Any, token_client: Callable[..., Any]
) -> None:
    api = token_client(user)
    with override_settings(REST_FRAMEWORK=rates(user="1/min", ip="1/s")):
        assert api.get(ME).status_code == 200
        response = api.get(ME)  # refused by both: the account's window ends last
        assert_throttled(response)
        assert response["Retry-After"] == "60"


def test_both_windows_cost_one_redis_command(
    own_redis: RedisServer,
    user: Any,
    token_client: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import redis

    from api.throttling import IpThrottle, UserThrottle, throttle_cache

    sent = []
    execute = redis.Redis.execute_command

    def counted(client: redis.Redis, *args: Any, **kwargs: Any) -> Any:
        sent.append(args[0])
        return execute(client, *args, **kwargs)

    api = token_client(user)
    assert api.get(ME).status_code == 200  # the token is cached now
    monkeypatch.setattr(redis.Redis, "execute_command", counted)
    assert api.get(ME).status_code == 200
    assert sent.count("EVALSHA") == 1 and not {"INCRBY", "MULTI"} & set(sent)
    user_key = UserThrottle.cache_format % {"scope": "user", "ident": user.pk}
    ip_key = IpThrottle.cache_format % {"scope": "ip", "ident": "127.0.0.1"}
    assert throttle_cache().get(user_key) == 2
    assert throttle_cache().get(ip_key) == 2
    raw = redis.Redis.from_url(own_redis.url)
    assert 0 < raw.ttl(throttle_cache().make_key(user_key)) <= 60  # the window expires


def test_limits_hold_per_process_while_redis_is_down(
    own_redis: RedisServer, user: Any, token_client: Callable[..., Any]
) -> None:
    api = token_client(user)
    own_redis.kill()
    with override_settings(REST_FRAMEWORK=rates(user="2/min", ip="1000/min")):
        assert api.get(ME).status_code == 200
        assert api.get(ME).status_code == 200
        assert_throttled(api.get(ME))
