"""REST doors of races: lobby, quick race, private races, joining, the race itself,
replays, rematch and the rating boards (``games.services.races``).

A race's JSON carries counts only, never a card: players and spectators read the
same view (``you`` names the reader's own game; play it through ``games/<id>/``).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import AllowAny, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import serializers as s
from api import shapes
from api.authentication import signed_in_user
from api.daily import query
from api.openapi import errors
from api.pagination import paginator_of
from api.shapes import RaceReplaySerializer, RaceSerializer, RatingLineSerializer
from games.engine import VARIANTS
from games.models import Race
from games.selectors import races as race_selectors
from games.services import races as race_services


class RaceInput(serializers.Serializer):
    variant = serializers.ChoiceField(choices=sorted(VARIANTS))


class LobbyQuery(serializers.Serializer):
    variant = serializers.ChoiceField(choices=sorted(VARIANTS), required=False)


CODE_PARAMETER = OpenApiParameter(
    "code", str, OpenApiParameter.PATH, pattern=r"^[a-z0-9]{10}$", description="A race's code."
)
FAMILY_PARAMETER = OpenApiParameter(
    "family", str, OpenApiParameter.PATH, enum=sorted(race_selectors.TIME_LIMIT_SECONDS)
)

JOIN_CONFLICTS = ("race_full", "race_started", "already_racing")


def race_response(race: Race, request: Request, code: int = status.HTTP_200_OK) -> Response:
    return Response(shapes.race(race, request.user), status=code)


class RaceListView(APIView):
    """Open public races that have not started, soonest start first (the lobby); and
    creating a private race, with you in it, whose link you share (12 an hour at most:
    429 `race_limit`; a race left before its start gives its deal back)."""

    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(
        tags=["races"],
        parameters=[LobbyQuery],
        responses={200: RaceSerializer(many=True), **errors(400)},
    )
    def get(self, request: Request) -> Response:
        params = query(LobbyQuery, request)
        races = race_selectors.races_open(**params)[:50]
        return Response(shapes.races(races, request.user))

    @extend_schema(
        tags=["races"],
        request=RaceInput,
        responses={
            201: RaceSerializer,
            **errors(400, 401, 403, 409, 429, 503, conflicts=("already_racing",)),
        },
    )
    def post(self, request: Request) -> Response:
        data = RaceInput(data=request.data)
        data.is_valid(raise_exception=True)
        race = race_services.race_create(user=signed_in_user(request), **data.validated_data)
        return race_response(race, request, status.HTTP_201_CREATED)


class RaceQuickView(APIView):
    """Quick race: join the open public race of a variant that starts soonest (200), or
    open one (201). It starts 20 s after its second player joined, 5 s once full (8)."""

    @extend_schema(
        tags=["races"],
        request=RaceInput,
        responses={
            200: RaceSerializer,
            201: RaceSerializer,
            **errors(400, 401, 403, 409, 503, conflicts=("already_racing",)),
        },
    )
    def post(self, request: Request) -> Response:
        data = RaceInput(data=request.data)
        data.is_valid(raise_exception=True)
        race, created = race_services.race_quick_join(
            user=signed_in_user(request), **data.validated_data
        )
        return race_response(race, request, status.HTTP_201_CREATED if created else 200)


class RaceDetailView(APIView):
    """A race: roster, countdown, progress, and once finished the standings."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["races"], parameters=[CODE_PARAMETER], responses={200: RaceSerializer, **errors(404)}
    )
    def get(self, request: Request, code: str) -> Response:
        return race_response(race_selectors.race_by_code(code), request)


class RaceJoinView(APIView):
    """Join a race before its start (by its link)."""

    @extend_schema(
        tags=["races"],
        parameters=[CODE_PARAMETER],
        request=None,
        responses={200: RaceSerializer, **errors(401, 403, 404, 409, conflicts=JOIN_CONFLICTS)},
    )
    def post(self, request: Request, code: str) -> Response:
        return race_response(
            race_services.race_join(user=signed_in_user(request), code=code), request
        )


class RaceLeaveView(APIView):
    """Leave a race before its start."""

    @extend_schema(
        tags=["races"],
        parameters=[CODE_PARAMETER],
        request=None,
        responses={200: RaceSerializer, **errors(401, 403, 404, 409, conflicts=("race_started",))},
    )
    def post(self, request: Request, code: str) -> Response:
        return race_response(
            race_services.race_leave(user=signed_in_user(request), code=code), request
        )


class RaceStartView(APIView):
    """The creator starts a private race of two players or more: a 5 s countdown.

    Anyone else, and any quick race, is 403 `not_creator`."""

    @extend_schema(
        tags=["races"],
        parameters=[CODE_PARAMETER],
        request=None,
        responses={
            200: RaceSerializer,
            **errors(401, 403, 404, 409, conflicts=("race_started", "too_few_players")),
        },
    )
    def post(self, request: Request, code: str) -> Response:
        return race_response(
            race_services.race_start(user=signed_in_user(request), code=code), request
        )


class RaceRematchView(APIView):
    """After a race: a new private race on a new deal for its players. The first to ask
    opens it (201) and the race's `rematch` points to it; the others asking join it (200)."""

    @extend_schema(
        tags=["races"],
        parameters=[CODE_PARAMETER],
        request=None,
        responses={
            200: RaceSerializer,
            201: RaceSerializer,
            **errors(
                401, 403, 404, 409, 429, 503, conflicts=("race_not_finished", *JOIN_CONFLICTS)
            ),
        },
    )
    def post(self, request: Request, code: str) -> Response:
        race, created = race_services.race_rematch(user=signed_in_user(request), code=code)
        return race_response(race, request, status.HTTP_201_CREATED if created else 200)


class RaceReplayView(APIView):
    """A player's game of a finished race: its log, the deal; `?step=k` adds the position
    after k log entries."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["races"],
        parameters=[CODE_PARAMETER, s.ReplayQuery],
        responses={
            200: RaceReplaySerializer,
            **errors(400, 404, 409, conflicts=("race_not_finished",)),
        },
    )
    def get(self, request: Request, code: str, username: str) -> Response:
        params = query(s.ReplayQuery, request)
        race = race_selectors.race_by_code(code)
        replay = race_selectors.race_replay(race=race, username=username, step=params.get("step"))
        return Response(shapes.race_replay(replay))


class RaceLeaderboardView(GenericAPIView):
    """The quick-race ratings of a variant family, best first."""

    permission_classes = [AllowAny]
    ordering = race_selectors.RACE_BOARD_ORDER

    @extend_schema(
        tags=["races"],
        parameters=[FAMILY_PARAMETER],
        responses={200: RatingLineSerializer(many=True), **errors(404)},
    )
    def get(self, request: Request, family: str) -> Response:
        board = race_selectors.race_leaderboard(family=family)
        page = self.paginate_queryset(board)
        assert page is not None  # None only without a page size, and the paginator has one
        ranked = race_selectors.race_board_ranked(
            board, page, first=not paginator_of(self).has_previous
        )
        return self.get_paginated_response(shapes.race_leaderboard(ranked))
