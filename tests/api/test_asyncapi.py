"""The AsyncAPI document of the WebSockets: served, complete, and true of real frames.

Every frame and close code any test's WebsocketCommunicator receives is checked against
it (``socket_frames_seen`` in tests/conftest.py); the tests here also open each socket
themselves and walk through its messages, so the check does not rest on other modules.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client
from pytest_django import Settings
from rest_framework.test import APIClient

from accounts import services as account_services
from api import consumers
from api.asyncapi import DOCUMENT
from api.routing import websocket_urlpatterns
from core import clock
from games import boards
from games.play import finish
from games.services import dailies as daily_services
from games.services import games as game_services
from games.services import races as race_services
from patience_site.asgi import application
from tests.helpers import token_headers
from tests.race_fixtures import pool
from tests.schemas import OPENAPI_URI, openapi_schema, socket_frames


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return yaml.safe_load(DOCUMENT.read_text())


def refs(node: Any) -> list[str]:
    """Every ``$ref`` in a document."""
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [
            r for k, v in node.items() if k != "$ref" for r in refs(v)
        ]
    if isinstance(node, list):
        return [r for item in node for r in refs(item)]
    return []


@pytest.mark.django_db
def test_it_is_served_beside_the_openapi_schema_as_yaml_and_json(
    client: Client, document: dict[str, Any]
) -> None:
    response = client.get("/api/v1/asyncapi/")
    assert response.status_code == 200 and response["Content-Type"] == "application/yaml"
    assert yaml.safe_load(response.content) == document
    as_json = client.get("/api/v1/asyncapi/", {"format": "json"})
    assert as_json.status_code == 200 and as_json["Content-Type"] == "application/json"
    assert as_json.json() == json.loads(json.dumps(document))
    assert document["asyncapi"] == "3.0.0"
    links = {link["name"]: link["href"] for link in client.get("/api/v1/").json()["links"]}
    assert links["asyncapi"] == "http://testserver/api/v1/asyncapi/"
    openapi = client.get("/api/v1/schema/", {"format": "json"}).json()
    assert "(/api/v1/asyncapi/)" in openapi["info"]["description"]  # Swagger UI and Redoc show it


def test_every_socket_route_is_a_channel(document: dict[str, Any]) -> None:
    routes = {
        "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(p.pattern))
        for p in websocket_urlpatterns
        if not str(p.pattern).startswith("^")
    }
    addresses = {c["address"] for c in document["channels"].values()}
    assert addresses == routes | {"/ws/{path}"}  # the last: the catch-all, closed with 4404


def test_every_close_code_is_declared_and_real(document: dict[str, Any]) -> None:
    constants = {v for k, v in vars(consumers).items() if k.startswith("CLOSE_")}
    declared = {code for c in document["channels"].values() for code in c["x-close-codes"]}
    assert declared == constants


def test_every_reference_resolves(document: dict[str, Any]) -> None:
    components = openapi_schema()["components"]["schemas"]
    frames = socket_frames()
    for ref in refs(document):
        if ref.startswith(OPENAPI_URI):
            assert ref.removeprefix(OPENAPI_URI + "#/components/schemas/") in components, ref
        else:
            assert frames.resolve(ref), ref


def test_every_example_is_its_message(document: dict[str, Any]) -> None:
    frames = socket_frames()
    examples = 0
    for message in document["components"]["messages"].values():
        for example in message.get("examples", ()):
            errors = list(frames.validator(message).iter_errors(example["payload"]))
            assert not errors, (message["name"], errors[0].message)
            examples += 1
    assert examples >= 10


# -- real frames -------------------------------------------------------------------------


def _player(name: str) -> tuple[Any, str]:
    user = get_user_model().objects.create_user(username=name, password="x" * 20)
    return user, account_services.token_create(user=user, name="ws")[1]


async def _open(path: str, headers: list[tuple[bytes, bytes]] | None = None) -> Any:
    socket = WebsocketCommunicator(application, path, headers=headers or [])
    connected, _ = await socket.connect()
    assert connected
    return socket


async def _ask(socket: Any, frame: Any) -> dict[str, Any]:
    await (socket.send_json_to(frame) if isinstance(frame, dict) else socket.send_to(frame))
    return await socket.receive_json_from(5)


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("channel_layers")
async def test_a_game_socket_sends_what_the_document_says(
    socket_frames_seen: list[tuple[str, str]],
) -> None:
    user, key = await database_sync_to_async(_player)("ann")
    game = await database_sync_to_async(game_services.practice_game_start)(
        user=user, variant="bristol", seed=1
    )
    path = f"/ws/v1/games/{game.pk}/"
    socket = await _open(path, token_headers(key))
    assert (await socket.receive_json_from(5))["cause"] == "connect"
    assert (await _ask(socket, {"type": "move", "move": "deal", "ply": 0}))["cause"] == "move"
    again = await _ask(socket, {"type": "move", "move": "deal", "ply": 0})
    assert again["duplicate"] is True
    stale = await _ask(socket, {"type": "undo", "ply": 0})
    assert stale["error"]["code"] == "stale_ply"
    assert (await _ask(socket, "not json"))["error"]["code"] == "bad_message"
    assert (await _ask(socket, {"type": "resync"}))["cause"] == "resync"
    assert (await _ask(socket, {"type": "undo", "ply": 1}))["cause"] == "undo"
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    moved = await database_sync_to_async(rest.post)(
        f"/api/v1/games/{game.pk}/moves/", {"move": "deal", "ply": 2}, format="json"
    )
    assert moved.status_code == 200
    assert (await socket.receive_json_from(5))["cause"] == "changed"
    assert (await _ask(socket, {"type": "resign"}))["cause"] == "resign"
    await socket.disconnect()
    stranger = await _open(path)
    assert (await stranger.receive_output(5))["code"] == consumers.CLOSE_UNAUTHENTICATED
    nowhere = await _open("/ws/v1/nothing/", token_headers(key))
    assert (await nowhere.receive_output(5))["code"] == consumers.CLOSE_NOT_FOUND
    assert set(socket_frames_seen) == {
        ("game", "state"),
        ("game", "error"),
        ("game", "4401"),
        ("other", "4404"),
    }


def _today_with_a_result() -> str:
    """Today's dailies dealt, today's Bristol board rebuilt from this database."""
    today = clock.today()
    for deal in daily_services.dailies_create(first=today, days=1):
        boards.board_drop(deal.pk)
    return today.isoformat()


def _finish_ranked(name: str) -> None:
    user, _ = _player(name)
    game, _ = daily_services.daily_game_start(user=user, variant="bristol", day=clock.today())
    finish.resign(game_id=game.pk, user=user)


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("channel_layers")
async def test_a_board_socket_sends_what_the_document_says(
    socket_frames_seen: list[tuple[str, str]],
) -> None:
    day = await database_sync_to_async(_today_with_a_result)()
    socket = await _open(f"/ws/v1/daily/bristol/{day}/")
    assert (await socket.receive_json_from(5))["type"] == "board"
    assert (await _ask(socket, {"type": "resync"}))["type"] == "board"
    assert (await _ask(socket, {"type": "ping"}))["error"]["code"] == "bad_message"
    await database_sync_to_async(_finish_ranked)("bob")
    assert (await socket.receive_json_from(5))["type"] == "board.result"
    await socket.disconnect()
    bad_day = await _open("/ws/v1/daily/bristol/yesterday/")
    assert (await bad_day.receive_output(5))["code"] == consumers.CLOSE_BAD_REQUEST
    assert set(socket_frames_seen) == {
        ("dailyBoard", "board"),
        ("dailyBoard", "error"),
        ("dailyBoard", "board.result"),
        ("dailyBoard", "4400"),
    }


def _open_race(settings: Any) -> tuple[str, str]:
    pool(settings)
    user, key = _player("cy")
    return race_services.race_create(user=user, variant="bristol").code, key


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("channel_layers")
async def test_a_race_socket_sends_what_the_document_says(
    socket_frames_seen: list[tuple[str, str]], settings: Settings
) -> None:
    code, key = await database_sync_to_async(_open_race)(settings)
    socket = await _open(f"/ws/v1/races/{code}/", token_headers(key))
    assert (await socket.receive_json_from(5))["type"] == "race.state"
    assert (await _ask(socket, {"type": "ping"}))["type"] == "pong"
    assert (await _ask(socket, {"type": "resync"}))["error"]["code"] == "bad_message"
    await socket.disconnect()
    unknown = await _open("/ws/v1/races/nosuchrace/")
    assert (await unknown.receive_output(5))["code"] == consumers.CLOSE_NOT_FOUND
    assert set(socket_frames_seen) == {
        ("race", "race.state"),
        ("race", "pong"),
        ("race", "error"),
        ("race", "4404"),
    }


def test_a_frame_the_document_does_not_allow_fails() -> None:
    frames = socket_frames()
    with pytest.raises(AssertionError, match="sends no 'board'"):
        frames.check_frame("/ws/v1/games/1/", '{"type": "board"}')
    with pytest.raises(AssertionError, match="Additional properties"):
        frames.check_frame("/ws/v1/races/x/", '{"type": "pong", "extra": 1}')
    with pytest.raises(AssertionError, match="does not declare"):
        frames.check_close("/ws/v1/races/x/", consumers.CLOSE_UNAUTHENTICATED)
