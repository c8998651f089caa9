"""Reads of accounts: players by name, API tokens by key, guests."""

from __future__ import annotations

import hashlib
import hmac
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import QuerySet

from accounts.models import ApiToken
from core.errors import NotFound

#: How a guest's user name starts: a ":" no registered name may hold (``RegisterInput``).
GUEST_PREFIX = "guest:"


def is_guest(user: Any) -> bool:
    """A visitor's guest account (``accounts.models.Guest``): told by its name, no query."""
    return bool(user.is_authenticated) and user.get_username().startswith(GUEST_PREFIX)


def address_key(address: str) -> str:
    """The stored form of a client address: keyed with ``SECRET_KEY``, so the table of
    guests counts addresses without holding any (a plain hash of an IPv4 address is
    reversed by trying all of them)."""
    return hmac.new(settings.SECRET_KEY.encode(), address.encode(), hashlib.sha256).hexdigest()


def player_by_name(username: str) -> User:
    """An active player by user name; anything else (a NUL included, a guest) is not found."""
    User = get_user_model()
    try:
        if "\x00" in username or username.startswith(GUEST_PREFIX):
            # No name has a NUL (PostgreSQL's text refuses it); a guest has no public page.
            raise User.DoesNotExist
        return User.objects.get(username=username, is_active=True)
    except User.DoesNotExist:
        raise NotFound(f"no player {username!r}") from None


def token_hash(key: str) -> str:
    """The stored form of a token key."""
    return hashlib.sha256(key.encode()).hexdigest()


@cache
def _token_user_sql() -> tuple[str, list[str], list[str], list[tuple[Any, list[Any]]]]:
    """The token and its user in one statement, with the field names of each part of a row
    and each column's converters (expression, converters).

    Every REST request with a token runs it: building and compiling the ORM's
    ``select_related`` query cost more than half the lookup (0.85 ms against 0.22 ms
    of CPU per call), so it is written once and its rows loaded with ``Model.from_db``.
    The converters are those the ORM's compiler applies (SQLite, for one, returns
    datetimes without their time zone); on PostgreSQL most columns have none.
    """

    def col(field: Any) -> str:
        assert field.column is not None  # a concrete field has its column
        return connection.ops.quote_name(field.column)

    token, user = ApiToken._meta, get_user_model()._meta
    token_fields, user_fields = list(token.concrete_fields), list(user.concrete_fields)
    columns = [f"t.{col(f)}" for f in token_fields] + [f"u.{col(f)}" for f in user_fields]
    q = connection.ops.quote_name
    sql = (
        f"SELECT {', '.join(columns)} FROM {q(token.db_table)} t "
        f"JOIN {q(user.db_table)} u ON u.{col(user.pk)} = t.{col(token.get_field('user'))} "
        f"WHERE t.{col(token.get_field('key_hash'))} = %s "
        f"AND t.{col(token.get_field('revoked_at'))} IS NULL"
    )
    expressions = [f.get_col(token.db_table) for f in token_fields]
    expressions += [f.get_col(user.db_table) for f in user_fields]
    converters = [
        (e, connection.ops.get_db_converters(e) + e.get_db_converters(connection))
        for e in expressions
    ]
    names = [f.attname for f in token_fields], [f.attname for f in user_fields]
    return sql, *names, converters


def token_user(key: str) -> tuple[User, ApiToken] | None:
    """The active user and token for a presented key, or None."""
    sql, token_names, user_names, converters = _token_user_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, [token_hash(key)])
        row = cursor.fetchone()
    if row is None:
        return None
    values = list(row)
    for i, (expression, funcs) in enumerate(converters):
        for func in funcs:
            values[i] = func(values[i], expression, connection)
    split = len(token_names)
    token = ApiToken.from_db(connection.alias, token_names, values[:split])
    user = get_user_model().from_db(connection.alias, user_names, values[split:])
    if not user.is_active:
        return None
    token.user = user
    return user, token


#: A user's tokens newest first, by id (unique, in the order they were made).
TOKENS_ORDER = ("-id",)


def tokens_of_user(*, user: User) -> QuerySet[ApiToken]:
    """A user's tokens that are not revoked, newest first (``TOKENS_ORDER``)."""
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True).order_by(*TOKENS_ORDER)
