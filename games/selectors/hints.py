"""Reads of hints: what a hint asked for a game's position came to (never a write)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from core.errors import NotFound, StalePly
from games import hints
from games.selectors.games import game_for_player, game_position


@dataclass(frozen=True)
class Hint:
    """A hint at ``ply``: the solver's verdict and, if winnable, the next move of a win."""

    ply: int
    verdict: str
    move: str | None
    nodes: int


@dataclass(frozen=True)
class HintPending:
    """A hint at ``ply`` still being solved: ask again after ``retry_after`` seconds (REST
    polls ``game_hint_result``; a socket awaits ``solve`` when it runs in its process)."""

    ply: int
    retry_after: int = 1
    solve: hints.Pending | None = None


def hint_of(ply: int, found: hints.Answer | hints.Pending) -> Hint | HintPending:
    """A hint, or the hint still being solved, at ``ply``."""
    if isinstance(found, hints.Pending):
        return HintPending(ply=ply, solve=found)
    return Hint(ply=ply, verdict=found.verdict, move=found.move, nodes=found.nodes)


def game_hint_result(*, game_id: int, user: User, ply: int | None = None) -> Hint | HintPending:
    """The hint asked at the game's current ply (``game_hint``), once solved.

    Raises ``StalePly`` when the game has moved on from ``ply`` (that hint is moot),
    ``NotFound`` when no hint was asked at this position (or it was long ago), and the
    solve's own errors (``hint_timeout``, ``hint_unavailable``).
    """
    game = game_for_player(game_id=game_id, user=user)
    if ply is not None and ply != game.ply:
        raise StalePly(f"the game is at ply {game.ply}, not {ply}", details={"ply": game.ply})
    found = hints.hint_result(game_position(game))
    if found is None:
        raise NotFound(f"no hint was asked at ply {game.ply} of game {game_id}: ask for one")
    return hint_of(game.ply, found)
