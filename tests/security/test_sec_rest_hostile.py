"""Hostile requests to every REST operation: each answer is documented, in the envelope, harmless.

schemathesis draws requests that fit the schema or break it field by field; this
module sends what it does not: bodies that are not JSON, nested too deep, too
large or of another media type, bad tokens on public endpoints, writes without
the CSRF token, requests over the rate limits, unknown methods and ``Accept``
types. Every answer is checked against the OpenAPI schema with schemathesis
(status documented for that operation, body the error envelope) and nothing
in the database changes.
"""

from __future__ import annotations

import json
from base64 import b64encode
from typing import Any

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts import services as account_services
from accounts.models import ApiToken
from api.pagination import CursorPage
from devtools.accounts import PASSWORD
from games.models import Game
from games.services import games as game_services
from patience_site.wsgi import application
from tests.security.helpers import assert_envelope, schema_operations

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_rate_limits", "raw_wsgi")]

#: Probes that an orchestrator calls with no credentials, at any rate (docs/operations.md).
HEALTH_PROBES = {"GET /api/v1/health/", "GET /api/v1/health/live/", "GET /api/v1/health/ready/"}

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
BODY_LIMIT = 64 * 1024


def _schema() -> dict[str, Any]:
    return json.loads(
        json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str)
    )


SCHEMA_DICT = _schema()
SCHEMA = schemathesis.openapi.from_dict(SCHEMA_DICT)
OPERATIONS = {op.label: op for op in schema_operations(SCHEMA)}
WRITES = sorted(label for label in OPERATIONS if label.split()[0] in ("POST", "DELETE"))
WITH_BODY = sorted(label for label, op in OPERATIONS.items() if op.body)


@pytest.fixture
def world() -> dict[str, Any]:
    users = get_user_model().objects
    me = users.create_user(username="ann", password=PASSWORD)
    game = game_services.practice_game_start(user=me, variant="bristol", seed=1)
    token, key = account_services.token_create(user=me, name="mine")
    spare, _ = account_services.token_create(user=me, name="spare")
    params = {
        "game_id": game.pk,
        "token_id": spare.pk,
        "variant": "bristol",
        "day": "2020-01-01",
        "result_id": 1,
        "username": "ann",
        "family": "bristol",
        "code": "nosuchrace",
    }
    return {"user": me, "game": game, "key": key, "params": params}


def snapshot() -> tuple:
    """What a refused request must leave as it was."""
    return (
        get_user_model().objects.count(),
        Game.objects.count(),
        list(Game.objects.order_by("pk").values_list("log", flat=True)),
        ApiToken.objects.filter(revoked_at__isnull=True).count(),
        list(Game.objects.order_by("pk").values_list("ply", "status")),
    )


def send(
    world: dict[str, Any],
    label: str,
    *,
    headers: dict[str, str] | None = None,
    cookies: dict[str, str] | None = None,
    data: bytes | None = None,
    checks: list | None = None,
) -> Any:
    """Call one operation (path parameters from the world) and check the answer with the schema."""
    op = OPERATIONS[label]
    names = [p.name for p in op.path_parameters]
    case = op.Case(path_parameters={n: world["params"][n] for n in names})
    extra: dict[str, Any] = {"data": data} if data is not None else {}
    response = case.call(app=application, headers=headers or {}, cookies=cookies or {}, **extra)
    case.validate_response(response, checks=checks or CHECKS)
    return response


def header(response: Any, name: str) -> str | None:
    """A header of a schemathesis response (lower-case names, lists of values)."""
    values = response.headers.get(name.lower())
    return values[0] if isinstance(values, list) else values


