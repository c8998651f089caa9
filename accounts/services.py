"""Writes of accounts: registering, logging out, API tokens and their use."""

from __future__ import annotations

import secrets
import time
from datetime import timedelta

from django.contrib.auth import get_user_model, logout
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.http import HttpRequest

from accounts import token_cache
from accounts.models import ApiToken, UsernameSkeleton
from accounts.selectors import token_hash, token_user
from accounts.usernames import username_skeleton
from games import clock, events
from games.errors import (
    InvalidInput,
    NotFound,
)


def _name_taken() -> InvalidInput:
    return InvalidInput(
        "that username is taken, or looks like one that is", details={"username": ["taken"]}
    )


#: How often a token's last-use time is written at most: once per life of its cache entry.
TOKEN_TOUCH_INTERVAL = timedelta(seconds=token_cache.ENTRY_SECONDS)


def user_register(*, username: str, password: str, email: str = "") -> User:
    """Create an account after Django's password validation.

    A name taken in any case, or one that looks like a taken one (the same
    ``username_skeleton``: "аdmin" with a Cyrillic а beside "admin"), is refused.
    """
    User = get_user_model()
    if (
        User.objects.filter(username__iexact=username).exists()
        or UsernameSkeleton.objects.filter(skeleton=username_skeleton(username)).exists()
    ):
        raise _name_taken()
    candidate = User(username=username, email=email)
    try:
        validate_password(password, user=candidate)
    except ValidationError as exc:
        raise InvalidInput("the password is too weak", details={"password": exc.messages}) from None
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, email=email, password=password)
            if not UsernameSkeleton.objects.filter(user=user).exists():
                # A look-alike was registered at the same moment and stored its skeleton first.
                raise IntegrityError("look-alike user name")
    except IntegrityError:
        raise _name_taken() from None
    return user


def username_skeleton_store(*, user: User) -> None:
    """Store a new account's look-alike form (on every account creation, see ``accounts.apps``).

    Skipped when a look-alike name holds it already: only staff can create such an
    account (registration refuses it), and the older account keeps the form.
    """
    skeleton = username_skeleton(user.get_username())
    UsernameSkeleton.objects.bulk_create(
        [UsernameSkeleton(user=user, skeleton=skeleton)], ignore_conflicts=True
    )


def user_logout(request: HttpRequest) -> None:
    """End the browser session; the game sockets it opened are closed too."""
    session_key = request.session.session_key
    logout(request)
    if session_key:
        events.session_ended(session_key=session_key)


def token_create(*, user: User, name: str) -> tuple[ApiToken, str]:
    """Create a personal API token; the key is returned once and stored only hashed."""
    key = "pt_" + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, prefix=key[:10], key_hash=token_hash(key))
    return token, key


def token_revoke(*, user: User, token_id: int) -> None:
    """Revoke one of the user's tokens: refused from the next request on, on every process.

    Its cache entry is marked first (``accounts.token_cache``); while Redis cannot be
    told, the revocation is refused (``Unavailable``) and the token stays as it was.
    """
    active = ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True)
    token_cache.forget(active.values_list("key_hash", flat=True))
    if not active.update(revoked_at=clock.now()):
        raise NotFound(f"no active token {token_id} of yours")
    events.token_revoked(token_id=token_id)


def token_touch(token: ApiToken) -> None:
    """Record use of a token, at most once per interval to spare the database."""
    now = clock.now()
    if token.last_used_at is None or now - token.last_used_at > TOKEN_TOUCH_INTERVAL:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def token_authenticate(key: str) -> tuple[User, ApiToken] | None:
    """The active user and token for a presented key, its use recorded; None if refused.

    REST's ``Authorization`` header and a socket's handshake both come here. The
    common case is answered from the shared cache, without PostgreSQL; a miss reads
    PostgreSQL, records the use (so at most once per cache entry's life) and fills it.
    """
    key_hash = token_hash(key)
    found = token_cache.cached(key_hash)
    if found is not None:
        return found
    read_at = time.monotonic()
    found = token_user(key)
    if found is not None:
        token_touch(found[1])
        token_cache.fill(key_hash, *found, read_at=read_at)
    return found
