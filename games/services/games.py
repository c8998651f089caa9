"""Writes: starting games (a move and a game's end: ``games.play``; hints: ``services.hints``)."""

from __future__ import annotations

import secrets

from django.contrib.auth.models import User
from django.db import transaction

from core import clock
from core.errors import (
    InvalidInput,
)
from games.engine import (
    SEED_LIMIT,
    Status,
    get_variant,
    new_position,
)
from games.engine.record import position_bytes
from games.models import Deal, Game
from games.play import store


def _check_seed(seed: int | None) -> int:
    if seed is None:
        return secrets.randbelow(SEED_LIMIT)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise InvalidInput("seed must be an integer with 0 <= seed < 2**64")
    return seed


def game_create(*, user: User, deal: Deal, ranked: bool = False) -> Game:
    """A new game of a deal for a player, timed from now; held for its first move."""
    start = new_position(deal.variant, seed=int(deal.seed))
    game = Game.objects.create(
        player=user,
        deal=deal,
        ranked=ranked,
        started_at=clock.now(),
        position=position_bytes(start),
        score=start.score,
        status=start.status.value,
        finished_at=None if start.status == Status.PLAYING else clock.now(),
    )
    store.hold_on_commit(game, start)
    return game


@transaction.atomic
def practice_game_start(*, user: User, variant: str, seed: int | None = None) -> Game:
    """Start a practice game of a variant; a random seed when none is given."""
    v = get_variant(variant)
    deal, _ = Deal.objects.get_or_create(
        kind=Deal.Kind.PRACTICE, variant=v.key, seed=_check_seed(seed)
    )
    return game_create(user=user, deal=deal)