def error_of(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert header(response, "Content-Type") == "application/json"
    return assert_envelope(response.json())


def token(world: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Token {world['key']}"}


# -- bodies ---------------------------------------------------------------------------------


def _malformed() -> dict[str, tuple[bytes, str, int, str]]:
    """name: (body, content type, status, code)."""
    return {
        "truncated": (b'{"move": "deal", ', "application/json", 400, "parse_error"),
        "not utf-8": (b'{"move": "\xff\xfe"}', "application/json", 400, "parse_error"),
        "nested arrays": (b"[" * 5000, "application/json", 400, "parse_error"),
        "nested objects": (b'{"a":' * 5000, "application/json", 400, "parse_error"),
        "huge number": (b'{"ply": 1' + b"0" * 5000 + b"}", "application/json", 400, "parse_error"),
        "form": (b"variant=bristol", "application/x-www-form-urlencoded", 415, ""),
        "xml": (b"<move>deal</move>", "application/xml", 415, "unsupported_media_type"),
        "no type": (b'{"variant": "bristol"}', "", 415, "unsupported_media_type"),
    }


MALFORMED = _malformed()


@pytest.mark.parametrize("label", WITH_BODY)
@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_bodies_that_are_not_json_are_refused_in_the_envelope(
    world: dict[str, Any], label: str, kind: str
) -> None:
    body, content_type, status, code = MALFORMED[kind]
    before = snapshot()
    headers = {**token(world), "X-CSRFToken": "c" * 32}
    if content_type:
        headers["Content-Type"] = content_type
    response = send(world, label, headers=headers, cookies={"csrftoken": "c" * 32}, data=body)
    error = error_of(response, status)
    assert error["code"] == (code or "unsupported_media_type")
    assert snapshot() == before


def test_the_body_limit_is_64_kib() -> None:
    assert django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE == BODY_LIMIT


@pytest.mark.parametrize("label", WITH_BODY)
def test_an_oversized_body_is_413_in_the_envelope_and_changes_nothing(
    world: dict[str, Any], label: str
) -> None:
    """A valid JSON document just over the limit: refused before anything is parsed.

    (Operations without a request body never read one, so they ignore it.)
    """
    padding = "x" * BODY_LIMIT
    body = json.dumps({"variant": "bristol", "move": "deal", "ply": 0, "name": padding}).encode()
    before = snapshot()
    headers = {**token(world), "Content-Type": "application/json", "X-CSRFToken": "c" * 32}
    response = send(world, label, headers=headers, cookies={"csrftoken": "c" * 32}, data=body)
    error = error_of(response, 413)
    assert error["code"] == "request_too_large"
    assert snapshot() == before


def test_a_body_just_under_the_limit_is_read(db: None) -> None:
    client = APIClient()
    body = json.dumps({"username": "carol", "password": "p" * (BODY_LIMIT - 100)})
    assert len(body) < BODY_LIMIT
    response = client.post("/api/v1/auth/register/", body, content_type="application/json")
    assert error_of(response, 400)["code"] == "validation_error"  # password too long, not 413


def test_an_oversized_form_to_a_web_page_is_not_a_server_error(db: None) -> None:
    """The language switch (a Django form view): over the limit is a 400 page, not a 500."""
    client = Client(raise_request_exception=False)
    response = client.post("/i18n/setlang/", {"language": "de", "x": "y" * BODY_LIMIT})
    assert response.status_code == 400


# -- credentials ----------------------------------------------------------------------------


@pytest.mark.parametrize("label", sorted(OPERATIONS))
@pytest.mark.parametrize(
    "authorization",
    ["Token pt_not-a-real-token", "Bearer x", "Token", "Token a b", "Token \u00e9"],
)
def test_a_bad_token_is_401_everywhere_even_on_public_endpoints(
    world: dict[str, Any], label: str, authorization: str
) -> None:
    if label in HEALTH_PROBES:
        pytest.skip("the health probes read no credentials")
    before = snapshot()
    response = send(world, label, headers={"Authorization": authorization})
    error = error_of(response, 401)
    assert error["code"] == "authentication_failed"
    assert header(response, "WWW-Authenticate") == "Token"
    assert snapshot() == before


#: Reads no session, so it has no CSRF check (a password in, a token out).
SESSIONLESS = {"POST /api/v1/auth/token/"}


@pytest.mark.parametrize("label", [label for label in WRITES if label not in SESSIONLESS])
def test_session_writes_without_the_csrf_token_are_403(world: dict[str, Any], label: str) -> None:
    client = Client()
    client.force_login(world["user"])
    session = {"sessionid": client.cookies["sessionid"].value}
    before = snapshot()
    response = send(world, label, cookies=session, headers={"Content-Type": "application/json"})
    error = error_of(response, 403)
    assert error["code"] == "permission_denied"
    assert "CSRF" in error["message"]
    assert snapshot() == before


# -- rate limits, methods, media types --------------------------------------------------------


@pytest.mark.parametrize("label", sorted(OPERATIONS))
def test_every_operation_answers_429_with_retry_after_over_its_limit(
    world: dict[str, Any], label: str
) -> None:
    if label in HEALTH_PROBES:
        pytest.skip("the health probes are not rate limited")
    conf = dict(django_settings.REST_FRAMEWORK)
    conf["DEFAULT_THROTTLE_RATES"] = dict.fromkeys(conf["DEFAULT_THROTTLE_RATES"], "1/min")
    csrf: dict[str, Any] = {"cookies": {"csrftoken": "c" * 32}}
    with override_settings(REST_FRAMEWORK=conf):
        headers = {**token(world), "X-CSRFToken": "c" * 32}
        send(world, "GET /api/v1/variants/", headers=headers)  # spends the user's and IP's one
        send(world, "POST /api/v1/auth/login/", headers=headers, **csrf)  # and the auth one
        response = send(world, label, headers=headers, **csrf)
    error = error_of(response, 429)
    assert error["code"] == "throttled"
    assert 0 < int(header(response, "Retry-After") or "0") <= 60


def test_unknown_methods_are_405_with_allow_in_the_envelope(world: dict[str, Any]) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['key']}")
    for path, item in SCHEMA_DICT["paths"].items():
        url = path.format(**world["params"])
        allowed = {m.upper() for m in item}
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
            if method in allowed:
                continue
            response = client.generic(method, url, "{}", content_type="application/json")
            assert response.status_code == 405, (method, url, response.status_code)
            assert assert_envelope(response.json())["code"] == "method_not_allowed"
            assert allowed <= {m.strip() for m in response["Allow"].split(",")}


@pytest.mark.parametrize("label", sorted(OPERATIONS))
def test_an_accept_header_without_json_is_406_in_json(world: dict[str, Any], label: str) -> None:
    before = snapshot()
    response = send(world, label, headers={**token(world), "Accept": "text/html"})
    assert error_of(response, 406)["code"] == "not_acceptable"
    assert snapshot() == before


# -- paths and query strings ------------------------------------------------------------------


HOSTILE_TEXT = ["\x00", "%00", "\u00b2", "\u0663", "a" * 5000, "../../etc/passwd", "' OR 1=1 --"]


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_hostile_path_and_query_values_are_not_server_errors(
    world: dict[str, Any], text: str
) -> None:
    """Every string parameter of every GET, and the integer ones given text."""
    from urllib.parse import quote

    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['key']}")
    for label, op in OPERATIONS.items():
        method, path = label.split(" ", 1)
        if method != "GET":
            continue
        names = [p.name for p in op.path_parameters]
        for name in [*names, None]:
            params = {**world["params"], "day": "2020-01-01"}
            if name is not None:
                params[name] = quote(text, safe="")
            url = path.format(**params)
            query = {p.name: text for p in op.query} if name is None else {}
            response = client.get(url, query)
            assert response.status_code < 500, (url, query, response.content[:200])
            if response.status_code >= 400:
                assert_envelope(response.json())


