"""Hints: the solver's next move of a winning line in a practice game."""

from __future__ import annotations

from django.contrib.auth.models import User

from core.errors import GameFinished, HintNotAllowed
from games import hints
from games.engine import Status
from games.models import Game
from games.selectors.games import game_for_player, game_position, hints_allowed
from games.selectors.hints import Hint, HintPending, hint_of


def game_hint(*, game_id: int, user: User) -> Hint | HintPending:
    """Ask for the next move of a winning line in a practice game; it becomes assisted.

    The solver knows the stock, so a hint carries hidden information: ranked
    games, and every game of a daily whose day is not over, get none, and a
    practice game a hint was asked in is marked assisted. The answer comes from the
    cache, or a worker process solves it (``games.hints``: its limits per player and per
    server) while no thread waits: the hint is then pending, and its answer is read by
    ``game_hint_result`` (``games.selectors.hints``). A server process takes only so
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
    found = hints.hint_ask(game_position(game), player=user.pk)
    Game.objects.filter(pk=game.pk, assisted=False).update(assisted=True)
    return hint_of(game.ply, found)
