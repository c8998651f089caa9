"""WebSocket authentication and origin checks (the WebSocket door's middleware).

Two ways to authenticate a socket, checked once, at the handshake:

- **session cookie** (browsers): Channels' ``AuthMiddlewareStack`` reads the
  ``sessionid`` cookie set by ``/api/v1/auth/login/``;
- **personal API token** (programs): ``Authorization: Token <key>`` (or
  ``Bearer <key>``) in the handshake headers, as for REST; clients that cannot
  set headers (a browser's ``WebSocket``) may pass ``?token=<key>`` in the query
  string instead (it may end up in access logs: prefer the header).

A token that is presented but unknown, revoked or of an inactive account leaves
the socket anonymous even when a session cookie is also sent (as REST answers
401 for a bad token): the consumers then close it with code 4401.

Origins: a browser always sends ``Origin``; it must name one of
``ALLOWED_HOSTS`` (Channels' check, against cross-site WebSocket hijacking). A
client that sends no ``Origin`` at all is not a browser, so no other site can
borrow its cookies, and it is let through to authenticate like any program.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.auth.models import AnonymousUser

from accounts.services import token_authenticate

KEYWORDS = {"token", "bearer"}


def _header(scope: dict[str, Any], name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value
    return None


def presented_token(scope: dict[str, Any]) -> str | None:
    """The token key the client presented (header first, then ``?token=``), or None.

    A malformed ``Authorization`` header counts as a bad token (``""``).
    """
    raw = _header(scope, b"authorization")
    if raw is not None:
        parts = raw.decode("latin1").split()
        if parts and parts[0].lower() in KEYWORDS:
            return parts[1] if len(parts) == 2 else ""
    query = parse_qs(scope.get("query_string", b"").decode("latin1"))
    if "token" in query:
        return query["token"][-1]
    return None


@database_sync_to_async
def _token_user(key: str) -> tuple[Any, int | None]:
    found = token_authenticate(key) if key else None
    if found is None:
        return None, None
    user, token = found
    return user, token.pk


class TokenAuthMiddleware(BaseMiddleware):
    """Set ``scope["user"]`` from a personal API token when one is presented.

    Sits inside ``AuthMiddlewareStack``, so a token overrides the session's
    user. ``scope["auth"]`` tells how the socket authenticated: ``"token"``,
    ``"bad_token"`` (a token was presented but refused) or, left unset, the session;
    ``scope["token_id"]`` is the token's id (its revocation closes the game sockets).
    """

    # scope: an ASGI scope with this module's keys, which Channels' typed scope does not list.
    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        key = presented_token(scope)
        if key is not None:
            user, token_id = await _token_user(key)
            scope = {
                **scope,
                "user": user if user is not None else AnonymousUser(),
                "auth": "token" if user is not None else "bad_token",
                "token_id": token_id,
            }
        return await super().__call__(scope, receive, send)


class BrowserOriginValidator:
    """Channels' allowed-hosts origin check for browsers; clients without ``Origin`` pass."""

    def __init__(self, application: Any) -> None:
        self.application = application
        self.checked = AllowedHostsOriginValidator(application)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if _header(scope, b"origin") is None:
            return await self.application(scope, receive, send)
        return await self.checked(scope, receive, send)


def WebSocketAuthStack(inner: Any) -> Any:
    """Origin check, then session, then token authentication, around ``inner``."""
    return BrowserOriginValidator(AuthMiddlewareStack(TokenAuthMiddleware(inner)))
