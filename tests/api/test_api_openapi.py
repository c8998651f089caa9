"""The OpenAPI schema: valid, complete (every route under /api/v1/), errors in the envelope."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.urls import URLPattern

from api.urls import urlpatterns

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Routes that serve the schema itself rather than being part of the API.
SCHEMA_ROUTES = {"/api/v1/schema/", "/api/v1/docs/", "/api/v1/redoc/", "/api/v1/asyncapi/"}
METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The schema written by ``manage.py spectacular``, which must validate without warnings."""
    out = tmp_path_factory.mktemp("schema") / "schema.yaml"
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--validate",
            "--fail-on-warn",
            "--file",
            str(out),
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Warning" not in result.stderr, result.stderr
    return yaml.safe_load(out.read_text())


def operations(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield path, method, op


def routes() -> set[str]:
    """Every route of api/urls.py, in OpenAPI's path syntax."""
    out = set()
    for pattern in urlpatterns:
        assert isinstance(pattern, URLPattern)
        route = str(pattern.pattern)
        if route.startswith("^"):  # the catch-all 404
            continue
        out.add("/api/v1/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route))
    return out


def test_schema_validates_and_is_openapi_3(schema: dict) -> None:
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Patience API"


def test_every_endpoint_is_documented(schema: dict) -> None:
    documented = set(schema["paths"])
    expected = routes() - SCHEMA_ROUTES
    assert documented == expected
    for path in (
        "/api/v1/games/{game_id}/moves/",
        "/api/v1/games/{game_id}/undo/",
        "/api/v1/games/{game_id}/resign/",
        "/api/v1/auth/tokens/{token_id}/",
        "/api/v1/auth/register/",
        "/api/v1/auth/login/",
        "/api/v1/auth/logout/",
    ):
        assert path in documented


def test_the_error_envelope_is_a_component(schema: dict) -> None:
    components = schema["components"]["schemas"]
    error = components["Error"]
    assert error["required"] == ["error"]
    assert error["properties"]["error"] == {"$ref": "#/components/schemas/ErrorBody"}
    body = components["ErrorBody"]
    assert set(body["required"]) == {"code", "message", "details"}
    assert set(body["properties"]) == {"code", "message", "details"}


def test_every_error_response_is_the_envelope(schema: dict) -> None:
    errors = 0
    for path, method, op in operations(schema):
        for status, response in op["responses"].items():
            if int(status) >= 400:
                ref = response["content"]["application/json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/Error", (method, path, status)
                assert response["description"], (method, path, status)
                errors += 1
    assert errors > 40


def test_operations_that_need_a_login_document_401(schema: dict) -> None:
    for path, method, op in operations(schema):
        anonymous_ok = {} in op.get("security", [{}])
        if not anonymous_ok:
            assert "401" in op["responses"], (method, path)


def test_game_operations_document_their_errors(schema: dict) -> None:
    paths = schema["paths"]
    moves = paths["/api/v1/games/{game_id}/moves/"]["post"]
    assert {"200", "400", "401", "404", "409", "429"} <= set(moves["responses"])
    examples = moves["responses"]["409"]["content"]["application/json"]["examples"]
    assert any(e["value"]["error"]["code"] == "stale_ply" for e in examples.values())
    examples = moves["responses"]["400"]["content"]["application/json"]["examples"]
    assert any(e["value"]["error"]["code"] == "illegal_move" for e in examples.values())
    assert moves["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MoveInput"
    }
    assert {"404", "409"} <= set(paths["/api/v1/games/{game_id}/undo/"]["post"]["responses"])
    assert {"404", "409"} <= set(paths["/api/v1/games/{game_id}/resign/"]["post"]["responses"])
    start = paths["/api/v1/games/"]["post"]
    assert {"201", "400"} <= set(start["responses"])
    listing = paths["/api/v1/games/"]["get"]["responses"]["200"]
    assert listing["content"]["application/json"]["schema"]["$ref"].endswith(
        "PaginatedGameStateList"
    )


def test_the_public_game_state_has_no_stock_cards(schema: dict) -> None:
    components = schema["components"]["schemas"]
    position = components["Position"]["properties"]
    assert position["stock"]["type"] == "integer"
    state = components["GameState"]["properties"]
    assert "deal" in state and "legal_moves" in state


def test_token_authentication_is_documented(schema: dict) -> None:
    schemes = schema["components"]["securitySchemes"]
    assert schemes["tokenAuth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": schemes["tokenAuth"]["description"],
    }
    assert "cookieAuth" in schemes
