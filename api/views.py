"""REST views: thin doors that parse input, call one service or selector, render.

They never decide a rule: the engine and ``games.services`` do.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate, login
from django.db import connection
from django.middleware.csrf import get_token
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
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
from api import shapes
from api.authentication import ApiTokenAuthentication, signed_in_user
from api.throttling import AuthThrottle, IpThrottle
from games.engine import VARIANTS
from games.errors import NotReady
from games.models import UNDO
from games.selectors import games as game_selectors
from games.selectors import health as health_selectors
from games.services import games as game_services


def errors(*codes: int, conflicts: tuple[str, ...] = ()) -> dict[int, OpenApiResponse]:
    """Schema entries for error responses, all in the one envelope.

    ``conflicts`` are the codes this operation answers with 409.
    """
    assert (409 in codes) == bool(conflicts), "a 409 lists its codes"
    text = {
        400: "Invalid input, a body that is not JSON, or an illegal move (`validation_error`, "
        "`parse_error`, `bad_notation`, `illegal_move`).",
        401: "Not authenticated, a bad token, or a wrong user name or password "
        "(`not_authenticated`, `authentication_failed`).",
        403: "A session without its CSRF token (send the `csrftoken` cookie's value as the "
        "`X-CSRFToken` header; a request with a token needs none), or permission denied "
        "(`permission_denied`, `not_creator`, `guest_not_allowed`: a guest plays practice "
        "games only).",
        404: "No such object of yours (`not_found`).",
        406: "The `Accept` header allows no JSON (`not_acceptable`).",
        409: "Conflict with the game's state: "
        + ", ".join(f"`{code}`" for code in conflicts)
        + ". "
        + " ".join(CONFLICTS[code] for code in conflicts),
        413: "The request body is over 64 KiB (`request_too_large`).",
        415: "The body is not `application/json` (`unsupported_media_type`).",
        429: "Too many requests (`throttled`, `hint_in_progress`, `race_limit`, "
        "`guest_limit`); see the "
        "Retry-After header.",
        503: "Not now (`hint_busy`, `hint_timeout`, `hint_unavailable`, `daily_not_ready`, "
        "`race_pool_empty`); see "
        "the Retry-After header.",
    }
    return {c: OpenApiResponse(s.ErrorSerializer, description=text[c]) for c in codes}


#: What each 409 code means, for the operations' descriptions.
CONFLICTS = {
    "stale_ply": "`stale_ply`: `ply` is behind the game (it moved on); `details.ply` is the "
    "game's ply, read the game again. Resending the entry already stored at that ply is "
    "not an error: it answers 200 with `duplicate: true`.",
    "bad_ply": "`bad_ply`: `ply` is ahead of the game (more entries than it has); "
    "`details.ply` is the game's ply.",
    "game_finished": "`game_finished`: the game has ended, whatever the ply.",
    "undo_not_allowed": "`undo_not_allowed`: nothing to undo, or a ranked game's undo would "
    "take back a move that revealed a stock card.",
    "hint_not_allowed": "`hint_not_allowed`: a ranked game gets no hints, nor any game of a "
    "daily whose day is not over.",
    "day_over": "`day_over`: a ranked daily whose day has ended takes no more moves; it "
    "ends as expired and counts as not won, with the cards it had home.",
    "race_not_started": "`race_not_started`: a race's game takes moves from the race's start "
    "on (`details.starts_at`).",
    "race_over": "`race_over`: a race's game takes no moves after the race's time limit.",
    "already_racing": "`already_racing`: you are in another race that has not finished.",
    "race_full": "`race_full`: the race has 8 players.",
    "race_started": "`race_started`: the race has started; nobody joins or leaves it.",
    "too_few_players": "`too_few_players`: a race starts with 2 players or more.",
    "race_not_finished": "`race_not_finished`: only a finished race has replays, rematches "
    "and analyses.",
    "game_not_finished": "`game_not_finished`: the game is still being played.",
    "day_not_over": "`day_not_over`: a daily's games are analysed once its day is over.",
}

#: The 409 codes of a request that carries a ply.
PLY_CONFLICTS = (
    "stale_ply",
    "bad_ply",
    "game_finished",
    "day_over",
    "race_not_started",
    "race_over",
)


STALE_EXAMPLE = OpenApiExample(
    "stale ply",
    status_codes=["409"],
    response_only=True,
    value={
        "error": {
            "code": "stale_ply",
            "message": "you sent ply 11 but the game is at ply 12",
            "details": {"ply": 12},
        }
    },
)
ILLEGAL_EXAMPLE = OpenApiExample(
    "illegal move",
    status_codes=["400"],
    response_only=True,
    value={
        "error": {
            "code": "illegal_move",
            "message": "t1-t2: 7H goes only on a card one rank higher, not 9C",
            "details": {},
        }
    },
)


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


class HealthView(APIView):
    """The first probe, kept for the probes that use it: answers only when the database is
    reachable (``health/live/`` and ``health/ready/`` tell the two cases apart)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    @extend_schema(
        responses=inline_serializer("Health", fields={"status": serializers.CharField()}),
    )
    def get(self, request: Request) -> Response:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return Response({"status": "ok"})


