"""A day's board: its lines and pages, with my line and my neighbours."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rest_framework import serializers

from api.shapes.fields import instant, render

if TYPE_CHECKING:
    pass


class BoardEntrySerializer(serializers.Serializer):
    """A line of a day's board, as REST, the board socket and its `board.result` events
    send it."""

    rank = serializers.IntegerField()
    result_id = serializers.IntegerField()
    player = serializers.CharField(source="player_name")
    won = serializers.BooleanField()
    cards_home = serializers.IntegerField()
    moves = serializers.IntegerField()
    time_ms = serializers.IntegerField()
    finished_at = instant()


class BoardSerializer(serializers.Serializer):
    """A page of a day's board (`next`, `previous`, `results`, as every list pages), with
    the board's size, my line and my neighbours whichever page it is."""

    next = serializers.URLField(allow_null=True, help_text="The next page, if any.")
    previous = serializers.URLField(allow_null=True, help_text="The previous page, if any.")
    results = BoardEntrySerializer(many=True)
    total = serializers.IntegerField(help_text="Lines on the board.")
    me = BoardEntrySerializer(allow_null=True, help_text="My line, if I have one.")
    around = BoardEntrySerializer(
        many=True, help_text="My line and my neighbours each side (`around`), in rank order."
    )


def board_line(line: dict[str, Any]) -> dict[str, Any]:
    """A board line (a row of ``games.selectors.boards``, with its rank)."""
    return render(BoardEntrySerializer, line)


def day_board(board: dict[str, Any]) -> dict[str, Any]:
    """A page of a day's board: a page of ``games.selectors.boards.ranked`` lines with its
    links, and what ``games.selectors.boards.day_board_me`` reads."""
    return render(BoardSerializer, board)
