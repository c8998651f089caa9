"""games.stats: the Wilson interval the winrate command reports."""

from __future__ import annotations

import doctest

import pytest

import games.stats
from games.stats import wilson_interval


def test_wilson_interval() -> None:
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_documented_examples_run() -> None:
    result = doctest.testmod(games.stats)
    assert result.attempted > 0 and result.failed == 0
