"""REST doors for analyses of finished games, and their public shapes (thin: parse, call,
render). ``docs/analysis.md`` tells what an analysis is."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.openapi import errors
from games.engine import Position
from games.inputs import day_parse, variant_parse
from games.models import Analysis
from games.selectors import analysis as analysis_selectors
from games.selectors import dailies as daily_selectors
from games.services import analysis as analysis_services

# -- shapes -------------------------------------------------------------------------------


class WinningLineSerializer(serializers.Serializer):
    start = serializers.IntegerField(help_text="The position (moves on the board) it wins from.")
    moves = serializers.ListField(child=serializers.CharField())
    positions = serializers.ListField(
        child=serializers.DictField(),
        help_text="The public position before the line and after each of its moves, "
        "for a page to play the line on its board.",
    )


class FatalMoveSerializer(serializers.Serializer):
    move = serializers.IntegerField(help_text="Its number (1 is the first move on the board).")
    notation = serializers.CharField()


class AnalysisReportSerializer(serializers.Serializer):
    summary = serializers.ChoiceField(
        choices=["won", "still_winnable", "never_winnable", "fatal", "range", "unknown"],
        help_text="`won`: the game was won; `still_winnable`: it ended while it could still "
        "be won; `never_winnable`: the deal itself is lost; `fatal`: `fatal` is the first "
        "move after which it was lost; `range`: the fatal move is one of the moves after "
        "`last_won` up to `first_lost` (the solver's budget ran out between them); "
        "`unknown`: no position of the game was proven lost.",
    )
    moves = serializers.ListField(
        child=serializers.CharField(),
        help_text="The moves on the board at the end (undone ones left out).",
    )
    verdicts = serializers.ListField(
        child=serializers.CharField(),
        help_text="`won`, `lost` or `unknown`: the verdict of the start (index 0) and of the "
        "position after each move. "
        "`unknown` is never counted as lost.",
    )
    steps = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="For each position, the replay step (log entries) that last showed it.",
    )
    last_won = serializers.IntegerField(allow_null=True)
    first_lost = serializers.IntegerField(allow_null=True)
    fatal = FatalMoveSerializer(allow_null=True)
    winning_line = WinningLineSerializer(allow_null=True)
    par = serializers.IntegerField(allow_null=True, help_text="A certified daily's par.")
    played = serializers.IntegerField(help_text="Moves on the board at the end.")
    solver_calls = serializers.IntegerField()
    solver_nodes = serializers.IntegerField()


class AnalysisSerializer(serializers.Serializer):
    game_id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=Analysis.State.values)
    analysis = AnalysisReportSerializer(allow_null=True, help_text="Once `state` is `done`.")


def _line_positions(start: dict[str, Any], moves: list[str]) -> list[dict[str, Any]]:
    position = Position.from_json(start)
    out = [position.public_json()]
    for move in moves:
        position = position.apply(move)
        out.append(position.public_json())
    return out


def analysis_report(stored: dict[str, Any]) -> dict[str, Any]:
    """A done analysis as the API shows it (from its stored report)."""
    first_lost, moves = stored["first_lost"], stored["moves"]
    fatal = (
        {"move": first_lost, "notation": moves[first_lost - 1]}
        if stored["summary"] == "fatal"
        else None
    )
    line = None
    if stored["line_start"] is not None and stored["line"]:
        line = {
            "start": stored["last_won"],
            "moves": stored["line"],
            "positions": _line_positions(stored["line_start"], stored["line"]),
        }
    return {
        "summary": stored["summary"],
        "moves": moves,
        "verdicts": stored["verdicts"],
        "steps": stored["entries"],
        "last_won": stored["last_won"],
        "first_lost": first_lost,
        "fatal": fatal,
        "winning_line": line,
        "par": stored["par"],
        "played": len(moves),
        "solver_calls": stored["solver"]["calls"],
        "solver_nodes": stored["solver"]["nodes"],
    }


def analysis(row: Analysis) -> dict[str, Any]:
    """A game's analysis: its state, and the report once done."""
    stored = row.report if row.state == Analysis.State.DONE else None
    return {
        "game_id": row.game_id,
        "state": row.state,
        "analysis": None if stored is None else analysis_report(stored),
    }


class DayAnalysisSerializer(serializers.Serializer):
    analysed = serializers.IntegerField(help_text="Games of the day's board analysed so far.")
    pending = serializers.IntegerField(help_text="Games of the board not analysed yet.")
    after_move = serializers.ListField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text="For each move number (0: the deal), the analysed games still winnable "
        "after it (`won`), lost, and unknown; a game that ended sooner counts with its end.",
    )
    fatal_moves = serializers.ListField(
        child=serializers.DictField(),
        help_text="The most common fatal moves: move, notation, games.",
    )


# -- doors --------------------------------------------------------------------------------

ANALYSIS_CONFLICTS = ("game_not_finished", "day_not_over", "race_not_finished")


class GameAnalysisView(APIView):
    """A finished game's analysis by the solver: where it was lost, and a winning line.

    The first request queues it (once per game); `202` with `Retry-After` while it is
    queued or running, `200` once done (the game's socket also says `analysis.ready`).
    A practice game's player sees it once the game has ended; anyone may see the
    analysis of a game on a finished day's board, or of a finished race's game.
    """

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["games"],
        responses={
            200: AnalysisSerializer,
            202: AnalysisSerializer,
            **errors(404, 409, conflicts=ANALYSIS_CONFLICTS),
        },
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = analysis_selectors.game_for_analysis(game_id=game_id, user=request.user)
        row = analysis_services.analysis_ask(game)
        if row.state == Analysis.State.DONE:
            return Response(analysis(row))
        wait = str(settings.ANALYSIS_RETRY_AFTER)
        return Response(
            analysis(row), status=status.HTTP_202_ACCEPTED, headers={"Retry-After": wait}
        )


class DayAnalysisView(APIView):
    """What the analyses of a finished day's games say together: the share of the board's
    games still winnable after each move, and the most common fatal moves."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["daily"],
        responses={200: DayAnalysisSerializer, **errors(404, 409, conflicts=("day_not_over",))},
    )
    def get(self, request: Request, variant: str, day: str) -> Response:
        deal = daily_selectors.published_deal(variant_parse(variant), day_parse(day))
        return Response(analysis_services.day_analysis_ask(deal))
