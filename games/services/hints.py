"""Hints: the solver's next move of a winning line in a practice game."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from games import hints
from games.engine import Status
from games.errors import GameFinished, HintNotAllowed
from games.models import Game
from games.selectors.games import game_for_player, game_position, hints_allowed


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
