"""patience_site/observability.py: /metrics behind its token, the request id, one log line a
request and a socket session, and no secret in any log line."""

from __future__ import annotations

import io
import json
import logging
from _io import StringIO
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client
from prometheus_client import REGISTRY
from pytest_django import Settings
from pythonjsonlogger.json import JsonFormatter

from accounts import services as account_services
from core.tracing import RequestIdFilter
from games.services import games as game_services
from patience_site.asgi import application
from tests.helpers import token_headers

TOKEN = "scrape-token-0123456789"


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """Every log record, of every logger, as the JSON lines LOG_FORMAT=json writes."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    django = logging.getLogger("django")
    django.addHandler(handler)
    yield stream
    root.removeHandler(handler)
    django.removeHandler(handler)
    root.setLevel(old_level)


def lines(stream: io.StringIO, logger: str) -> list[dict[str, Any]]:
    found = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [line for line in found if line["name"] == logger]


# -- /metrics ---------------------------------------------------------------------------------


def test_metrics_are_off_without_a_token(client: Client, settings: Settings) -> None:
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404


@pytest.mark.django_db
def test_metrics_need_the_bearer_token(client: Client, settings: Settings) -> None:
    settings.METRICS_TOKEN = TOKEN
    refused = client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong")
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics").status_code == 401
    scraped = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert scraped.status_code == 200
    assert b"# TYPE patience_moves_total counter" in scraped.content


@pytest.mark.django_db
def test_metrics_answer_any_host(client: Client, settings: Settings) -> None:
    """Prometheus scrapes each process at its own address: no ALLOWED_HOSTS entry for it."""
    settings.METRICS_TOKEN = TOKEN
    scraped = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", HTTP_HOST="10.1.2.3")
    assert scraped.status_code == 200


# -- HTTP ---------------------------------------------------------------------------------------


def test_answers_are_counted_by_route_and_status_class(client: Client) -> None:
    live = sample("patience_http_responses_total", route="api/v1/health/live/", status="2xx")
    missing = sample("patience_http_responses_total", route="api/v1/.*$", status="4xx")
    client.get("/api/v1/health/live/")
    client.get("/api/v1/no-such-thing/")
    assert sample("patience_http_responses_total", route="api/v1/health/live/", status="2xx") == (
        live + 1
    )
    assert sample("patience_http_responses_total", route="api/v1/.*$", status="4xx") == (
        missing + 1
    )


def test_the_request_id_is_the_clients_or_a_new_one(client: Client, json_log: StringIO) -> None:
    given = client.get("/api/v1/health/live/", HTTP_X_REQUEST_ID="abc-123")
    assert given["X-Request-ID"] == "abc-123"
    forged = client.get("/api/v1/health/live/", HTTP_X_REQUEST_ID="x\n{forged}")
    made = forged["X-Request-ID"]
    assert len(made) == 32 and made != "x\n{forged}"
    first, second = lines(json_log, "patience.request")
    assert first["request_id"] == "abc-123" and second["request_id"] == made
    assert first["method"] == "GET" and first["status"] == 200
    assert first["route"] == "api/v1/health/live/" and first["duration_ms"] >= 0


@pytest.mark.django_db(transaction=True)
def test_a_rest_move_is_counted_and_its_event_carries_the_request_id(
    api: Any, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core import events

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(events, "_group_send", lambda layer, group, message: sent.append(message))
    game = game_services.practice_game_start(user=user, variant="bristol", seed=1)
    state = api.get(f"/api/v1/games/{game.pk}/").json()
    moved = sample("patience_moves_total", transport="rest", outcome="ok")
    response = api.post(
        f"/api/v1/games/{game.pk}/moves/",
        {"move": state["legal_moves"][0], "ply": 0},
        format="json",
        HTTP_X_REQUEST_ID="move-42",
    )
    assert response.status_code == 200
    assert [m["request_id"] for m in sent if m["type"] == "game.moved"] == ["move-42"]
    assert sample("patience_moves_total", transport="rest", outcome="ok") == moved + 1


def test_no_secret_reaches_the_logs(
    client: Client,
    json_log: StringIO,
    make_user: Callable[..., Any],
    password: str,
    settings: Settings,
) -> None:
    """Log in with a password, then send a token, a session cookie and a bad password:
    none of them appears in any log line (request lines, Django's own, warnings)."""
    user = make_user("secretive")
    key = account_services.token_create(user=user, name="logs")[1]
    client.post(
        "/api/v1/auth/login/",
        {"username": "secretive", "password": password},
        content_type="application/json",
    )
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    client.get("/api/v1/auth/me/", HTTP_AUTHORIZATION=f"Token {key}")
    client.get(f"/api/v1/games/?token={key}", HTTP_AUTHORIZATION=f"Token {key}x")
    client.post(
        "/api/v1/auth/login/",
        {"username": "secretive", "password": "wrong-" + password},
        content_type="application/json",
    )
    text = json_log.getvalue()
    assert len(lines(json_log, "patience.request")) == 4
    for secret in (key, password, session):
        assert secret not in text
    assert "Authorization" not in text and "Cookie" not in text
    refused = lines(json_log, "django.request")  # Unauthorized: ...
    assert refused and all(line["request_id"] for line in refused)


# -- sockets ------------------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("channel_layers")
async def test_a_socket_session_and_its_moves_are_counted_and_logged(
    make_user: Callable[..., Any], json_log: StringIO
) -> None:
    from channels.db import database_sync_to_async

    user = await database_sync_to_async(make_user)("sock")
    key = (await database_sync_to_async(account_services.token_create)(user=user, name="ws"))[1]
    game = await database_sync_to_async(game_services.practice_game_start)(
        user=user, variant="bristol", seed=1
    )
    opened = sample("patience_open_sockets", kind="game")
    headers = [*token_headers(key), (b"x-request-id", b"sock-7")]
    socket = WebsocketCommunicator(application, f"/ws/v1/games/{game.pk}/?token={key}", headers)
    connected, _ = await socket.connect()
    assert connected
    first = await socket.receive_json_from()
    assert sample("patience_open_sockets", kind="game") == opened + 1
    moved = sample("patience_moves_total", transport="ws", outcome="ok")
    move = first["state"]["legal_moves"][0]
    await socket.send_json_to({"type": "move", "move": move, "ply": 0})
    assert (await socket.receive_json_from())["cause"] == "move"
    assert sample("patience_moves_total", transport="ws", outcome="ok") == moved + 1
    await socket.disconnect()
    assert sample("patience_open_sockets", kind="game") == opened
    (session,) = lines(json_log, "patience.socket")
    assert session["request_id"] == "sock-7" and session["kind"] == "game"
    assert session["frames_received"] == 1 and session["frames_sent"] == 2
    assert session["path"] == f"/ws/v1/games/{game.pk}/"
    assert key not in json_log.getvalue()
