"""REST views of games: variants, a player's games, moves, undo, hints, resignation.

Thin doors: they parse input, call one function of ``games`` (a move: ``games.play``),
render the value it returns; they never decide a rule."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
)
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import services as account_services
from api import serializers as s
from api import shapes
from api.authentication import signed_in_user
from api.openapi import ILLEGAL_EXAMPLE, PLY_CONFLICTS, STALE_EXAMPLE, errors
from games.engine import VARIANTS
from games.models import UNDO
from games.play import finish, move
from games.selectors import games as game_selectors
from games.services import games as game_services


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
        game = game_selectors.game_shown(game_id=game_id, user=game_player(request))
        return Response(shapes.game_state(game))


def move_response(result: move.MoveResult) -> Response:
    """The state after a move (or for a retry the current one)."""
    return Response(shapes.move_result(result))


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
        ended = finish.resign(game_id=game_id, user=game_player(request))
        return Response(ended.state.as_json())
