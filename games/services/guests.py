"""Guests and their games: the caps of a guest's address, a guest's first practice game,
the merge of a guest's games into the account it logs in to, and stale guests' purge.

A guest is an account (``accounts``) that plays practice games (``games``); what touches
both lives here, so ``accounts`` knows nothing of games.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef

from accounts import services as account_services
from accounts.models import Guest
from accounts.selectors import address_key, is_guest
from core import clock
from core.errors import GuestLimit
from games.models import Game
from games.services import games as game_services
from games.services.caps import cap_take

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


def guest_start(*, address: str) -> User:
    """A guest account for a visitor's practice games (logged in by the caller's session).

    One address makes at most ``GUEST_GAMES_PER_HOUR`` guests an hour, as many as the
    games they may start: clearing the cookies for a fresh guest gains nothing. Each call
    also deletes a few stale guests (``guests_purge``), so they never pile up.
    """
    guests_purge(limit=GUEST_PURGE_BATCH)
    with transaction.atomic():
        _guest_cap("accounts", address_key(address))
        return account_services.guest_create(address=address)


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
        if not account_services.guest_lock(guest):
            return 0
        moved = Game.objects.filter(player=guest).update(player=user)
        account_services.guests_delete(user_ids=[guest.pk])
    return moved


def guests_purge(*, limit: int | None = None) -> int:
    """Delete guest accounts unused for ``GUEST_KEEP_DAYS`` (made, started a game or moved
    before then), with their practice games; the number deleted. ``limit``: the oldest few."""
    cutoff = clock.now() - timedelta(days=settings.GUEST_KEEP_DAYS)
    used = Game.objects.filter(player=OuterRef("user"), started_at__gte=cutoff)
    moved = Game.objects.filter(player=OuterRef("user"), moved_at__gte=cutoff)
    stale = (
        Guest.objects.filter(created_at__lt=cutoff)
        .exclude(Exists(used))
        .exclude(Exists(moved))
        .order_by("created_at")
        .values_list("user_id", flat=True)
    )
    ids = list(stale if limit is None else stale[:limit])
    account_services.guests_delete(user_ids=ids)
    return len(ids)
