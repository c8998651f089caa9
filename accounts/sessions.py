"""Sessions in the database, with the key from the cookie checked before any query.

Django makes session keys of 32 lower-case letters and digits, but looks up
whatever a cookie holds: a NUL in it made PostgreSQL refuse the query (a 500 on
every page and API call, and a socket's handshake failing). A key that could not
have been made here is now no session at all: an anonymous visitor.
"""

from __future__ import annotations

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore


class SessionStore(DatabaseSessionStore):
    """``SESSION_ENGINE = "accounts.sessions"``: Django's database sessions, keys checked."""

    def _validate_session_key(self, key: str | None) -> bool:
        # A private hook of Django's session stores, absent from django-stubs.
        valid = super()._validate_session_key(key)  # type: ignore[misc]
        return bool(valid) and key is not None and key.isascii() and key.isalnum()
