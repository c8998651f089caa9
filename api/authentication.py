"""Personal API tokens: ``Authorization: Token <key>`` (``Bearer`` works too)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated
from rest_framework.request import Request

from accounts.selectors import is_guest
from accounts.services import token_authenticate
from core.errors import GuestNotAllowed

KEYWORDS = {b"token", b"bearer"}


class ApiTokenAuthentication(BaseAuthentication):
    """Authenticate programs by a personal token; browsers use the session."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None
        if len(parts) != 2:
            raise AuthenticationFailed("write the header as 'Authorization: Token <key>'")
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed("the token is not valid") from None
        found = token_authenticate(key)
        if found is None:
            raise AuthenticationFailed("the token is not valid or has been revoked")
        return found

    def authenticate_header(self, request: Request) -> str:
        return "Token"


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """Documents the token scheme in the OpenAPI schema."""

    target_class = "api.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "Personal API token: `Token <key>` (see /api/v1/auth/tokens/).",
        }


def signed_in_user(request: Request, *, guests: bool = False) -> User:
    """The user of a request to a view that lets only signed-in users through.

    ``request.user`` may be anonymous as far as the types know; the default
    ``IsAuthenticated`` permission has refused anonymous requests already. A guest
    (``accounts.models.Guest``) passes only where ``guests`` says so, their own practice
    games: everything else (dailies, races, tokens) is 403 ``guest_not_allowed``, also
    any view added later.
    """
    user = request.user
    if not user.is_authenticated:
        raise NotAuthenticated()
    if not guests and is_guest(user):
        raise GuestNotAllowed("register (free) to play dailies and races; a guest plays practice")
    return user
