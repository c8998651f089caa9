"""A simple seeded player of whole games, for the analysis benchmark and its tests.

It plays a card home whenever it can, else a random other move, and deals only now and
then while other moves remain: good enough to win some deals and lose most, at moves
spread over the game, as a day's players do.
"""

from __future__ import annotations

import random

from games.engine import Position, new_position

#: Moves after which the player stops (the game then counts as resigned).
MAX_MOVES = 200


def greedy_log(variant: str, seed: int, player: int, *, max_moves: int = MAX_MOVES) -> list[str]:
    """The moves the player numbered ``player`` makes on deal ``seed`` of ``variant``."""
    rng = random.Random(f"{variant}/{seed}/{player}")
    position: Position = new_position(variant, seed=seed)
    log: list[str] = []
    while not position.is_over and len(log) < max_moves:
        moves = [str(m) for m in position.legal_moves]
        home = [m for m in moves if position.apply(m).score > position.score]
        deals = [m for m in moves if m.startswith("deal")]
        others = [m for m in moves if m not in home and m not in deals]
        if home and rng.random() < 0.9:
            move = rng.choice(home)
        elif others and (not deals or rng.random() < 0.7):
            move = rng.choice(others)
        else:
            move = rng.choice(deals or moves)
        position = position.apply(move)
        log.append(move)
    return log
