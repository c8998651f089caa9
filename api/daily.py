"""REST doors for daily challenges and leaderboards (thin: parse, call, render)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from accounts import selectors as account_selectors
from api import serializers as s
from api import shapes
from api.authentication import signed_in_user
from api.openapi import errors
from api.pagination import CursorPage, page_parameters, paginator_of
from api.shapes import (
    AlltimeEntrySerializer,
    BoardSerializer,
    DailyOverviewSerializer,
    DailySerializer,
    GameStateSerializer,
    PlayerRecordSerializer,
    ReplaySerializer,
)
from core import clock
from games.inputs import ISO_DAY, TODAY, day_parse, variant_parse
from games.models import Deal
from games.selectors import boards as board_selectors
from games.selectors import dailies as daily_selectors
from games.selectors import races as race_selectors
from games.services import dailies as daily_services
from games.services.fairplay import ClientSignal

# -- inputs (the outputs are api.shapes) ------------------------------------------------


#: My neighbours each side of my line on a day's board, unless asked otherwise.
BOARD_AROUND = 3


class BoardQuery(serializers.Serializer):
    around = serializers.IntegerField(
        min_value=0,
        max_value=25,
        default=BOARD_AROUND,
        help_text="My neighbours each side of my line.",
    )


class AlltimeQuery(serializers.Serializer):
    order = serializers.ChoiceField(choices=board_selectors.ALLTIME_ORDERS, default="days_won")


# -- helpers ------------------------------------------------------------------------------


#: The path parameter ``variant``: a key of ``VariantEnum``, the enum of the game-start
#: body's ``variant`` (one enum for generated clients); any other key is 404 ``not_found``.
VARIANT_PARAMETER = OpenApiParameter(
    "variant",
    {"$ref": "#/components/schemas/VariantEnum"},
    OpenApiParameter.PATH,
    description="A variant's key.",
)

#: The path parameter ``day`` of every daily route, as the schema documents it.
DAY_PARAMETER = OpenApiParameter(
    "day",
    str,
    OpenApiParameter.PATH,
    pattern=rf"^({ISO_DAY.pattern}|{TODAY})$",
    description="A UTC day as `YYYY-MM-DD`, or `today` for the current UTC day.",
)


def query(serializer: type[serializers.Serializer], request: Request) -> dict:
    data = serializer(data=request.query_params)
    data.is_valid(raise_exception=True)
    return data.validated_data


# -- views --------------------------------------------------------------------------------


class DailyTodayView(APIView):
    """Today's dailies of every variant, with my ranked game and rank if any."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["daily"], responses={200: DailyOverviewSerializer(many=True), **errors(503)}
    )
    def get(self, request: Request) -> Response:
        dailies = daily_selectors.dailies_of_day(user=request.user, day=clock.today())
        return Response(shapes.daily_overview(dailies))