#: Seconds a load balancer is asked to wait before probing a process that is not ready.
READY_RETRY_AFTER = 5


class LiveView(APIView):
    """Liveness probe: the process answers. It touches no database, so an outage of
    PostgreSQL gets no process restarted (readiness takes it out of the traffic instead)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    @extend_schema(
        tags=["health"],
        responses=inline_serializer("Live", fields={"status": serializers.CharField()}),
    )
    def get(self, request: Request) -> Response:
        return Response({"status": "ok"})


class ReadyView(APIView):
    """Readiness probe: the database answers, every migration is applied and today's
    dailies are dealt; else 503 ``not_ready`` with the failing checks in ``details.checks``."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []

    @extend_schema(
        tags=["health"],
        responses={
            200: inline_serializer("Ready", fields={"status": serializers.CharField()}),
            503: OpenApiResponse(
                s.ErrorSerializer,
                description="Not ready (`not_ready`): `details.checks` names each failing "
                "check (`database`, `migrations`, `dailies`) with why.",
            ),
        },
    )
    def get(self, request: Request) -> Response:
        if failures := health_selectors.readiness_failures():
            raise NotReady(
                "not ready: " + ", ".join(failures),
                details={"checks": failures, "retry_after": READY_RETRY_AFTER},
            )
        return Response({"status": "ok"})


# -- accounts ---------------------------------------------------------------------------


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
        user = account_services.guest_create(address=IpThrottle().get_ident(request))
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
            account_services.guest_games_move(guest=guest, user=user)
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


# -- games ------------------------------------------------------------------------------


def game_player(request: Request) -> Any:
    """The player of a game request: an account, or a guest (their practice games)."""
    return signed_in_user(request, guests=True)


