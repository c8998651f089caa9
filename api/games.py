"""REST views of games: variants, a player's games, moves, undo, hints, resignation.

Thin doors: they parse input, call one function of ``games`` (a move: ``games.play``),
render the value it returns; they never decide a rule."""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api import shapes
from api.authentication import signed_in_user
from api.openapi import ILLEGAL_EXAMPLE, PLY_CONFLICTS, STALE_EXAMPLE, errors
from api.pagination import paginator_of
from games.engine import VARIANTS
from games.models import UNDO
from games.play import finish, move
from games.selectors import games as game_selectors
from games.selectors import hints as hint_selectors
from games.selectors.hints import Hint, HintPending
from games.services import guests as guest_services
from games.services import hints as hint_services


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
        game = guest_services.practice_start(user=game_player(request), **data.validated_data)
        return Response(shapes.game_state(game), status=status.HTTP_201_CREATED)


class GameDetailView(APIView):
    """One of my games: public position, legal moves, status, score, time."""

    @extend_schema(tags=["games"], responses={200: shapes.GameStateSerializer, **errors(401, 404)})
    def get(self, request: Request, game_id: int) -> Response:
        game = game_selectors.game_shown(game_id=game_id, user=game_player(request))
        return Response(shapes.game_state(game))


def move_response(result: move.MoveResult) -> Response:
    """The state after a move (or for a retry the current one)."""
    return Response(shapes.move_result(result))


class GameMovesView(GenericAPIView):
    """The move log of a game, in ply order (paged), and submitting a move."""

    ordering = ("ply",)

    @extend_schema(
        tags=["games"], responses={200: s.MoveLogSerializer(many=True), **errors(401, 404)}
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = game_selectors.game_for_player(game_id=game_id, user=game_player(request))
        entries = game_selectors.game_entries(game)
        page = paginator_of(self).paginate_sequence(entries, attrgetter("ply"), request)
        page["results"] = s.MoveLogSerializer(page["results"], many=True).data
        return Response(page)

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
            move.apply_move(game_id=game_id, user=game_player(request), **data.validated_data)
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
            move.apply_move(
                game_id=game_id,
                user=game_player(request),
                move=UNDO,
                ply=data.validated_data["ply"],
            )
        )


class HintQuery(serializers.Serializer):
    ply = serializers.IntegerField(
        min_value=0, required=False, help_text="The ply the hint was asked at (the game's now)."
    )


def hint_response(request: Request, game_id: int, found: Hint | HintPending) -> Response:
    """200 with a hint, or 202 while it is solved: where to ask again, and when."""
    if isinstance(found, Hint):
        return Response(shapes.hint(found))
    poll = reverse("game-hint", kwargs={"game_id": game_id}) + f"?ply={found.ply}"
    headers = {"Location": request.build_absolute_uri(poll), "Retry-After": str(found.retry_after)}
    return Response(shapes.hint_pending(found), status=status.HTTP_202_ACCEPTED, headers=headers)


HINT_POLL_HEADERS = [
    OpenApiParameter(
        name, str, OpenApiParameter.HEADER, response=[202], required=True, description=text
    )
    for name, text in (
        ("Location", "Where to ask (`GET`) for the hint once solved."),
        ("Retry-After", "Seconds to wait before asking."),
    )
]


class GameHintView(APIView):
    """A hint in a practice game: the next move of a winning line. The game becomes assisted.

    Ranked games get none (`hint_not_allowed`): the solver sees the hidden stock. A hint
    the cache knows is answered at once (200); else the solver works in the background
    and the answer is 202 with `Location` (this path with `?ply=`) and `Retry-After`:
    `GET` there answers 202 until the hint is solved, then 200 with it (409 `stale_ply`
    once the game moved on, 404 if no hint was asked at its ply).
    """

    @extend_schema(
        tags=["games"],
        request=None,
        parameters=HINT_POLL_HEADERS,
        responses={
            200: shapes.HintSerializer,
            202: shapes.HintPendingSerializer,
            **errors(401, 403, 404, 409, 429, 503, conflicts=("hint_not_allowed", "game_finished")),
        },
    )
    def post(self, request: Request, game_id: int) -> Response:
        found = hint_services.game_hint(game_id=game_id, user=game_player(request))
        return hint_response(request, game_id, found)

    @extend_schema(
        tags=["games"],
        operation_id="games_hint_result",
        parameters=[HintQuery, *HINT_POLL_HEADERS],
        responses={
            200: shapes.HintSerializer,
            202: shapes.HintPendingSerializer,
            **errors(400, 401, 403, 404, 409, 503, conflicts=("stale_ply",)),
        },
    )
    def get(self, request: Request, game_id: int) -> Response:
        query = HintQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        found = hint_selectors.game_hint_result(
            game_id=game_id, user=game_player(request), ply=query.validated_data.get("ply")
        )
        return hint_response(request, game_id, found)


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
        ended = finish.resign(game_id=game_id, user=game_player(request))
        return Response(ended.state.as_json())
