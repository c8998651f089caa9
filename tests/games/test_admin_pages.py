"""Admin: every page loads for staff; the verify action reports tampered games."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.contrib.messages import ERROR, INFO, get_messages
from django.db.models import Model
from django.test import Client
from django.urls import reverse

from accounts import services as account_services
from accounts.models import ApiToken
from games.models import Deal, Game
from games.play import move as play_move
from games.services import games as game_services
from tests.helpers import stored_log, swap_piles, tamper_log

pytestmark = pytest.mark.django_db


@pytest.fixture
def games(user: Any) -> list[Game]:
    """Two played games of ``user``: a deal, a move, an undo each."""
    out = []
    for seed in (3, 4):
        game = game_services.practice_game_start(user=user, variant="bristol", seed=seed)
        play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=0)
        play_move.apply_move(game_id=game.pk, user=user, move="undo", ply=1)
        play_move.apply_move(game_id=game.pk, user=user, move="deal", ply=2)
        out.append(game)
    account_services.token_create(user=user, name="bot")
    return out


def url(model: type[Model], view: str, *args: object) -> str:
    meta = model._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=args)


@pytest.mark.parametrize("model", [Deal, Game, ApiToken])
def test_changelist_and_change_page_load(
    staff_client: Any,
    games: list[Game],
    model: type[Deal] | type[Game] | type[ApiToken],
) -> None:
    obj = model.objects.order_by("pk").first()
    assert obj is not None
    response = staff_client.get(url(model, "changelist"))
    assert response.status_code == 200
    assert str(obj) in response.content.decode()
    assert staff_client.get(url(model, "change", obj.pk)).status_code == 200


@pytest.mark.parametrize("model", [Deal, Game, ApiToken])
def test_changelist_search_and_filters_load(
    staff_client: Any,
    games: list[Game],
    model: type[Deal] | type[Game] | type[ApiToken],
) -> None:
    model_admin = admin.site._registry[model]
    assert model_admin.search_fields
    assert staff_client.get(url(model, "changelist"), {"q": "ann"}).status_code == 200
    for name in model_admin.list_filter:
        field = name[0] if isinstance(name, tuple | list) else name
        response = staff_client.get(url(model, "changelist"), {f"{field}__isnull": "False"})
        assert response.status_code == 200


def test_every_registered_model_of_games_and_accounts_has_a_working_changelist(
    staff_client: Any, games: list[Game]
) -> None:
    models = [m for m in admin.site._registry if m._meta.app_label in ("games", "accounts")]
    assert {Deal, Game, ApiToken} <= set(models)
    for model in models:
        assert staff_client.get(url(model, "changelist")).status_code == 200, model


def test_game_page_shows_the_log_inline_and_read_only(staff_client: Any, games: list[Game]) -> None:
    game = games[0]
    page = staff_client.get(url(Game, "change", game.pk)).content.decode()
    assert "0: deal at " in page and ": undo at " in page
    assert 'name="log"' not in page and 'name="position"' not in page  # not editable
    staff_client.post(url(Game, "change", game.pk), {"log": "x", "position": "x"})
    assert stored_log(game.pk)[0] == (0, "deal")


def test_non_staff_users_are_sent_to_the_login_page(client: Client, user: Any) -> None:
    client.force_login(user)
    response = client.get(url(Game, "changelist"))
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def run_verify(staff_client: Any, games: list[Game]) -> list[tuple[int, str]]:
    response = staff_client.post(
        url(Game, "changelist"),
        {"action": "verify_games", "_selected_action": [g.pk for g in games]},
        follow=True,
    )
    assert response.status_code == 200
    return [(m.level, m.message) for m in get_messages(response.wsgi_request)]


def test_verify_action_reports_success(staff_client: Any, games: list[Game]) -> None:
    assert run_verify(staff_client, games) == [(INFO, "all 2 game(s) match their logs")]


def test_verify_action_reports_a_tampered_game(staff_client: Any, games: list[Game]) -> None:
    bad = games[1]
    swap_piles(bad.pk, "r1", "r2")
    Game.objects.filter(pk=games[0].pk).update(ply=99)

    [(level, message)] = run_verify(staff_client, games)

    assert level == ERROR
    assert message.startswith("2 of 2 game(s) do not match their logs")
    assert f"game {bad.pk}: snapshot differs from the replay of the log" in message
    assert f"game {games[0].pk}: ply 99 but the log has 3 entries" in message


def test_verify_action_names_only_the_bad_game(staff_client: Any, games: list[Game]) -> None:
    tamper_log(games[0].pk, 2, "t1-r1")
    [(level, message)] = run_verify(staff_client, games)
    assert level == ERROR
    assert message.startswith("1 of 2 game(s)")
    assert f"game {games[0].pk}: log does not replay" in message
    assert f"game {games[1].pk}" not in message
