"""REST doors for daily challenges and leaderboards (thin: parse, call, render)."""

from __future__ import annotations

import re
from datetime import date

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.authentication import signed_in_user
from api.serializers import GameStateSerializer, PositionSerializer
from api.views import errors
from games import clock
from games.engine import VARIANTS
from games.errors import InvalidInput, NotFound
from games.selectors import accounts as account_selectors
from games.selectors import boards as board_selectors
from games.selectors import dailies as daily_selectors
from games.selectors import games as game_selectors
from games.services import dailies as daily_services

# -- serializers (inputs and documented outputs) ------------------------------------------


class DailySerializer(serializers.Serializer):
    variant = serializers.CharField()
    date = serializers.DateField()
    commitment = serializers.CharField(help_text="SHA-256 of the seed's decimal text.")
    seed = serializers.CharField(allow_null=True, help_text="Published once the day is over.")
    deck = serializers.ListField(
        child=serializers.CharField(), allow_null=True, help_text="Published once the day is over."
    )
    par = serializers.IntegerField(
        allow_null=True,
        help_text="Moves in the solver's winning line; published once the day is over "
        "(null for a deal that was not certified).",
    )
    par_line = serializers.ListField(
        child=serializers.CharField(),
        allow_null=True,
        help_text="The solver's winning line in the spec's notation, published with `par`.",
    )
    seconds_left = serializers.IntegerField(help_text="Until the day ends (UTC).")


class MyDailyGameSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    score = serializers.IntegerField()
    ply = serializers.IntegerField()
    rank = serializers.IntegerField(allow_null=True)


class DailyOverviewSerializer(DailySerializer):
    name = serializers.CharField()
    my_game = MyDailyGameSerializer(allow_null=True)


class BoardEntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    result_id = serializers.IntegerField()
    player = serializers.CharField()
    won = serializers.BooleanField()
    cards_home = serializers.IntegerField()
    moves = serializers.IntegerField()
    time_ms = serializers.IntegerField()
    finished_at = serializers.DateTimeField()


class BoardSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    results = BoardEntrySerializer(many=True)
    next = serializers.CharField(allow_null=True, help_text="Cursor for the next page (`after`).")
    me = BoardEntrySerializer(allow_null=True)
    around = BoardEntrySerializer(many=True)


class BoardQuery(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=100, default=50)
    after = serializers.CharField(max_length=64, required=False)
    around = serializers.IntegerField(min_value=0, max_value=25, default=3)


class AlltimeQuery(serializers.Serializer):
    order = serializers.ChoiceField(choices=board_selectors.ALLTIME_ORDERS, default="days_won")
    limit = serializers.IntegerField(min_value=1, max_value=100, default=50)
    offset = serializers.IntegerField(min_value=0, default=0)


class AlltimeEntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    days_won = serializers.IntegerField()
    played = serializers.IntegerField()
    best_streak = serializers.IntegerField()
    current_streak = serializers.IntegerField()


class AlltimeSerializer(serializers.Serializer):
    order = serializers.CharField()
    results = AlltimeEntrySerializer(many=True)
    next_offset = serializers.IntegerField(allow_null=True)


class BestSerializer(serializers.Serializer):
    date = serializers.DateField()
    won = serializers.BooleanField()
    cards_home = serializers.IntegerField()
    moves = serializers.IntegerField()
    time_ms = serializers.IntegerField()


class VariantRecordSerializer(serializers.Serializer):
    variant = serializers.CharField()
    played = serializers.IntegerField()
    won = serializers.IntegerField()
    win_rate = serializers.FloatField()
    best_streak = serializers.IntegerField()
    current_streak = serializers.IntegerField()
    best = BestSerializer(allow_null=True)


class PlayerRecordSerializer(serializers.Serializer):
    player = serializers.CharField()
    played = serializers.IntegerField()
    won = serializers.IntegerField()
    win_rate = serializers.FloatField()
    variants = VariantRecordSerializer(many=True)


class ReplayPositionSerializer(PositionSerializer):
    status = serializers.CharField()
    score = serializers.IntegerField()


class ReplaySerializer(serializers.Serializer):
    result_id = serializers.IntegerField()
    player = serializers.CharField()
    won = serializers.BooleanField()
    cards_home = serializers.IntegerField()
    moves = serializers.ListField(child=serializers.CharField())
    steps = serializers.IntegerField()
    deal = serializers.DictField()
    step = serializers.IntegerField(allow_null=True)
    position = serializers.DictField(
        allow_null=True, help_text="Full position (stock included) after `step` log entries."
    )


