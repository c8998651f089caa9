"""The board box a page keeps for its board before the script draws it (web_tags)."""

from __future__ import annotations

import re

from devtools.layout import long_fans
from web.templatetags.web_tags import board_box


def box(style: str) -> dict[str, float]:
    return {k: float(v) for k, v in re.findall(r"--([a-z]+-[wt]): ([\d.]+)", style)}


def test_the_board_box_of_a_dealt_game_has_room_for_ten_cards_a_pile() -> None:
    # Bristol: the top row, the fans and (beside them, or below on a portrait screen)
    # the reserves, each fan box 1.4 card widths plus room for ten cards at 0.35.
    b = box(board_box("bristol", {"piles": {"t1": ["4D", "5C", "JH"], "r1": ["2D"]}}))
    assert b["bh-w"] == round(2.8 + 3.15, 2) and b["bh-t"] == round(4.2 + 3.15 + 3.15, 2)
    assert b["bw-w"] == 11 and b["bw-t"] == 8
    assert box(board_box("bristol")) == b  # a page without a position (a replay's start)


def test_a_longer_pile_makes_the_board_taller() -> None:
    b = box(board_box("bristol", long_fans()))
    assert b["bh-w"] == round(2.8 + 13 * 0.35, 2)  # the 14-card fan, at its index step
    assert b["bh-t"] == round(4.2 + 13 * 0.35 + 3.15, 2)
    gallery = box(board_box("gallery", {"piles": {"r1": ["AS"] * 14}}))
    assert gallery["bh-t"] == round(10.15 + 13 * 0.35, 2)
    assert gallery["bh-w"] == round(4.2 + 13 * 0.35, 2)
