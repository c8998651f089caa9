"""Helpers for the analysis tests: finished games played by the benchmark's greedy player.

Deals and players are chosen where the solver decides every position it is asked
about within a few thousand states, so the tests stay fast.
"""

from __future__ import annotations

from typing import Any

from bench._greedy import greedy_log
from games.models import Game
from games.play import finish
from games.play import move as play_move
from games.services import games as game_services

#: A Belvedere practice deal and greedy player whose game is lost at a move the solver
#: pins within a few thousand states: (variant, seed, player).
LOST_GAME = ("belvedere", 3, 0)


def play_log(game: Game, user: Any, log: list[str]) -> Game:
    """Play ``log`` in ``game`` through the move service; resign if it is not over then."""
    for ply, move in enumerate(log):
        play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
    game.refresh_from_db()
    if game.status == "playing":
        game = finish.resign(game_id=game.pk, user=user).game
    return game


def finished_practice_game(user: Any, variant: str, seed: int, player: int) -> Game:
    """A practice game of ``user`` played to its end by the greedy player ``player``."""
    game = game_services.practice_game_start(user=user, variant=variant, seed=seed)
    return play_log(game, user, greedy_log(variant, seed, player))
