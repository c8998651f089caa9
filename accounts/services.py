"""Writes of accounts: registering, guests, logging out, API tokens and their use."""

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

from accounts import events, token_cache
from accounts.models import ApiToken, Guest, UsernameSkeleton
from accounts.selectors import GUEST_PREFIX, address_key, is_guest, token_hash, token_user
from accounts.usernames import username_skeleton
from core import clock
from core.errors import InvalidInput, NotFound


def _name_taken() -> InvalidInput:
    return InvalidInput(
        "that username is taken, or looks like one that is", details={"username": ["taken"]}
    )


#: How often a token's last-use time is written at most: once per life of its cache entry.
TOKEN_TOUCH_INTERVAL = timedelta(seconds=token_cache.ENTRY_SECONDS)


def user_register(
    *, username: str, password: str, email: str = "", guest: User | None = None
) -> User:
    """Create an account after Django's password validation; a guest's becomes it.

    A name taken in any case, or one that looks like a taken one (the same
    ``username_skeleton``: "аdmin" with a Cyrillic а beside "admin"), is refused.
    With ``guest`` (the visitor's guest account, ``accounts.models.Guest``) that account
    is renamed and given the password instead of a new one: the same user, so every game
    it has, the one in progress too, is the new account's.
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
            if guest is not None and _still_guest(guest):
                return _guest_convert(guest, username=username, password=password, email=email)
            user = User.objects.create_user(username=username, email=email, password=password)
            if not UsernameSkeleton.objects.filter(user=user).exists():
                # A look-alike was registered at the same moment and stored its skeleton first.
                raise IntegrityError("look-alike user name")
    except IntegrityError:
        raise _name_taken() from None
    return user


def _still_guest(user: User) -> bool:
    """Whether ``user`` is a guest now, its guest row locked until the transaction ends.

    A session's requests run at once: one may register the guest while another logs it
    in to an account (which merges and deletes it). Each takes this lock first and reads
    the row again, so the second sees what the first did, and a user that was a guest
    when its request began is never renamed or deleted once it is not.
    """
    return is_guest(user) and Guest.objects.select_for_update().filter(user=user).exists()


def _guest_convert(guest: User, *, username: str, password: str, email: str) -> User:
    """Make a guest account a registered one (in ``user_register``'s transaction).

    The account joins now: its age, for every fair-play rule (``new_account``), counts
    from the registration, or a stock of aged guests would register as old accounts.
    """
    guest.username, guest.email = username, email
    guest.date_joined = clock.now()
    guest.set_password(password)
    guest.save()
    # Unique: a look-alike registered at the same moment makes this an IntegrityError.
    UsernameSkeleton.objects.update_or_create(
        user=guest, defaults={"skeleton": username_skeleton(username)}
    )
    Guest.objects.filter(user=guest).delete()
    return guest


def guest_lock(user: User) -> bool:
    """Whether ``user`` is a guest now, its guest row locked until the caller's transaction
    ends (``_still_guest``): a merge of its games into an account takes it first."""
    return _still_guest(user)


def guest_create(*, address: str) -> User:
    """A guest account for a visitor's practice games (logged in by the caller's session),
    made from ``address``'s hashed key; its caps are the caller's
    (``games.services.guests.guest_start``)."""
    now = clock.now()
    # No password: nobody logs in as a guest, only its session is it.
    user = get_user_model().objects.create_user(username=GUEST_PREFIX + secrets.token_hex(8))
    Guest.objects.create(user=user, address=address_key(address), created_at=now)
    return user


def guests_delete(*, user_ids: list[int]) -> int:
    """Delete these guest accounts (with whatever they own); an account that is no longer a
    guest is never deleted here, checked by its guest row and its name."""
    accounts = get_user_model().objects.filter(
        pk__in=user_ids, guest__isnull=False, username__startswith=GUEST_PREFIX
    )
    return accounts.delete()[1].get(get_user_model()._meta.label, 0)


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

    Its cache entry is marked first and every process drops its own copy before the
    write (``accounts.token_cache``); while Redis cannot be told, the revocation is
    refused (``Unavailable``) and the token stays as it was.
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
    common case is answered from this process's cache, without Redis or PostgreSQL,
    else from the shared cache in Redis; a miss of both reads PostgreSQL, records the
    use (so at most once per cache entry's life) and fills them.
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
