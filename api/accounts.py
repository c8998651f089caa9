"""REST views of accounts: registration, guests, log-in, tokens, the current user.

Thin doors: they parse input, call one service or selector of ``accounts``, render."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate, login
from django.middleware.csrf import get_token
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
)
from rest_framework import status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors as account_selectors
from accounts import services as account_services
from api import serializers as s
from api.authentication import ApiTokenAuthentication, signed_in_user
from api.openapi import errors
from api.throttling import AuthThrottle, IpThrottle
from games.services import guests as guest_services


def user_data(user: Any) -> dict[str, Any]:
    return {
        "id": user.pk,
        "username": user.get_username(),
        "email": user.email,
        "date_joined": user.date_joined,
    }


def token_data(token: Any) -> dict[str, Any]:
    return {
        "id": token.pk,
        "name": token.name,
        "prefix": token.prefix,
        "created_at": token.created_at,
        "last_used_at": token.last_used_at,
    }


class CsrfChecked(BasePermission):
    """CSRF check for session writes that may come before a login (register, log in).

    Django's ``csrf_protect`` would answer a failure with an HTML page; this
    raises DRF's PermissionDenied, so the client gets the error envelope. A
    request signed with a personal token needs none (no browser adds that
    header by itself), as for every other write.
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        if not isinstance(request.successful_authenticator, ApiTokenAuthentication):
            SessionAuthentication().enforce_csrf(request)
        return True


class CsrfView(APIView):
    """Sets the CSRF cookie for a browser or program that logs in with a session."""

    permission_classes = [AllowAny]

    @extend_schema(tags=["accounts"], responses={200: s.CsrfSerializer})
    @method_decorator(ensure_csrf_cookie)
    def get(self, request: Request) -> Response:
        return Response({"csrf_token": get_token(request)})


class RegisterView(APIView):
    """Create an account and log in with a session."""

    permission_classes = [AllowAny, CsrfChecked]
    throttle_classes = [AuthThrottle]

    @extend_schema(
        tags=["accounts"],
        request=s.RegisterInput,
        responses={201: s.UserSerializer, **errors(400, 403, 429)},
    )
    def post(self, request: Request) -> Response:
        data = s.RegisterInput(data=request.data)
        data.is_valid(raise_exception=True)
        # A guest's account becomes the new one, with the games it has.
        user = account_services.user_register(**data.validated_data, guest=guest_of(request))
        login(request._request, user, backend="django.contrib.auth.backends.ModelBackend")
        return Response(user_data(user), status=status.HTTP_201_CREATED)


def guest_of(request: Request) -> Any:
    """The request's guest account (``accounts.models.Guest``), or None."""
    return request.user if account_selectors.is_guest(request.user) else None


class GuestView(APIView):
    """Play without an account: a guest account, logged in with a session, that plays
    practice games only (`POST /api/v1/games/`) and never ranks.

    A signed-in browser gets its own user back (200). One address makes at most
    `GUEST_GAMES_PER_HOUR` guests, and their games, an hour (429 `guest_limit`).
    Registering from the guest's session keeps its games; logging in to an account
    moves them there. Anything else is 403 `guest_not_allowed`.
    """

    permission_classes = [AllowAny, CsrfChecked]
    throttle_classes = [AuthThrottle]

    @extend_schema(
        tags=["accounts"],
        request=None,
        responses={201: s.UserSerializer, 200: s.UserSerializer, **errors(403, 429)},
    )
    def post(self, request: Request) -> Response:
        if request.user.is_authenticated:
            return Response(user_data(request.user))
        user = guest_services.guest_start(address=IpThrottle().get_ident(request))
        login(request._request, user, backend="django.contrib.auth.backends.ModelBackend")
        return Response(user_data(user), status=status.HTTP_201_CREATED)