def test_a_replay_step_of_unicode_digits_is_400(world: dict[str, Any]) -> None:
    """``"²".isdigit()`` is true but ``int("²")`` fails: such a step must be a 400."""
    from datetime import timedelta

    from core import clock
    from games.services import dailies as daily_services

    daily_services.dailies_create(first=clock.today() - timedelta(days=1), days=2)
    day = (clock.today() - timedelta(days=1)).isoformat()
    client = APIClient(raise_request_exception=False)
    for step in ("\u00b2", "\u0663", "-1", "1.5", " 1"):
        response = client.get(f"/api/v1/daily/bristol/{day}/results/1/replay/", {"step": step})
        assert response.status_code in (400, 404), (step, response.content[:200])
        assert_envelope(response.json())


def _cursor(token: str) -> str:
    """A cursor as a client could forge it (DRF's form: base64 of a query string)."""
    return b64encode(token.encode()).decode()


#: Cursors with huge or hostile positions and offsets, for every order's field type.
HOSTILE_CURSORS = [
    _cursor("p=" + "9" * 30),
    _cursor(f"p={2**63}"),
    _cursor("p=-" + "9" * 30),
    _cursor("o=" + "9" * 30),
    _cursor("p=\x00"),
    _cursor("p=" + "9" * 5000),
    "9" * 5000,
]


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/games/",
        "/api/v1/auth/tokens/",
        "/api/v1/leaderboards/bristol/",
        "/api/v1/daily/bristol/{yesterday}/board/",
        "/api/v1/races/leaderboards/bristol/",
    ],
)
@pytest.mark.parametrize("cursor", HOSTILE_CURSORS)
def test_hostile_cursors_are_refused_or_a_page_never_server_errors(
    world: dict[str, Any], url: str, cursor: str
) -> None:
    from datetime import timedelta

    from core import clock
    from games.services import dailies as daily_services

    daily_services.dailies_create(first=clock.today() - timedelta(days=1), days=2)
    url = url.format(yesterday=(clock.today() - timedelta(days=1)).isoformat())
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['key']}")
    response = client.get(url, {"cursor": cursor, "limit": "9" * 30})
    assert response.status_code in (200, 400), (url, response.content[:300])
    if response.status_code == 200:
        assert set(response.json()) >= {"next", "previous", "results"}
    else:
        assert response.json()["error"]["details"] == {
            "cursor": [CursorPage.invalid_cursor_message]
        }


