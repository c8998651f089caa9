"""Accounts on the real database: tokens stored hashed, revoked, their use recorded; registering."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from accounts import selectors as account_selectors
from accounts import services as account_services
from accounts.models import ApiToken
from core.errors import InvalidInput, NotFound

pytestmark = pytest.mark.django_db


# -- tokens ---------------------------------------------------------------------------------


def test_token_is_stored_hashed_and_found_by_its_key(user: Any) -> None:
    token, key = account_services.token_create(user=user, name="bot")
    assert key.startswith("pt_") and len(key) > 40
    assert token.key_hash == account_selectors.token_hash(key) != key
    assert token.prefix == key[:10]
    assert not ApiToken.objects.filter(key_hash=key).exists()
    assert account_selectors.token_user(key) == (user, token)
    assert account_selectors.token_user(key + "x") is None


def test_revoked_token_and_inactive_user_do_not_authenticate(user: Any, other_user: Any) -> None:
    token, key = account_services.token_create(user=user, name="bot")
    account_services.token_revoke(user=user, token_id=token.pk)
    assert account_selectors.token_user(key) is None
    assert list(account_selectors.tokens_of_user(user=user)) == []
    with pytest.raises(NotFound):
        account_services.token_revoke(user=user, token_id=token.pk)

    other_token, other_key = account_services.token_create(user=other_user, name="bot")
    with pytest.raises(NotFound):
        account_services.token_revoke(user=user, token_id=other_token.pk)
    assert account_selectors.token_user(other_key) is not None
    other_user.is_active = False
    other_user.save()
    assert account_selectors.token_user(other_key) is None


def test_token_use_is_recorded_at_most_once_a_minute(user: Any) -> None:
    token, _ = account_services.token_create(user=user, name="bot")
    account_services.token_touch(token)
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None
    account_services.token_touch(token)
    token.refresh_from_db()
    assert token.last_used_at == first
    stale = first - timedelta(minutes=2)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=stale)
    token.refresh_from_db()
    account_services.token_touch(token)
    token.refresh_from_db()
    assert token.last_used_at >= first


def test_token_authenticate_records_the_use_of_a_good_key_only(user: Any) -> None:
    token, key = account_services.token_create(user=user, name="bot")
    assert account_services.token_authenticate(key + "x") is None
    token.refresh_from_db()
    assert token.last_used_at is None
    assert account_services.token_authenticate(key) == (user, token)
    token.refresh_from_db()
    assert token.last_used_at is not None


# -- accounts -------------------------------------------------------------------------------


def test_register_creates_a_user_with_a_hashed_password(db: None, password: str) -> None:
    user = account_services.user_register(
        username="carol", password=password, email="c@example.com"
    )
    assert user.check_password(password)
    assert user.password != password
    assert get_user_model().objects.filter(username="carol").exists()


def test_register_refuses_a_weak_password(db: None) -> None:
    with pytest.raises(InvalidInput) as exc:
        account_services.user_register(username="carol", password="123")
    assert "password" in exc.value.details
    assert not get_user_model().objects.exists()


def test_register_refuses_a_taken_username_in_any_case(user: Any, password: str) -> None:
    with pytest.raises(InvalidInput) as exc:
        account_services.user_register(username="ANN", password=password)
    assert exc.value.details == {"username": ["taken"]}
