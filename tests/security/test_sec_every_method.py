"""Every route of the site answers every HTTP method without a 5xx, for every kind of
caller: a signed-in account, a guest and an anonymous visitor.

The routes come from the root URLconf itself (admin, API, pages, i18n), so a new route
is walked without anyone adding it here; path parameters are filled with the fuzzers'
real objects (``tests.security.world``). An API error answers with the one envelope.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils.regex_helper import normalize

from games.services import guests as guest_services
from tests.security.world import World

pytest_plugins = ["tests.daily_fixtures"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("no_rate_limits", "isolated_boards"),
]

METHODS = ("get", "head", "post", "put", "patch", "delete", "options", "trace")

#: Path parameters the world has no objects for (the admin's own routes).
ADMIN_VALUES = {"app_label": "games", "content_type_id": "1", "url": "nowhere"}


def _routes(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    """Every route's regular expression, from the root URLconf down."""
    for pattern in patterns:
        regex = prefix + pattern.pattern.regex.pattern.lstrip("^")
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, regex.rstrip("$"))
        else:
            assert isinstance(pattern, URLPattern)
            yield regex


def site_paths(world: World) -> list[str]:
    """One path per route of the site, its parameters filled with real values."""
    values = {name: str(options[0]) for name, options in world.values.items()}
    values |= ADMIN_VALUES | {"object_id": str(world.live.pk), "id": str(world.user.pk)}
    paths = []
    for regex in _routes(get_resolver().url_patterns):
        form, names = normalize(regex)[0]
        path = "/" + form % {name: values[name] for name in names}
        paths.append(path + "no/such/route/" if ".*" in regex else path)  # a catch-all
    return sorted(set(paths))


def signed_in(role: str, world: World) -> Any:
    """The caller: the world's user, a guest, or nobody (``None``)."""
    if role == "account":
        return world.user
    return guest_services.guest_start(address="192.0.2.7") if role == "guest" else None


def enveloped(body: bytes) -> bool:
    """Whether an answer's body is the API's error envelope."""
    try:
        error = json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    return isinstance(error, dict) and {"code", "message", "details"} <= error.keys()


def test_the_walk_covers_the_whole_site() -> None:
    world = World()
    paths = site_paths(world)
    assert any(p.startswith("/admin/") for p in paths)
    assert f"/api/v1/games/{world.live.pk}/moves/" in paths
    assert {"/", "/api/v1/auth/tokens/", "/api/v1/no/such/route/", "/jsi18n/"} <= set(paths)
    assert len(paths) > 100


@pytest.mark.parametrize("role", ["account", "guest", "anonymous"])
def test_every_route_answers_every_method_without_a_server_error(role: str) -> None:
    world = World()
    user = signed_in(role, world)
    failures = []
    for path in site_paths(world):
        for method in METHODS:
            world.refresh()  # a resigned game or a revoked token is undone
            client = Client(raise_request_exception=False)
            if user is not None:
                client.force_login(user)  # a logout on the way is undone
            response = getattr(client, method)(path)
            status = response.status_code
            api_error = path.startswith("/api/") and status >= 400 and method != "head"
            if status >= 500 or (api_error and not enveloped(response.content)):
                failures.append((method.upper(), path, status, response.content[:200]))
    assert not failures, failures