class VariantListView(APIView):
    """The variants and their rule options."""

    permission_classes = [AllowAny]

    @extend_schema(tags=["games"], responses={200: s.VariantSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return Response(
            [
                {
                    "key": v.key,
                    "name": v.name,
                    "family": v.family.value,
                    "decks": v.decks,
                    "cards": v.card_count,
                    "aces_removed": v.aces_removed,
                    "first_ace_on_foundation": v.first_ace_on_foundation,
                    "refill_reserves": v.refill_reserves,
                    "reserves_open_anytime": v.reserves_open_anytime,
                    "reversible_last_row": v.reversible_last_row,
                }
                for v in VARIANTS.values()
            ]
        )


class GameListView(GenericAPIView):
    """My games, newest first (by id: the order they were started in), and starting a
    practice game."""

    ordering = game_selectors.GAMES_ORDER

    @extend_schema(
        tags=["games"],
        parameters=[s.GameListQuery],
        responses={200: shapes.GameStateSerializer(many=True), **errors(400, 401)},
    )
    def get(self, request: Request) -> Response:
        query = s.GameListQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = self.paginate_queryset(
            game_selectors.games_of_player(user=game_player(request), **query.validated_data)
        )
        assert page is not None  # None only without a page size, and the paginator has one
        return self.get_paginated_response(shapes.game_states(page))

    @extend_schema(
        tags=["games"],
        request=s.GameCreateInput,
        responses={201: shapes.GameStateSerializer, **errors(400, 401, 403, 429)},
        examples=[
            OpenApiExample("random deal", value={"variant": "bristol"}, request_only=True),
            OpenApiExample(
                "chosen deal", value={"variant": "picture-gallery", "seed": 7}, request_only=True
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        data = s.GameCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        game = account_services.practice_start(user=game_player(request), **data.validated_data)
        return Response(shapes.game_state(game), status=status.HTTP_201_CREATED)


class GameDetailView(APIView):
    """One of my games: public position, legal moves, status, score, time."""

    @extend_schema(tags=["games"], responses={200: shapes.GameStateSerializer, **errors(401, 404)})
    def get(self, request: Request, game_id: int) -> Response:
        game = game_services.game_open(game_id=game_id, user=game_player(request))
        return Response(shapes.game_state(game))


def move_response(outcome: game_services.MoveOutcome) -> Response:
    """The state after a move (or for a retry the current one)."""
    return Response(shapes.move_result(outcome))


class GameMovesView(GenericAPIView):
    """The move log of a game, in ply order (paged), and submitting a move."""

    ordering = game_selectors.MOVES_ORDER

    @extend_schema(
        tags=["games"], responses={200: s.MoveLogSerializer(many=True), **errors(401, 404)}
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = game_selectors.game_for_player(game_id=game_id, user=game_player(request))
        page = self.paginate_queryset(game_selectors.game_moves(game))
        return self.get_paginated_response(s.MoveLogSerializer(page, many=True).data)

    @extend_schema(
        tags=["games"],
        request=s.MoveInput,
        responses={
            200: shapes.MoveResultSerializer,
            **errors(400, 401, 403, 404, 409, 429, conflicts=PLY_CONFLICTS),
        },
        examples=[
            OpenApiExample("a move", value={"move": "t3-f", "ply": 12}, request_only=True),
            ILLEGAL_EXAMPLE,
            STALE_EXAMPLE,
        ],
    )
    def post(self, request: Request, game_id: int) -> Response:
        data = s.MoveInput(data=request.data)
        data.is_valid(raise_exception=True)
        return move_response(
            game_services.game_apply_move(
                game_id=game_id, user=game_player(request), **data.validated_data
            )
        )


class GameUndoView(APIView):
    """Take back the last move that is still on the board.

    Practice games undo freely. A ranked daily undoes too, but never a move that
    revealed a card of the stock (a deal, or a reserve refilled from the stock),
    and each undo counts as a move of its result. The game's `can_undo` tells
    whether an undo would be accepted now.
    """

    @extend_schema(
        tags=["games"],
        request=s.PlyInput,
        responses={
            200: shapes.MoveResultSerializer,
            **errors(400, 401, 403, 404, 409, 429, conflicts=(*PLY_CONFLICTS, "undo_not_allowed")),
        },
    )
    def post(self, request: Request, game_id: int) -> Response:
        data = s.PlyInput(data=request.data)
        data.is_valid(raise_exception=True)
        return move_response(
            game_services.game_apply_move(
                game_id=game_id,
                user=game_player(request),
                move=UNDO,
                ply=data.validated_data["ply"],
            )
        )


class GameHintView(APIView):
    """A hint in a practice game: the next move of a winning line. The game becomes assisted.

    Ranked games get none (`hint_not_allowed`): the solver sees the hidden stock.
    """

    @extend_schema(
        tags=["games"],
        request=None,
        responses={
            200: shapes.HintSerializer,
            **errors(401, 403, 404, 409, 429, 503, conflicts=("hint_not_allowed", "game_finished")),
        },
    )
    def post(self, request: Request, game_id: int) -> Response:
        hint = game_services.game_hint(game_id=game_id, user=game_player(request))
        return Response(shapes.hint(hint))


class GameResignView(APIView):
    """Give up a game; the deal is revealed."""

    @extend_schema(
        tags=["games"],
        request=None,
        responses={
            200: shapes.GameStateSerializer,
            **errors(
                401,
                403,
                404,
                409,
                429,
                conflicts=("game_finished", "day_over", "race_not_started", "race_over"),
            ),
        },
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = game_services.game_resign(game_id=game_id, user=game_player(request))
        return Response(shapes.game_state(game))
