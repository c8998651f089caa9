"""Helpers of the race tests: a filled deal pool, players in a race, playing a game."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import time_machine

from games.engine import Status, new_position
from games.models import Deal, Game, Race, RaceEntry, RaceRating


def pool(
    settings: Any, variant: str = "bristol", size: int = 3, *, certified: bool = False
) -> None:
    """Fill the race pool of ``variant`` (certified deals carry their winning line)."""
    from games.services.race_pool import race_pool_fill

    settings.RACE_POOL_SIZE = size
    settings.RACE_SOLVER_NODES = 50_000 if certified else 0
    race_pool_fill(variants=[variant])
    settings.RACE_POOL_SIZE = 0  # the tests take deals without the job refilling


def at(moment: datetime) -> time_machine.travel:
    """Travel to ``moment`` (the clock ticks on from there)."""
    return time_machine.travel(moment, tick=True)


def starts(race: Race) -> datetime:
    """The start of a race that has one (from its countdown on)."""
    assert race.starts_at is not None, f"{race} has no start yet"
    return race.starts_at


def ends(race: Race) -> datetime:
    """The time limit of a race that has one (from its countdown on)."""
    assert race.ends_at is not None, f"{race} has no end yet"
    return race.ends_at


def game_of(race: Race, player: Any) -> Game:
    """``player``'s game of ``race`` (from its countdown on)."""
    game = RaceEntry.objects.select_related("game__deal").get(race=race, player=player).game
    assert game is not None, f"{player} has no game in {race} yet"
    return game


def after_start(race: Race) -> time_machine.travel:
    race.refresh_from_db()
    return at(starts(race) + timedelta(milliseconds=50))


def quiet_moves(deal: Deal | None, count: int) -> list[str]:
    """``count`` legal moves from the deal's start that are not ``deal`` (the first of them
    each time), unless ``deal`` is the only one (about one random deal in seventy)."""
    assert deal is not None, "a race keeps its deal once it has games"
    pos = new_position(deal.variant, seed=int(deal.seed))
    line = []
    for _ in range(count):
        move = next((str(m) for m in pos.legal_moves if str(m) != "deal"), "deal")
        line.append(move)
        pos = pos.apply(move)
    return line


def won_after(deal: Deal) -> bool:
    """Whether the deal's stored winning line wins it (the pool's certificate)."""
    pos = new_position(deal.variant, seed=int(deal.seed))
    for move in deal.par_line or []:
        pos = pos.apply(move)
    return pos.status == Status.WON


def established(players: list[Any], family: str = "bristol") -> None:
    """Give the players the raced races an account needs before its races are rated."""
    from games.services.race_ratings import RATED_AFTER_RACES

    for p in players:
        RaceRating.objects.update_or_create(
            player=p,
            family=family,
            defaults={"mu": 25.0, "sigma": 25 / 3, "rating": 0.0, "contested": RATED_AFTER_RACES},
        )


def play(race: Race, player: Any, moves: int) -> Game:
    """``player`` makes ``moves`` quiet moves in their game of a started race."""
    from games.play.move import apply_move as game_apply_move

    game = game_of(race, player)
    for ply, move in enumerate(quiet_moves(game.deal, moves)):
        game_apply_move(game_id=game.pk, user=player, move=move, ply=ply)
    game.refresh_from_db()
    return game