def credentials_user(request: Request, *, username: str, password: str) -> Any:
    """The active user with this name and password; 401 ``authentication_failed`` if none."""
    user = authenticate(request._request, username=username, password=password)
    if user is None:
        raise AuthenticationFailed("wrong username or password")
    return user


class LoginView(APIView):
    """Log in with username and password; the session cookie carries the login.

    For browsers. Programs get a token from `POST /api/v1/auth/token/` instead.
    """

    permission_classes = [AllowAny, CsrfChecked]
    throttle_classes = [AuthThrottle]

    @extend_schema(
        tags=["accounts"],
        request=s.LoginInput,
        responses={200: s.UserSerializer, **errors(400, 401, 403, 429)},
    )
    def post(self, request: Request) -> Response:
        data = s.LoginInput(data=request.data)
        data.is_valid(raise_exception=True)
        user = credentials_user(request, **data.validated_data)
        if guest := guest_of(request):  # the guest's games go with them
            guest_services.guest_games_move(guest=guest, user=user)
        login(request._request, user)
        return Response(user_data(user))


class TokenLoginView(APIView):
    """A new personal token for a user name and password: how a program signs in.

    No session is read or opened, so no CSRF token is needed; the key is shown
    only in this answer. Rate-limited like log-in. The token is listed, and
    revoked, under `auth/tokens/` like any other.
    """

    # Only the token scheme: a session cookie is ignored, so there is no CSRF check.
    authentication_classes = [ApiTokenAuthentication]
    permission_classes = [AllowAny]
    throttle_classes = [AuthThrottle]

    @extend_schema(
        tags=["accounts"],
        request=s.TokenLoginInput,
        responses={201: s.NewTokenSerializer, **errors(400, 401, 429)},
        examples=[
            OpenApiExample(
                "a script",
                value={"username": "ann", "password": "correct-horse", "name": "my bot"},
                request_only=True,
            )
        ],
    )
    def post(self, request: Request) -> Response:
        data = s.TokenLoginInput(data=request.data)
        data.is_valid(raise_exception=True)
        name = data.validated_data.pop("name")
        user = credentials_user(request, **data.validated_data)
        token, key = account_services.token_create(user=user, name=name)
        return Response({**token_data(token), "token": key}, status=status.HTTP_201_CREATED)


class LogoutView(APIView):
    """End the session."""

    permission_classes = [AllowAny, CsrfChecked]

    @extend_schema(tags=["accounts"], request=None, responses={204: None, **errors(403)})
    def post(self, request: Request) -> Response:
        account_services.user_logout(request._request)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    """The current user."""

    @extend_schema(tags=["accounts"], responses={200: s.UserSerializer, **errors(401)})
    def get(self, request: Request) -> Response:
        return Response(user_data(request.user))


class TokenListView(GenericAPIView):
    """List (newest first) and create personal API tokens."""

    ordering = account_selectors.TOKENS_ORDER

    @extend_schema(tags=["accounts"], responses={200: s.TokenSerializer(many=True), **errors(401)})
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(
            account_selectors.tokens_of_user(user=signed_in_user(request))
        )
        assert page is not None  # None only without a page size, and the paginator has one
        return self.get_paginated_response([token_data(t) for t in page])

    @extend_schema(
        tags=["accounts"],
        request=s.TokenInput,
        responses={201: s.NewTokenSerializer, **errors(400, 401, 403)},
    )
    def post(self, request: Request) -> Response:
        data = s.TokenInput(data=request.data)
        data.is_valid(raise_exception=True)
        token, key = account_services.token_create(
            user=signed_in_user(request), name=data.validated_data["name"]
        )
        return Response({**token_data(token), "token": key}, status=status.HTTP_201_CREATED)


class TokenDetailView(APIView):
    """Revoke a token."""

    @extend_schema(tags=["accounts"], responses={204: None, **errors(401, 403, 404)})
    def delete(self, request: Request, token_id: int) -> Response:
        account_services.token_revoke(user=signed_in_user(request), token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
