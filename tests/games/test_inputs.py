"""The one parser of what clients name and send: variants, days, moves and plies."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from core import clock
from core.errors import InvalidInput, NotFound
from games.engine import VARIANTS
from games.inputs import MOVE_MAX_LENGTH, day_parse, move_parse, ply_parse, variant_parse


@pytest.mark.parametrize("key", sorted(VARIANTS))
def test_every_variant_key_parses_to_itself(key: str) -> None:
    assert variant_parse(key) == key


@pytest.mark.parametrize("key", ["spider", "", "Bristol", "bristol\x00"])
def test_an_unknown_variant_is_not_found(key: str) -> None:
    with pytest.raises(NotFound):
        variant_parse(key)


def test_a_day_is_iso_or_today() -> None:
    assert day_parse("2026-03-09") == date(2026, 3, 9)
    assert day_parse("today") == clock.today()
    assert day_parse("today") - timedelta(days=1) == day_parse(
        (clock.today() - timedelta(days=1)).isoformat()
    )


@pytest.mark.parametrize(
    "bad", ["2026-13-01", "yesterday", "2026-02-30", "20260310", "2026-W11-2", "Today", ""]
)
def test_any_other_day_is_invalid_input(bad: str) -> None:
    with pytest.raises(InvalidInput):
        day_parse(bad)


def test_a_move_is_short_text_the_database_can_store() -> None:
    assert move_parse("t3-f") == "t3-f"
    assert move_parse("x" * MOVE_MAX_LENGTH) == "x" * MOVE_MAX_LENGTH
    for bad in ["", "x" * (MOVE_MAX_LENGTH + 1), 7, None, ["deal"], "de\x00al", "de\ud800al"]:
        with pytest.raises(InvalidInput):
            move_parse(bad)


def test_a_ply_is_a_whole_number_from_zero() -> None:
    assert ply_parse(0) == 0 and ply_parse(12) == 12
    for bad in [-1, True, 1.0, "3", None]:
        with pytest.raises(InvalidInput):
            ply_parse(bad)