# -- helpers ------------------------------------------------------------------------------


#: The word that stands for the current UTC day wherever a day is asked for.
TODAY = "today"

#: The path parameter ``variant``: a key of ``VariantEnum``, the enum of the game-start
#: body's ``variant`` (one enum for generated clients); any other key is 404 ``not_found``.
VARIANT_PARAMETER = OpenApiParameter(
    "variant",
    {"$ref": "#/components/schemas/VariantEnum"},
    OpenApiParameter.PATH,
    description="A variant's key.",
)

ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

#: The path parameter ``day`` of every daily route, as the schema documents it.
DAY_PARAMETER = OpenApiParameter(
    "day",
    str,
    OpenApiParameter.PATH,
    pattern=r"^([0-9]{4}-[0-9]{2}-[0-9]{2}|today)$",
    description="A UTC day as `YYYY-MM-DD`, or `today` for the current UTC day.",
)


def parse_day(text: str) -> date:
    """A day of a path: ``YYYY-MM-DD``, or ``today`` (the current UTC day)."""
    if text == TODAY:
        return clock.today()
    try:
        # fromisoformat alone also takes 20261201 and 2026-W49-2: only the documented form.
        if not ISO_DAY.fullmatch(text):
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{text!r} is not a date (YYYY-MM-DD or today)") from None


def parse_variant(key: str) -> str:
    if key not in VARIANTS:
        raise NotFound(f"no variant {key!r}")
    return key


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
        return Response(daily_selectors.daily_overview(user=request.user, day=clock.today()))


class DailyDetailView(APIView):
    """One daily: commitment, and seed and deck once the day is over."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["daily"],
        parameters=[VARIANT_PARAMETER, DAY_PARAMETER],
        responses={200: DailySerializer, **errors(400, 404, 503)},
    )
    def get(self, request: Request, variant: str, day: str) -> Response:
        deal = daily_selectors.published_deal(parse_variant(variant), parse_day(day))
        return Response(daily_selectors.deal_public(deal))


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
            user=signed_in_user(request), variant=parse_variant(variant), day=parse_day(day)
        )
        return Response(
            game_selectors.game_state(game),
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class DailyBoardView(APIView):
    """A day's board: a page in rank order (keyset paging), my rank and my neighbours."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["leaderboards"],
        parameters=[VARIANT_PARAMETER, DAY_PARAMETER, BoardQuery],
        responses={200: BoardSerializer, **errors(400, 404, 503)},
    )
    def get(self, request: Request, variant: str, day: str) -> Response:
        params = query(BoardQuery, request)
        deal = daily_selectors.published_deal(parse_variant(variant), parse_day(day))
        return Response(board_selectors.day_board(deal=deal, user=request.user, **params))


class DailyReplayView(APIView):
    """A result's move log once the day is over; `?step=k` adds the position after k entries."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["leaderboards"],
        parameters=[
            VARIANT_PARAMETER,
            DAY_PARAMETER,
            OpenApiParameter("step", int, required=False),
        ],
        responses={200: ReplaySerializer, **errors(400, 404, 503)},
    )
    def get(self, request: Request, variant: str, day: str, result_id: int) -> Response:
        deal = daily_selectors.published_deal(parse_variant(variant), parse_day(day))
        step = request.query_params.get("step")
        # ASCII digits ("²".isdigit() is true), few of them (int() refuses 4300 and more).
        if step is not None and not (step.isascii() and step.isdigit() and len(step) <= 9):
            raise InvalidInput("step must be a whole number")
        return Response(
            daily_selectors.result_replay(
                deal=deal, result_id=result_id, step=None if step is None else int(step)
            )
        )


class AlltimeBoardView(APIView):
    """All-time board of a variant: days won, best streak or current streak."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["leaderboards"],
        parameters=[VARIANT_PARAMETER, AlltimeQuery],
        responses={200: AlltimeSerializer, **errors(400, 404)},
    )
    def get(self, request: Request, variant: str) -> Response:
        params = query(AlltimeQuery, request)
        return Response(board_selectors.alltime_board(variant=parse_variant(variant), **params))


class PlayerRecordView(APIView):
    """A player's daily record: played, won, win rate, streaks, best results per variant."""

    permission_classes = [AllowAny]

    @extend_schema(tags=["leaderboards"], responses={200: PlayerRecordSerializer, **errors(404)})
    def get(self, request: Request, username: str) -> Response:
        user = account_selectors.player_by_name(username)
        return Response(board_selectors.player_record(user=user))
