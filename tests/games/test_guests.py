"""Guests on the real database: made per address up to the cap, converted, moved, purged."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from accounts import selectors as account_selectors
from accounts import services as account_services
from accounts.models import Guest, UsernameSkeleton
from core import clock
from core.errors import GuestLimit, InvalidInput, NotFound
from games.models import Game
from games.services import guests as guest_services

pytestmark = pytest.mark.django_db

ADDRESS = "203.0.113.7"


@pytest.fixture
def cap(settings: Settings) -> int:
    settings.GUEST_GAMES_PER_HOUR = 3
    return 3


@pytest.fixture
def guest() -> User:
    return guest_services.guest_start(address=ADDRESS)


def test_a_guest_is_flagged_by_name_and_keeps_no_address(guest: User) -> None:
    assert account_selectors.is_guest(guest)
    assert guest.username.startswith(account_selectors.GUEST_PREFIX)
    assert not guest.has_usable_password()  # nobody logs in as a guest
    row = Guest.objects.get(user=guest)
    assert row.address == account_selectors.address_key(ADDRESS)
    assert ADDRESS not in row.address


def test_registered_players_and_visitors_are_no_guests(user: Any) -> None:
    from django.contrib.auth.models import AnonymousUser

    assert not account_selectors.is_guest(user)
    assert not account_selectors.is_guest(AnonymousUser())


def test_a_guest_has_no_public_page(guest: User) -> None:
    with pytest.raises(NotFound):
        account_selectors.player_by_name(guest.username)


def test_one_address_makes_guests_up_to_the_cap(cap: int) -> None:
    for _ in range(cap):
        guest_services.guest_start(address=ADDRESS)
    with pytest.raises(GuestLimit) as refused:
        guest_services.guest_start(address=ADDRESS)
    assert 0 < refused.value.details["retry_after"] <= 3601
    guest_services.guest_start(address="198.51.100.1")  # another address is not counted
    with time_machine.travel(clock.now() + timedelta(hours=1, seconds=1)):
        guest_services.guest_start(address=ADDRESS)  # the window has passed


def test_guest_games_of_one_address_are_capped_across_its_guests(cap: int) -> None:
    first = guest_services.guest_start(address=ADDRESS)
    second = guest_services.guest_start(address=ADDRESS)
    for player in (first, second, first):
        guest_services.practice_start(user=player, variant="bristol")
    with pytest.raises(GuestLimit):
        guest_services.practice_start(user=second, variant="bristol")
    assert Game.objects.filter(player__in=[first, second]).count() == cap


def test_registered_players_are_not_capped(cap: int, user: Any) -> None:
    for _ in range(cap + 1):
        guest_services.practice_start(user=user, variant="bristol")
    assert Game.objects.filter(player=user).count() == cap + 1


def test_registering_turns_the_guest_into_the_account_with_its_games(
    guest: User, password: str
) -> None:
    game = guest_services.practice_start(user=guest, variant="bristol", seed=7)
    user = account_services.user_register(username="carol", password=password, guest=guest)
    assert user.pk == guest.pk
    user.refresh_from_db()
    assert user.username == "carol" and user.check_password(password)
    assert not account_selectors.is_guest(user)
    assert not Guest.objects.filter(user=user).exists()
    assert UsernameSkeleton.objects.get(user=user).skeleton == "carol"
    assert Game.objects.get(pk=game.pk).player == user


def test_a_guest_registering_a_taken_name_stays_a_guest(
    guest: User, user: Any, password: str
) -> None:
    with pytest.raises(InvalidInput):
        account_services.user_register(username="Ann", password=password, guest=guest)
    guest.refresh_from_db()
    assert account_selectors.is_guest(guest) and Guest.objects.filter(user=guest).exists()


def test_logging_in_moves_the_guests_games_and_ends_the_guest(guest: User, user: Any) -> None:
    game = guest_services.practice_start(user=guest, variant="bristol")
    assert guest_services.guest_games_move(guest=guest, user=user) == 1
    assert Game.objects.get(pk=game.pk).player == user
    assert not get_user_model().objects.filter(pk=guest.pk).exists()
    assert guest_services.guest_games_move(guest=user, user=user) == 0  # not a guest


def test_stale_guests_are_purged_with_their_games(
    settings: Settings, guest: User, user: Any
) -> None:
    settings.GUEST_KEEP_DAYS = 7
    guest_services.practice_start(user=guest, variant="bristol")
    guest_services.practice_start(user=user, variant="bristol")
    assert guest_services.guests_purge() == 0  # in use
    with time_machine.travel(clock.now() + timedelta(days=6)):
        fresh = guest_services.guest_start(address=ADDRESS)
    with time_machine.travel(clock.now() + timedelta(days=8)):
        assert guest_services.guests_purge() == 1
    assert not get_user_model().objects.filter(pk=guest.pk).exists()
    assert not Game.objects.filter(player_id=guest.pk).exists()
    assert get_user_model().objects.filter(pk__in=[fresh.pk, user.pk]).count() == 2


def test_a_guest_that_still_moves_is_kept(settings: Settings, guest: User) -> None:
    from games.play.move import apply_move as game_apply_move

    settings.GUEST_KEEP_DAYS = 7
    game = guest_services.practice_start(user=guest, variant="bristol", seed=7)
    with time_machine.travel(clock.now() + timedelta(days=6)):
        game.refresh_from_db()
        move = game_current_move(game)
        game_apply_move(game_id=game.pk, user=guest, move=move, ply=0)
    with time_machine.travel(clock.now() + timedelta(days=8)):
        assert guest_services.guests_purge() == 0


def game_current_move(game: Game) -> str:
    """A legal move of a game, as its public state lists them."""
    from api import shapes

    return shapes.game_state(game)["legal_moves"][0]


def test_the_purge_command_reports_what_it_deleted(settings: Settings, guest: User) -> None:
    from io import StringIO

    from django.core.management import call_command

    settings.GUEST_KEEP_DAYS = 1
    out = StringIO()
    with time_machine.travel(clock.now() + timedelta(days=2)):
        call_command("guests_purge", stdout=out)
    assert "deleted 1 stale guest accounts" in out.getvalue()


def test_the_admin_lists_guests(guest: User, client: Client, make_user: Callable[..., Any]) -> None:
    staff = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(staff)
    response = client.get("/admin/accounts/guest/")
    assert response.status_code == 200
    assert str(Guest.objects.get(user=guest)) in response.content.decode()
    assert client.get(f"/admin/accounts/guest/{guest.pk}/change/").status_code == 200
