"""Certified dailies: the chosen seed is the first candidate the solver proves winnable."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import pytest

from api import shapes
from core import clock
from core.errors import NoCertifiedDeal
from games.engine import new_position
from games.engine.solver import Verdict, solve
from games.services.dailies import (
    daily_candidate_certify,
    daily_create,
    daily_replace,
    daily_seed_derive,
)

# With this secret, candidate 0 of this day's reversed gallery is lost (the second proof
# confirms it) and candidate 1 is won within the node limit (found once, pinned here).
SECRET = "dev-daily-secret-change-me"
DAY = date(2026, 12, 6)
VARIANT = "picture-gallery-reversed"
NODES = 50_000

pytestmark = [pytest.mark.certified, pytest.mark.django_db]


@pytest.fixture
def certify(settings: Any) -> None:
    settings.DAILY_SECRET = SECRET
    settings.DAILY_SOLVER_NODES = NODES
    settings.DAILY_MAX_CANDIDATES = 20


@pytest.fixture
def at(monkeypatch: pytest.MonkeyPatch) -> Any:
    def move_to(day: date) -> None:
        instant = datetime.combine(day, datetime.min.time(), tzinfo=clock.UTC)
        monkeypatch.setattr(clock, "now", lambda: instant + timedelta(hours=12))
        monkeypatch.setattr(clock, "shared_now", lambda: instant + timedelta(hours=12))

    return move_to


def test_an_uncertified_candidate_is_skipped(certify: None) -> None:
    first = solve(new_position(VARIANT, seed=daily_seed_derive(VARIANT, DAY, 0)), max_nodes=NODES)
    assert first.verdict is not Verdict.WON
    chosen = daily_candidate_certify(VARIANT, DAY)
    assert chosen.index == 1
    assert chosen.seed == daily_seed_derive(VARIANT, DAY, 1) and chosen.line is not None
    assert new_position(VARIANT, seed=chosen.seed).play(chosen.line).is_won


def test_the_choice_is_reproducible(certify: None) -> None:
    assert daily_candidate_certify(VARIANT, DAY) == daily_candidate_certify(VARIANT, DAY)


def test_daily_deal_stores_the_winning_line(certify: None, at: Any) -> None:
    at(DAY - timedelta(days=3))
    deal = daily_create("bristol", DAY)
    assert deal.par_line and deal.par == len(deal.par_line)
    assert new_position("bristol", seed=int(deal.seed)).play(deal.par_line).is_won
    assert deal.solver_nodes and deal.solver_nodes > 0


def test_par_is_published_with_the_seed_after_the_day(certify: None, at: Any) -> None:
    deal = daily_create("belvedere", DAY)
    at(DAY)
    hidden = shapes.daily(deal)
    assert hidden["par"] is None and hidden["par_line"] is None and hidden["seed"] is None
    at(DAY + timedelta(days=1))
    shown = shapes.daily(deal)
    assert shown["par"] == deal.par and shown["par_line"] == deal.par_line
    assert shown["seed"] == str(deal.seed)


def test_replacing_takes_the_next_certified_candidate(certify: None, at: Any) -> None:
    at(DAY - timedelta(days=2))
    deal = daily_create(VARIANT, DAY)
    assert deal.seed_index == 1
    replaced = daily_replace(deal)
    assert replaced.seed_index >= 2
    assert int(replaced.seed) == daily_seed_derive(VARIANT, DAY, replaced.seed_index)
    assert replaced.par_line is not None
    assert new_position(VARIANT, seed=int(replaced.seed)).play(replaced.par_line).is_won


def test_no_certified_candidate_is_an_error(certify: None, settings: Any) -> None:
    settings.DAILY_MAX_CANDIDATES = 1
    with pytest.raises(NoCertifiedDeal) as info:
        daily_candidate_certify(VARIANT, DAY)
    assert info.value.code == "no_certified_deal"
