"""Accounts over REST: register, log in and out, CSRF, the current user, personal tokens."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from pytest_django import Settings
from rest_framework.test import APIClient

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db

REGISTER = "/api/v1/auth/register/"
LOGIN = "/api/v1/auth/login/"
LOGOUT = "/api/v1/auth/logout/"
ME = "/api/v1/auth/me/"
CSRF = "/api/v1/auth/csrf/"
TOKENS = "/api/v1/auth/tokens/"


def error_of(response: Any, status: int) -> dict[str, Any]:
    """The error envelope of a response, after checking its status and shape."""
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["message"]
    return body["error"]


# -- register -------------------------------------------------------------------------------


def test_register_creates_the_account_and_logs_in(password: str) -> None:
    client = APIClient()
    response = client.post(
        REGISTER,
        {"username": "carol", "password": password, "email": "c@example.com"},
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["username"] == "carol"
    assert body["email"] == "c@example.com"
    assert set(body) == {"id", "username", "email", "date_joined"}
    assert "password" not in response.content.decode()
    assert client.get(ME).json()["username"] == "carol"


def test_register_with_a_weak_password_is_a_validation_error() -> None:
    response = APIClient().post(REGISTER, {"username": "carol", "password": "12345"}, format="json")
    error = error_of(response, 400)
    assert error["code"] == "validation_error"
    assert error["details"]["password"]
    assert not get_user_model().objects.filter(username="carol").exists()


def test_register_with_a_taken_username_is_refused(user: Any, password: str) -> None:
    response = APIClient().post(REGISTER, {"username": "Ann", "password": password}, format="json")
    error = error_of(response, 400)
    assert error["code"] == "validation_error"
    assert error["details"] == {"username": ["taken"]}


@pytest.mark.parametrize(
    "look_alike",
    [
        "\u0430dmin",  # Cyrillic а
        "\uff41\uff44\uff4d\uff49\uff4e",  # full-width letters
        "ADMIN",
        "adm\u0456n",  # Cyrillic і
    ],
)
def test_register_refuses_a_name_that_looks_like_a_taken_one(
    make_user: Callable[..., Any], password: str, look_alike: str
) -> None:
    make_user("admin")
    response = APIClient().post(
        REGISTER, {"username": look_alike, "password": password}, format="json"
    )
    error = error_of(response, 400)
    assert error["details"] == {"username": ["taken"]}
    assert "looks like" in error["message"]
    assert get_user_model().objects.count() == 1


def test_register_accepts_names_that_only_share_letters(password: str) -> None:
    for name in ("admin", "admin2", "adm1n", "\u0430\u0431\u0432"):
        response = APIClient().post(
            REGISTER, {"username": name, "password": password}, format="json"
        )
        assert response.status_code == 201, (name, response.content)


def test_register_with_missing_or_bad_fields_is_refused(password: str) -> None:
    error = error_of(APIClient().post(REGISTER, {"password": password}, format="json"), 400)
    assert error["code"] == "validation_error"
    assert "username" in error["details"]
    error = error_of(
        APIClient().post(REGISTER, {"username": "a b", "password": password}, format="json"), 400
    )
    assert "username" in error["details"]


# -- log in and out, the current user ---------------------------------------------------------


def test_login_and_me_and_logout(user: Any, password: str) -> None:
    client = APIClient()
    response = client.post(LOGIN, {"username": "ann", "password": password}, format="json")
    assert response.status_code == 200
    assert response.json()["username"] == "ann"
    assert response.json()["id"] == user.pk

    me = client.get(ME)
    assert me.status_code == 200
    assert me.json() == {
        "id": user.pk,
        "username": "ann",
        "email": "",
        "date_joined": me.json()["date_joined"],
    }

    assert client.post(LOGOUT).status_code == 204
    assert error_of(client.get(ME), 401)["code"] == "not_authenticated"


def test_login_with_a_wrong_password_is_refused(user: Any) -> None:
    client = APIClient()
    response = client.post(LOGIN, {"username": "ann", "password": "wrong"}, format="json")
    error = error_of(response, 401)
    assert error["code"] == "authentication_failed"
    assert response["WWW-Authenticate"] == "Token"
    assert error_of(client.get(ME), 401)["code"] == "not_authenticated"


def test_login_of_an_unknown_user_or_without_fields_is_refused(db: None) -> None:
    error = error_of(
        APIClient().post(LOGIN, {"username": "nobody", "password": "x"}, format="json"), 401
    )
    assert error["code"] == "authentication_failed"
    error = error_of(APIClient().post(LOGIN, {}, format="json"), 400)
    assert set(error["details"]) == {"username", "password"}


def test_me_unauthenticated_is_401_with_www_authenticate(db: None) -> None:
    response = APIClient().get(ME)
    error = error_of(response, 401)
    assert error["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Token"


# -- CSRF on session-authenticated writes ------------------------------------------------------


def csrf_client() -> tuple[APIClient, str]:
    client = APIClient(enforce_csrf_checks=True)
    response = client.get(CSRF)
    assert response.status_code == 200
    token = response.json()["csrf_token"]
    assert client.cookies["csrftoken"].value
    return client, token


def test_session_writes_need_the_csrf_token(user: Any, password: str) -> None:
    client, token = csrf_client()
    error = error_of(
        client.post(LOGIN, {"username": "ann", "password": password}, format="json"), 403
    )
    assert error["code"] == "permission_denied"

    assert (
        client.post(
            LOGIN, {"username": "ann", "password": password}, format="json", HTTP_X_CSRFTOKEN=token
        ).status_code
        == 200
    )
    # Logging in rotates the CSRF token: fetch the new one.
    token = client.get(CSRF).json()["csrf_token"]

    error = error_of(client.post("/api/v1/games/", {"variant": "bristol"}, format="json"), 403)
    assert error["code"] == "permission_denied"
    assert "CSRF" in error["message"]
    response = client.post(
        "/api/v1/games/", {"variant": "bristol"}, format="json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 201

    assert client.post(TOKENS, {"name": "x"}, format="json").status_code == 403
    assert (
        client.post(TOKENS, {"name": "x"}, format="json", HTTP_X_CSRFTOKEN=token).status_code == 201
    )

    assert client.post(LOGOUT).status_code == 403
    assert client.get(ME).status_code == 200
    assert client.post(LOGOUT, HTTP_X_CSRFTOKEN=token).status_code == 204
    assert client.get(ME).status_code == 401


def test_register_needs_the_csrf_token(password: str) -> None:
    client, token = csrf_client()
    data = {"username": "carol", "password": password}
    assert error_of(client.post(REGISTER, data, format="json"), 403)["code"] == "permission_denied"
    assert client.post(REGISTER, data, format="json", HTTP_X_CSRFTOKEN=token).status_code == 201


def test_token_requests_need_no_csrf_token(user: Any, token_client: Callable[..., Any]) -> None:
    client = token_client(user, enforce_csrf_checks=True)
    assert client.post("/api/v1/games/", {"variant": "bristol"}, format="json").status_code == 201


# -- personal tokens ---------------------------------------------------------------------------


def test_token_is_shown_once_and_authenticates(user: Any, password: str) -> None:
    session = APIClient()
    session.force_login(user)
    created = session.post(TOKENS, {"name": "my bot"}, format="json")
    assert created.status_code == 201
    body = created.json()
    key = body["token"]
    assert body["name"] == "my bot"
    assert body["prefix"] == key[:10]
    assert body["last_used_at"] is None

    listed = session.get(TOKENS)
    assert listed.status_code == 200
    assert [t["id"] for t in listed.json()["results"]] == [body["id"]]
    assert "token" not in listed.json()["results"][0]
    assert key not in listed.content.decode()

    for keyword in ("Token", "Bearer", "token"):
        program = APIClient()
        program.credentials(HTTP_AUTHORIZATION=f"{keyword} {key}")
        me = program.get(ME)
        assert me.status_code == 200, keyword
        assert me.json()["username"] == "ann"
    assert ApiToken.objects.get(pk=body["id"]).last_used_at is not None


def test_token_list_shows_only_my_active_tokens(
    user: Any, other_user: Any, token_client: Callable[..., Any]
) -> None:
    ann = token_client(user)
    bob = token_client(other_user)
    mine = ann.post(TOKENS, {"name": "second"}, format="json").json()
    names = [t["name"] for t in ann.get(TOKENS).json()["results"]]
    assert sorted(names) == ["second", "tests"]
    assert [t["name"] for t in bob.get(TOKENS).json()["results"]] == ["tests"]
    assert ann.delete(f"{TOKENS}{mine['id']}/").status_code == 204
    assert [t["name"] for t in ann.get(TOKENS).json()["results"]] == ["tests"]


def test_revoked_token_is_refused(user: Any, token_client: Callable[..., Any]) -> None:
    client = token_client(user)
    token_id = client.get(TOKENS).json()["results"][0]["id"]
    assert client.delete(f"{TOKENS}{token_id}/").status_code == 204
    response = client.get(ME)
    error = error_of(response, 401)
    assert error["code"] == "authentication_failed"
    assert response["WWW-Authenticate"] == "Token"


def test_unknown_or_malformed_token_is_refused(db: None) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token pt_not-a-real-key")
    assert error_of(client.get(ME), 401)["code"] == "authentication_failed"
    client.credentials(HTTP_AUTHORIZATION="Token two words")
    assert error_of(client.get(ME), 401)["code"] == "authentication_failed"
    client.credentials(HTTP_AUTHORIZATION="Token")
    assert error_of(client.get(ME), 401)["code"] == "authentication_failed"


def test_revoking_someone_elses_token_is_not_found(
    user: Any, other_user: Any, token_client: Callable[..., Any]
) -> None:
    ann = token_client(user)
    bob = token_client(other_user)
    bob_token = bob.get(TOKENS).json()["results"][0]["id"]
    error = error_of(ann.delete(f"{TOKENS}{bob_token}/"), 404)
    assert error["code"] == "not_found"
    assert bob.get(ME).status_code == 200
    assert error_of(ann.delete(f"{TOKENS}999999/"), 404)["code"] == "not_found"


def test_token_name_is_required(api: Any) -> None:
    error = error_of(api.post(TOKENS, {}, format="json"), 400)
    assert error["code"] == "validation_error"
    assert "name" in error["details"]


def test_token_endpoints_need_authentication(db: None) -> None:
    assert error_of(APIClient().get(TOKENS), 401)["code"] == "not_authenticated"
    assert (
        error_of(APIClient().post(TOKENS, {"name": "x"}, format="json"), 401)["code"]
        == "not_authenticated"
    )
    assert error_of(APIClient().delete(f"{TOKENS}1/"), 401)["code"] == "not_authenticated"


# -- a token for a user name and password ------------------------------------------------------

TOKEN = "/api/v1/auth/token/"


def test_a_password_gets_a_new_token_without_csrf_or_session(user: Any, password: str) -> None:
    client = APIClient(enforce_csrf_checks=True)
    response = client.post(
        TOKEN, {"username": "ann", "password": password, "name": "bot"}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"id", "name", "prefix", "created_at", "last_used_at", "token"}
    assert body["name"] == "bot" and body["token"].startswith(body["prefix"])
    assert "sessionid" not in response.cookies and "csrftoken" not in response.cookies
    assert error_of(client.get(ME), 401)["code"] == "not_authenticated"  # no session

    client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    assert client.get(ME).json()["username"] == "ann"
    started = client.post("/api/v1/games/", {"variant": "bristol"}, format="json")
    assert started.status_code == 201  # a write with a token: no CSRF token
    assert client.post(LOGOUT).status_code == 204


def test_the_token_endpoint_ignores_a_session_and_its_csrf(user: Any, password: str) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(TOKEN, {"username": "ann", "password": password}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["name"] == "api"
    assert ApiToken.objects.filter(user=user).count() == 1


def test_a_wrong_password_gets_no_token(user: Any) -> None:
    client = APIClient()
    for name, secret in (("ann", "wrong"), ("nobody", "wrong"), ("ANN", "x")):
        response = client.post(TOKEN, {"username": name, "password": secret}, format="json")
        assert error_of(response, 401)["code"] == "authentication_failed"
    assert error_of(client.post(TOKEN, {"username": "ann"}, format="json"), 400)["details"] == {
        "password": ["This field is required."]
    }
    assert not ApiToken.objects.exists()


def test_the_token_endpoint_is_rate_limited_like_log_in(
    user: Any, password: str, settings: Settings
) -> None:
    conf = dict(settings.REST_FRAMEWORK)
    conf["DEFAULT_THROTTLE_RATES"] = {**conf["DEFAULT_THROTTLE_RATES"], "auth": "2/min"}
    settings.REST_FRAMEWORK = conf
    client = APIClient()
    for _ in range(2):
        client.post(TOKEN, {"username": "ann", "password": "wrong"}, format="json")
    response = client.post(TOKEN, {"username": "ann", "password": password}, format="json")
    assert error_of(response, 429)["code"] == "throttled"
    assert int(response["Retry-After"]) > 0
    assert not ApiToken.objects.exists()
    # The budget is shared with log-in: one address, one count.
    response = client.post(LOGIN, {"username": "ann", "password": password}, format="json")
    assert error_of(response, 429)["code"] == "throttled"
