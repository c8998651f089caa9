"""Writes: starting games and hints (a move and a game's end are ``games.play``)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction

from core import clock
from core.errors import (
    GameFinished,
    HintNotAllowed,
    InvalidInput,
)
from games import hints
from games.engine import (
    SEED_LIMIT,
    Status,
    get_variant,
    new_position,
)
from games.models import Deal, Game
from games.play import store
from games.selectors.games import (
    game_for_player,
    game_position,
    hints_allowed,
)


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
        position=start.to_json(),
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


@dataclass(frozen=True)
class Hint:
    """A hint at ``ply``: the solver's verdict and, if winnable, the next move of a win."""

    ply: int
    verdict: str
    move: str | None
    nodes: int


def game_hint(*, game_id: int, user: User) -> Hint:
    """The next move of a winning line in a practice game; the game becomes assisted.

    The solver knows the stock, so a hint carries hidden information: ranked
    games, and every game of a daily whose day is not over, get none, and a
    hinted practice game is marked assisted. The solver runs in a worker process
    (``games.hints``: its limits per player and per server), outside any
    transaction, on the snapshot at the ply returned. A server process takes only so
    many hint requests a second from all players (``hints.hint_admit``).
    """
    hints.hint_admit()
    game = game_for_player(game_id=game_id, user=user)
    if not hints_allowed(game):
        raise HintNotAllowed(
            "hints use the hidden stock: none in a ranked game, nor in any game of a "
            "daily before its day is over"
        )
    if game.status != Status.PLAYING:
        raise GameFinished(f"the game is {game.status}")
    answer = hints.hint_answer(game_position(game), player=user.pk)
    Game.objects.filter(pk=game.pk, assisted=False).update(assisted=True)
    return Hint(ply=game.ply, verdict=answer.verdict, move=answer.move, nodes=answer.nodes)
