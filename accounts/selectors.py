"""Reads of accounts: players by name, API tokens by key."""

from __future__ import annotations

import hashlib

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import QuerySet

from accounts.models import ApiToken
from games.errors import NotFound


def player_by_name(username: str) -> User:
    """An active player by user name; anything else (a NUL included) is not found."""
    User = get_user_model()
    try:
        if "\x00" in username:  # no name has one, and PostgreSQL's text refuses it
            raise User.DoesNotExist
        return User.objects.get(username=username, is_active=True)
    except User.DoesNotExist:
        raise NotFound(f"no player {username!r}") from None


def token_hash(key: str) -> str:
    """The stored form of a token key."""
    return hashlib.sha256(key.encode()).hexdigest()


def token_user(key: str) -> tuple[User, ApiToken] | None:
    """The active user and token for a presented key, or None."""
    try:
        token = ApiToken.objects.select_related("user").get(
            key_hash=token_hash(key), revoked_at__isnull=True
        )
    except ApiToken.DoesNotExist:
        return None
    if not token.user.is_active:
        return None
    return token.user, token


def tokens_of_user(*, user: User) -> QuerySet[ApiToken]:
    """A user's tokens that are not revoked, newest first."""
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True).order_by("-created_at")