@pytest.mark.parametrize(
    "url, query",
    [
        ("/api/v1/leaderboards/bristol/", {"limit": "9" * 30}),
        ("/api/v1/daily/bristol/{yesterday}/results/1/replay/", {"step": "9" * 5000}),
        ("/api/v1/daily/bristol/{yesterday}/results/1/replay/", {"step": "9" * 30}),
        ("/api/v1/daily/bristol/{yesterday}/board/", {"limit": "9" * 5000}),
        ("/api/v1/games/", {"limit": "9" * 5000}),
        ("/api/v1/games/99999999999999999999999999/", {}),
        ("/api/v1/auth/tokens/99999999999999999999999999/", {}),
    ],
)
def test_huge_numbers_are_refused_or_past_the_end_never_server_errors(
    world: dict[str, Any], url: str, query: dict[str, str]
) -> None:
    from datetime import timedelta

    from core import clock
    from games.services import dailies as daily_services

    daily_services.dailies_create(first=clock.today() - timedelta(days=1), days=2)
    url = url.format(yesterday=(clock.today() - timedelta(days=1)).isoformat())
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['key']}")
    method = client.delete if "tokens" in url else client.get
    response = method(url, query)
    assert response.status_code in (200, 400, 404), (url, response.content[:300])
    if response.status_code >= 400:
        assert_envelope(response.json())


@pytest.mark.parametrize("cursor", HOSTILE_CURSORS)
def test_a_web_page_with_a_hostile_cursor_is_a_page_or_400(db: None, cursor: str) -> None:
    for url in ("/leaderboards/bristol/", "/races/leaderboards/bristol/"):
        response = Client(raise_request_exception=False).get(url, {"cursor": cursor})
        assert response.status_code in (200, 400), (url, cursor)


@pytest.mark.parametrize(
    "cookie", ["abc\x00defghijkl", "\x00" * 32, "x" * 5000, "é" * 32, "' OR 1=1 --abcdef"]
)
def test_a_forged_session_cookie_is_an_anonymous_visitor_never_a_server_error(
    db: None, cookie: str
) -> None:
    """Session keys are looked up in the database (PostgreSQL refuses NUL in text)."""
    client = Client(raise_request_exception=False)
    client.cookies[django_settings.SESSION_COOKIE_NAME] = cookie
    assert client.get("/api/v1/variants/").status_code == 200
    assert client.get("/api/v1/auth/me/").status_code == 401
    assert client.get("/").status_code == 200
    assert client.get("/games/").status_code == 302  # to the login page


def test_the_player_page_with_a_nul_in_the_name_is_not_found(db: None) -> None:
    response = Client(raise_request_exception=False).get("/players/%00/")
    assert response.status_code == 404
