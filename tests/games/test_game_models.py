"""Model constraints: seeds are exact and range-checked on every database; one move per ply."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import DataError, IntegrityError, transaction
from django.utils import timezone

from games.engine import SEED_LIMIT, new_position
from games.engine.record import position_bytes, position_from_bytes
from games.models import Deal, Game

pytestmark = pytest.mark.django_db

SEEDS = [0, 7, 2**53 + 1, 2**63 - 1, 2**63, 10**19, SEED_LIMIT - 2, SEED_LIMIT - 1]


def test_seeds_come_back_exactly_and_in_number_order() -> None:
    for seed in SEEDS:
        Deal.objects.create(variant="bristol", seed=seed)
    stored = list(Deal.objects.order_by("seed").values_list("seed", flat=True))
    assert stored == [Decimal(s) for s in SEEDS]
    assert all(isinstance(s, Decimal) for s in stored)
    assert Deal.objects.get(seed=2**63).seed == 2**63
    assert Deal.objects.filter(seed__gt=2**63).count() == 3
    assert Deal.objects.filter(seed__lt=10).count() == 2


@pytest.mark.parametrize("seed", [-1, SEED_LIMIT, 10**20])
def test_seeds_out_of_range_are_refused_by_the_database(seed: int) -> None:
    # PostgreSQL's numeric(20, 0) refuses 21 digits itself (DataError).
    with pytest.raises((IntegrityError, DataError)), transaction.atomic():
        Deal.objects.create(variant="bristol", seed=seed)


def test_one_practice_deal_per_variant_and_seed() -> None:
    Deal.objects.create(variant="bristol", seed=SEED_LIMIT - 1)
    Deal.objects.create(variant="belvedere", seed=SEED_LIMIT - 1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Deal.objects.create(variant="bristol", seed=SEED_LIMIT - 1)
    Deal.objects.create(variant="bristol", seed=SEED_LIMIT - 2)


def test_a_new_game_has_an_empty_log_and_its_position_in_bytes(user: Any) -> None:
    deal = Deal.objects.create(variant="bristol", seed=1)
    start = new_position("bristol", seed=1)
    game = Game.objects.create(
        player=user, deal=deal, started_at=timezone.now(), position=position_bytes(start)
    )
    stored = Game.objects.get(pk=game.pk)
    assert bytes(stored.log) == b"" and stored.moved_at is None
    assert position_from_bytes(stored.position) == start


def test_a_finished_game_needs_a_finish_time(user: Any) -> None:
    deal = Deal.objects.create(variant="bristol", seed=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Game.objects.create(
            player=user,
            deal=deal,
            status="resigned",
            started_at=timezone.now(),
            position=position_bytes(new_position("bristol", seed=1)),
        )
