"""The API's front door: the index at /api/v1/, and docs pages that need no internet."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import Resolver404, resolve

pytestmark = pytest.mark.django_db


def concrete(href: str, prefix: str) -> str:
    """A templated address with sample values, as a path."""
    path = href.removeprefix(prefix)
    return re.sub(r"\{(\w+)\}", lambda m: "7" if m.group(1).endswith("_id") else "x", path)


def test_the_index_links_every_part_of_the_api(client: Client) -> None:
    body = client.get("/api/v1/").json()
    assert body["title"] == "Patience API"
    links = {link["name"]: link for link in body["links"]}
    assert links["token-login"] == {
        "name": "token-login",
        "href": "http://testserver/api/v1/auth/token/",
        "methods": ["POST"],
        "description": "A new personal token for a user name and password: how a program signs in.",
    }
    assert links["games"]["methods"] == ["GET", "POST"]
    assert links["game-moves"]["href"] == "http://testserver/api/v1/games/{game_id}/moves/"
    assert {"docs", "redoc", "schema", "variants", "daily-board", "alltime"} <= set(links)
    for link in body["links"]:
        assert link["description"], link
        path = concrete(link["href"], "http://testserver")
        try:
            match = resolve(path)
        except Resolver404:  # pragma: no cover - the assertion below tells
            match = None
        assert match is not None and match.url_name == link["name"], link
    schema = client.get("/api/v1/schema/?format=json").json()
    documented = {link["href"].removeprefix("http://testserver") for link in body["links"]}
    assert set(schema["paths"]) <= documented


def test_the_index_lists_the_sockets(client: Client) -> None:
    sockets = client.get("/api/v1/").json()["sockets"]
    assert [s["href"] for s in sockets] == [
        "ws://testserver/ws/v1/games/{game_id}/",
        "ws://testserver/ws/v1/daily/{variant}/{day}/",
        "ws://testserver/ws/v1/races/{code}/",
    ]
    assert all(s["description"] for s in sockets)
    secure = client.get("/api/v1/", secure=True).json()["sockets"]
    assert secure[0]["href"].startswith("wss://")


def test_every_description_is_a_whole_sentence(client: Client) -> None:
    """A docstring's first sentence, however its lines are wrapped, never a cut line."""
    body = client.get("/api/v1/").json()
    described = [*body["links"], *body["sockets"]]
    cut = [d["description"] for d in described if not d["description"].endswith((".", "!", "?"))]
    assert not cut, cut
    links = {link["name"]: link["description"] for link in body["links"]}
    assert links["health"].endswith("``health/ready/`` tell the two cases apart).")
    assert links["health-live"] == "Liveness probe: the process answers."


@pytest.mark.parametrize("path", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_the_docs_pages_load_everything_from_this_server(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    page = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources, page
    for source in sources:
        assert source.startswith("/"), f"{path} loads {source} from elsewhere"
        if source.startswith("/static/"):
            assert finders.find(source.removeprefix("/static/")), source
    assert "cdn" not in page and "@latest" not in page and "googleapis" not in page
    assert any("drf_spectacular_sidecar" in s for s in sources)
