"""Personal API tokens and the look-alike forms of user names.

Both tables were made by the ``games`` app and keep their names (``db_table``):
the models moved here in the migration state only (``accounts.0001_initial``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A personal API token for programs; only its SHA-256 is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "games_apitoken"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user}"


class UsernameSkeleton(models.Model):
    """The look-alike form of a user's name (``accounts.usernames``), unique over all users.

    Registration stores it with the account, so a name that reads like a taken
    one ("аdmin" with a Cyrillic а beside "admin") is refused, also when both
    are registered at the same moment.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="username_skeleton",
    )
    skeleton = models.TextField(unique=True)

    class Meta:
        db_table = "games_usernameskeleton"

    def __str__(self) -> str:
        return f"{self.skeleton} ({self.user})"


class Guest(models.Model):
    """A visitor's account, made on their first practice game, that plays practice only.

    The user's name starts with ``GUEST_PREFIX`` (a character registration refuses), so the
    flag is read from the name without a query; this row keeps what the per-address cap and
    the clean-up need. Registration turns the account into a real one and drops the row.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="guest"
    )
    # A keyed hash of the client's address (``accounts.selectors.address_key``), never the
    # address itself: enough to count its guests and their games, nothing to read back.
    address = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"guest {self.user_id} ({self.created_at:%Y-%m-%d %H:%M})"
