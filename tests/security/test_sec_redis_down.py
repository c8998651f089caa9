"""With Redis down, every REST operation, every page and every socket message answers
without a 500 (issue 30: the hint cache was the one Redis use outside the breaker).

The REST operations are every operation of the OpenAPI schema, so a new endpoint
is walked without anyone adding it here; each gets schema-valid requests drawn
by schemathesis (derandomized) on the fuzzers' world of real objects
(``tests.security.world``). The pages are every route of ``web.urls`` with real
parameters, and the sockets every route of ``api.routing`` with every message
type a client may send. Redis is a redis-server of this test alone (``own_redis``),
killed before the walk.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import Client
from django.urls import URLPattern, get_resolver
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from redis.exceptions import ConnectionError
from schemathesis import GenerationMode

from api.routing import websocket_urlpatterns
from patience_site.wsgi import application
from tests.helpers import token_headers
from tests.security.helpers import Socket
from tests.security.world import OPERATIONS, SCHEMA, World

pytest_plugins = ["tests.daily_fixtures", "tests.own_redis"]
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("no_rate_limits", "isolated_boards"),
]

#: Requests per REST operation: enough to reach the view's logic, few enough to be quick.
EXAMPLES = 6

#: Each socket route, with a path made of the world's objects, and every message type
#: a client may send on it (``api.consumers``).
SOCKET_MESSAGES = {
    "ws/v1/games/<int:game_id>/": ["move", "undo", "hint", "resync", "resign"],
    "ws/v1/daily/<str:variant>/<str:day>/": ["resync"],
    "ws/v1/races/<str:code>/": ["ping"],
}


@pytest.fixture
def redis_down(own_redis: Any) -> Any:
    own_redis.kill()
    return own_redis


@pytest.mark.parametrize("label", OPERATIONS)
def test_every_operation_answers_without_a_500_while_redis_is_down(
    label: str, redis_down: Any
) -> None:
    op = SCHEMA.find_operation_by_label(label)
    assert op is not None
    world = World()
    names = [p.name for p in op.path_parameters]
    statuses: list[tuple[int, str]] = []

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=op.as_strategy(GenerationMode.POSITIVE), pick=st.integers(0, 10**6))
    def run(case: Any, pick: int) -> None:
        world.refresh()
        if names:
            case.path_parameters = {**(case.path_parameters or {}), **world.chosen(names, pick)}
        world.steer(op.label, case, pick)
        response = case.call(app=application, **world.credentials("token"))
        statuses.append((response.status_code, response.text[:300]))

    run()
    assert statuses
    assert not [s for s in statuses if s[0] == 500], statuses


def page_paths(world: World) -> list[str]:
    """Every page route with real parameters (the first value of each the world knows)."""
    values = {name: str(options[0]) for name, options in world.values.items()}
    paths = []
    for pattern in get_resolver("web.urls").url_patterns:
        assert isinstance(pattern, URLPattern)
        route = str(pattern.pattern)
        for name in pattern.pattern.regex.groupindex:
            route = route.replace(f"<int:{name}>", values[name]).replace(
                f"<str:{name}>", values[name]
            )
        paths.append("/" + route)
    return paths


def test_every_page_answers_without_a_500_while_redis_is_down(redis_down: Any) -> None:
    world = World()
    client = Client()
    client.force_login(world.user)
    answers = {path: client.get(path).status_code for path in page_paths(world)}
    assert len(answers) >= 15
    assert 500 not in answers.values(), answers


def test_the_socket_walk_covers_every_route() -> None:
    routes = {str(p.pattern) for p in websocket_urlpatterns if isinstance(p, URLPattern)}
    assert routes - {"^"} == set(SOCKET_MESSAGES)


@pytest.mark.asyncio
async def test_every_socket_message_is_answered_while_redis_is_down(own_redis: Any) -> None:
    """The sockets open first: one that opens while Redis is down is refused by Channels,
    which needs Redis for its channel (docs/reliability.md)."""
    world = await sync_to_async(World)()
    headers = token_headers(world.key)
    paths = {
        "ws/v1/games/<int:game_id>/": f"/ws/v1/games/{world.live.pk}/",
        "ws/v1/daily/<str:variant>/<str:day>/": f"/ws/v1/daily/bristol/{world.values['day'][1]}/",
        "ws/v1/races/<str:code>/": f"/ws/v1/races/{world.values['code'][0]}/",
    }
    sockets = {}
    for route in SOCKET_MESSAGES:
        sockets[route] = socket = Socket(paths[route], headers)
        sockets[route].first = await socket.open()
        assert socket.first.get("type") != "error", (route, socket.first)
    own_redis.kill()
    for route, kinds in SOCKET_MESSAGES.items():
        socket, first = sockets[route], sockets[route].first
        for kind in kinds:
            message: dict[str, Any] = {"type": kind}
            if kind in ("move", "undo"):
                state = first.get("state") or {}
                message["ply"] = state.get("ply", 0)
                if kind == "move":
                    message["move"] = state["legal_moves"][0]
            answer = await socket.ask(message)
            error = answer.get("error") or {}
            assert error.get("code") != "server_error", (route, kind, answer)
        with contextlib.suppress(ConnectionError):  # leaving its groups needs Redis
            await socket.close()
