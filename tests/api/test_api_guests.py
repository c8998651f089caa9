"""Guests over REST: a visitor plays practice without an account, capped per address, never
ranked, and keeps the games on registering or logging in."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from accounts.models import Guest
from core import clock
from games.models import Game
from tests.api.test_api_accounts import error_of
from tests.pinned_clock import PINNED_DAY

pytestmark = pytest.mark.django_db

GUEST = "/api/v1/auth/guest/"
GAMES = "/api/v1/games/"


@pytest.fixture
def visitor() -> APIClient:
    """A browser with a guest session, from the address ``REMOTE_ADDR`` gives it."""
    client = APIClient()
    response = client.post(GUEST)
    assert response.status_code == 201, response.content
    return client


def test_a_visitor_becomes_a_guest_and_plays_practice(visitor: APIClient) -> None:
    me = visitor.get("/api/v1/auth/me/").json()
    assert me["username"].startswith("guest:")
    response = visitor.post(GAMES, {"variant": "bristol", "seed": 7}, format="json")
    assert response.status_code == 201
    game = response.json()
    assert game["kind"] == "practice" and not game["ranked"]
    move = game["legal_moves"][0]
    moves = f"{GAMES}{game['id']}/moves/"
    played = visitor.post(moves, {"move": move, "ply": 0}, format="json")
    assert played.status_code == 200 and played.json()["ply"] == 1
    illegal = visitor.post(moves, {"move": "t1-t1", "ply": 1}, format="json")
    assert illegal.status_code == 400  # the server judges a guest's moves as anyone's
    assert [g["id"] for g in visitor.get(GAMES).json()["results"]] == [game["id"]]


def test_a_signed_in_browser_stays_itself(user: Any, password: str) -> None:
    client = APIClient()
    client.force_login(user)
    response = client.post(GUEST)
    assert response.status_code == 200 and response.json()["username"] == "ann"
    assert not Guest.objects.exists()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", f"/api/v1/daily/bristol/{PINNED_DAY.isoformat()}/play/", None),
        ("post", "/api/v1/races/quick/", {"variant": "bristol"}),
        ("post", "/api/v1/races/", {"variant": "bristol"}),
        ("post", "/api/v1/auth/tokens/", {"name": "bot"}),
        ("get", "/api/v1/auth/tokens/", None),
    ],
)
def test_a_guest_never_ranks_nor_takes_tokens(
    visitor: APIClient, method: str, path: str, body: dict[str, str] | None
) -> None:
    response = getattr(visitor, method)(path, body, format="json")
    error = error_of(response, 403)
    assert error["code"] == "guest_not_allowed"
    assert not Game.objects.filter(ranked=True).exists()


def test_the_cap_per_address_is_429_guest_limit(settings: Settings) -> None:
    settings.GUEST_GAMES_PER_HOUR = 2
    first, second = APIClient(REMOTE_ADDR="192.0.2.1"), APIClient(REMOTE_ADDR="192.0.2.1")
    for client in (first, second):
        assert client.post(GUEST).status_code == 201
    assert first.post(GAMES, {"variant": "bristol"}, format="json").status_code == 201
    assert second.post(GAMES, {"variant": "bristol"}, format="json").status_code == 201
    response = first.post(GAMES, {"variant": "bristol"}, format="json")
    error = error_of(response, 429)
    assert error["code"] == "guest_limit"
    assert int(response["Retry-After"]) == error["details"]["retry_after"] > 0
    # A third guest from the address is refused too: clearing cookies gains nothing.
    assert error_of(APIClient(REMOTE_ADDR="192.0.2.1").post(GUEST), 429)["code"] == "guest_limit"
    assert APIClient(REMOTE_ADDR="192.0.2.2").post(GUEST).status_code == 201


def test_registering_keeps_the_game_in_progress(visitor: APIClient, password: str) -> None:
    game = visitor.post(GAMES, {"variant": "picture-gallery"}, format="json").json()
    response = visitor.post(
        "/api/v1/auth/register/", {"username": "carol", "password": password}, format="json"
    )
    assert response.status_code == 201
    assert visitor.get("/api/v1/auth/me/").json()["username"] == "carol"
    state = visitor.get(f"{GAMES}{game['id']}/")
    assert state.status_code == 200 and state.json()["status"] == "playing"
    assert not Guest.objects.exists()
    # Now an account: the daily is open to it.
    today = clock.today().isoformat()
    assert visitor.post(f"/api/v1/daily/bristol/{today}/play/").status_code == 201


def test_logging_in_takes_the_guests_games_along(
    visitor: APIClient, user: Any, password: str
) -> None:
    game = visitor.post(GAMES, {"variant": "bristol"}, format="json").json()
    response = visitor.post(
        "/api/v1/auth/login/", {"username": "ann", "password": password}, format="json"
    )
    assert response.status_code == 200
    assert visitor.get(f"{GAMES}{game['id']}/").status_code == 200
    assert Game.objects.get(pk=game["id"]).player == user
    assert not Guest.objects.exists()
