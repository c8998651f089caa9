"""Writes of accounts: registering, guests, logging out, API tokens and their use."""

from __future__ import annotations

import secrets
import time
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model, logout
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.http import HttpRequest

from accounts import events, token_cache
from accounts.models import ApiToken, Guest, UsernameSkeleton
from accounts.selectors import GUEST_PREFIX, address_key, is_guest, token_hash, token_user
from accounts.usernames import username_skeleton
from core import clock
from core.errors import GuestLimit, InvalidInput, NotFound
from games.models import Game, Move
from games.services import games as game_services
from games.services.caps import cap_take


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


#: The window of the per-address guest cap.
GUEST_WINDOW = timedelta(hours=1)
#: Stale guests deleted, at most, each time a guest is made (``guests_purge``).
GUEST_PURGE_BATCH = 20


def _guest_cap(kind: str, address: str) -> None:
    """Take one of the address's ``GUEST_GAMES_PER_HOUR`` guests or guest games of the
    hour (``games.services.caps``: it holds under bursts); else 429 ``guest_limit``, with
    the wait until the hour ends."""
    limit = settings.GUEST_GAMES_PER_HOUR
    wait = cap_take(key=f"guest-{kind}:{address}", limit=limit, window=GUEST_WINDOW)
    if wait is not None:
        raise GuestLimit(
            f"{limit} games without an account within the hour from your address: "
            "register (free) to play on, or wait",
            details={"retry_after": max(1, int(wait) + 1)},
        )


def guest_create(*, address: str) -> User:
    """A guest account for a visitor's practice games (logged in by the caller's session).

    One address makes at most ``GUEST_GAMES_PER_HOUR`` guests an hour, as many as the
    games they may start: clearing the cookies for a fresh guest gains nothing. Each call
    also deletes a few stale guests (``guests_purge``), so they never pile up.
    """
    now = clock.now()
    key = address_key(address)
    guests_purge(limit=GUEST_PURGE_BATCH)
    with transaction.atomic():
        _guest_cap("accounts", key)
        # No password: nobody logs in as a guest, only its session is it.
        user = get_user_model().objects.create_user(username=GUEST_PREFIX + secrets.token_hex(8))
        Guest.objects.create(user=user, address=key, created_at=now)
    return user


def practice_start(*, user: User, variant: str, seed: int | None = None) -> Game:
    """Start a practice game; a guest's count against its address's hourly cap."""
    if not is_guest(user):
        return game_services.practice_game_start(user=user, variant=variant, seed=seed)
    with transaction.atomic():  # a start refused (a bad variant) gives its use back
        _guest_cap("games", user.guest.address)
        return game_services.practice_game_start(user=user, variant=variant, seed=seed)


def guest_games_move(*, guest: User, user: User) -> int:
    """A guest who logs in to an existing account: its games become the account's, and the
    guest account is deleted. Only practice games (all a guest has), so no board changes.

    Nothing happens once the guest is no longer one (registered meanwhile by another
    request of its session, or already merged): the delete is guarded by the guest row.
    """
    if guest.pk == user.pk:
        return 0
    with transaction.atomic():
        if not _still_guest(guest):
            return 0
        moved = Game.objects.filter(player=guest).update(player=user)
        get_user_model().objects.filter(pk=guest.pk, guest__isnull=False).delete()
    return moved


def guests_purge(*, limit: int | None = None) -> int:
    """Delete guest accounts unused for ``GUEST_KEEP_DAYS`` (made, started a game or moved
    before then), with their practice games; the number deleted. ``limit``: the oldest few."""
    cutoff = clock.now() - timedelta(days=settings.GUEST_KEEP_DAYS)
    used = Game.objects.filter(player=OuterRef("user"), started_at__gte=cutoff)
    moved = Move.objects.filter(game__player=OuterRef("user"), created_at__gte=cutoff)
    stale = (
        Guest.objects.filter(created_at__lt=cutoff)
        .exclude(Exists(used))
        .exclude(Exists(moved))
        .order_by("created_at")
        .values_list("user_id", flat=True)
    )
    ids = list(stale if limit is None else stale[:limit])
    # The name too: only a guest's account can ever be deleted here.
    get_user_model().objects.filter(pk__in=ids, username__startswith=GUEST_PREFIX).delete()
    return len(ids)


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