class DailyDetailView(APIView):
    """One daily: commitment, and seed and deck once the day is over."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["daily"],
        parameters=[VARIANT_PARAMETER, DAY_PARAMETER],
        responses={200: DailySerializer, **errors(400, 404, 503)},
    )
    def get(self, request: Request, variant: str, day: str) -> Response:
        deal = daily_selectors.published_deal(variant_parse(variant), day_parse(day))
        return Response(shapes.daily(deal))


class DailyPlayView(APIView):
    """Start or resume my game of a daily: the first game of today's is ranked."""

    @extend_schema(
        tags=["daily"],
        parameters=[VARIANT_PARAMETER, DAY_PARAMETER],
        request=None,
        responses={
            200: GameStateSerializer,
            201: GameStateSerializer,
            **errors(400, 401, 403, 404, 429, 503),
        },
    )
    def post(self, request: Request, variant: str, day: str) -> Response:
        game, created = daily_services.daily_game_start(
            user=signed_in_user(request),
            variant=variant_parse(variant),
            day=day_parse(day),
            client=ClientSignal(
                address=BaseThrottle().get_ident(request) or "",
                user_agent=request.headers.get("User-Agent", ""),
            ),
        )
        return Response(
            shapes.game_state(game),
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


def board_page(
    paginator: CursorPage, request: Request, *, deal: Deal, user: Any, around: int
) -> dict[str, Any]:
    """A page of a day's board with the board's size, my line and my neighbours."""
    paginator.ordering = board_selectors.DAY_BOARD_ORDER
    page = paginator.paginate_queryset(board_selectors.day_board_lines(deal), request)
    assert page is not None  # None only without a page size, and the paginator has one
    lines = board_selectors.ranked(deal, page, first=not paginator.has_previous)
    return _board(paginator.get_paginated_response(lines).data, deal=deal, user=user, around=around)


def board_top(*, deal: Deal, user: Any, limit: int) -> dict[str, Any]:
    """The top ``limit`` lines of a day's board, with the board's size, my line and my
    neighbours: the board socket's frame. A socket has no page links (its ``next`` and
    ``previous`` are null): a client pages over REST."""
    top = list(board_selectors.day_board_lines(deal)[:limit])
    lines = board_selectors.ranked(deal, top, first=True)
    page = {"next": None, "previous": None, "results": lines}
    return _board(page, deal=deal, user=user, around=BOARD_AROUND)


def _board(page: dict[str, Any], *, deal: Deal, user: Any, around: int) -> dict[str, Any]:
    mine = board_selectors.day_board_me(deal=deal, user=user, around=around)
    return shapes.day_board({**page, **mine})


class DailyBoardView(GenericAPIView):
    """A day's board: a page in rank order, and beside it the board's size, my line and my
    neighbours (`around` each side), whichever page it is."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["leaderboards"],
        parameters=[VARIANT_PARAMETER, DAY_PARAMETER, BoardQuery, *page_parameters()],
        responses={200: BoardSerializer, **errors(400, 404, 503)},
    )
    def get(self, request: Request, variant: str, day: str) -> Response:
        params = query(BoardQuery, request)
        deal = daily_selectors.published_deal(variant_parse(variant), day_parse(day))
        return Response(
            board_page(paginator_of(self), request, deal=deal, user=request.user, **params)
        )


class DailyReplayView(APIView):
    """A result's move log once the day is over; `?step=k` adds the position after k entries."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["leaderboards"],
        parameters=[VARIANT_PARAMETER, DAY_PARAMETER, s.ReplayQuery],
        responses={200: ReplaySerializer, **errors(400, 404, 503)},
    )
    def get(self, request: Request, variant: str, day: str, result_id: int) -> Response:
        deal = daily_selectors.published_deal(variant_parse(variant), day_parse(day))
        step = query(s.ReplayQuery, request).get("step")
        replay = daily_selectors.result_replay(deal=deal, result_id=result_id, step=step)
        return Response(shapes.replay(replay))


class AlltimeBoardView(GenericAPIView):
    """All-time board of a variant: days won, best streak or current streak."""

    permission_classes = [AllowAny]
    ordering = board_selectors.ALLTIME_ORDER

    @extend_schema(
        tags=["leaderboards"],
        parameters=[VARIANT_PARAMETER, AlltimeQuery],
        responses={200: AlltimeEntrySerializer(many=True), **errors(400, 404)},
    )
    def get(self, request: Request, variant: str) -> Response:
        params = query(AlltimeQuery, request)
        board = board_selectors.alltime_board(variant=variant_parse(variant), **params)
        page = self.paginate_queryset(board)
        assert page is not None  # None only without a page size, and the paginator has one
        ranked = board_selectors.alltime_ranked(
            board, page, first=not paginator_of(self).has_previous
        )
        return self.get_paginated_response(shapes.alltime_lines(ranked))


class PlayerRecordView(APIView):
    """A player's daily record: played, won, win rate, streaks, best results per variant;
    and their quick-race ratings."""

    permission_classes = [AllowAny]

    @extend_schema(tags=["leaderboards"], responses={200: PlayerRecordSerializer, **errors(404)})
    def get(self, request: Request, username: str) -> Response:
        user = account_selectors.player_by_name(username)
        stats = board_selectors.stats_of_player(user=user)
        return Response(
            shapes.player_record(
                user, stats, race_ratings=race_selectors.player_race_ratings(user=user)
            )
        )
