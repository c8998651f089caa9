"""The pages for a first visit: today's practice deal to play at once, and a guest's pages."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from core import clock
from games.engine import new_position
from games.services import guests as guest_services

pytestmark = pytest.mark.django_db


@pytest.fixture
def guest_client(client: Any) -> Any:
    client.force_login(guest_services.guest_start(address="203.0.113.9"))
    return client


def first_deal(html: str) -> dict[str, Any]:
    found = re.search(r'<script id="first-deal" type="application/json">(.*?)</script>', html)
    assert found, "the landing page has today's practice deal"
    return json.loads(found.group(1))


def test_a_visitor_sees_todays_practice_deal_without_its_stock(client: Any) -> None:
    html = client.get("/").content.decode()
    deal = first_deal(html)
    assert deal["seed"] == int(clock.today().strftime("%Y%m%d"))
    full = new_position(deal["variant"]["key"], seed=deal["seed"]).to_json()
    assert deal["position"]["piles"] == {k: v for k, v in full["piles"].items() if k != "s"}
    assert deal["position"]["stock"] == len(full["piles"]["s"]) > 0
    # No card of the stock leaves the server (Bristol has one deck: every card once).
    dealt = {c for pile in deal["position"]["piles"].values() for c in pile}
    assert not dealt & set(full["piles"]["s"])
    assert all(f'"{card}"' not in html for card in full["piles"]["s"])
    assert 'id="first-play"' in html and 'id="practice-form"' in html


def test_a_registered_player_gets_the_calendar_instead(logged_in: Any) -> None:
    html = logged_in.get("/").content.decode()
    assert 'id="first-deal"' not in html and 'id="calendar"' in html


def test_a_guest_is_named_guest_and_offered_to_register(guest_client: Any) -> None:
    html = guest_client.get("/").content.decode()
    assert "guest:" not in html
    assert '<span class="username">Guest</span>' in html
    assert 'id="first-deal"' in html and "/register/" in html
    assert "/account/tokens/" not in html


def test_a_guest_plays_their_game_page(guest_client: Any) -> None:
    guest = get_user_model().objects.get(pk=guest_client.get("/api/v1/auth/me/").json()["id"])
    game = guest_services.practice_start(user=guest, variant="bristol")
    html = guest_client.get(f"/play/{game.pk}/").content.decode()
    assert 'class="guest-note"' in html
    assert f"/register/?next=/play/{game.pk}/" in html.replace("%2F", "/")
    assert guest_client.get("/games/").status_code == 200


@pytest.mark.parametrize("url", ["/account/tokens/"])
def test_account_pages_send_a_guest_to_register(guest_client: Any, url: str) -> None:
    response = guest_client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/register/")


def test_race_pages_offer_a_guest_no_join(guest_client: Any) -> None:
    html = guest_client.get("/races/").content.decode()
    assert "Log in to race" in html
    assert re.search(r"data-quick[^>]*disabled", html)
