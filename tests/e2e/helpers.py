"""Helpers of the end-to-end tests."""

from __future__ import annotations

from devtools.servers import subprocess_json

_VERIFY = """
import json
from games.models import Game
from games.selectors.games import game_verify
games = Game.objects.select_related("deal")
if {pks!r}:
    games = games.filter(pk__in={pks!r})
print(json.dumps({{g.pk: game_verify(g) for g in games}}))
"""


def games_verified(env: dict[str, str], *games: int) -> dict[int, str | None]:
    """``games.selectors.games.game_verify`` of these games (of every game when none is
    named), run in a subprocess against the servers' database."""
    code = _VERIFY.format(pks=list(games))
    verdicts = subprocess_json("manage.py", "shell", "-c", code, env=env)
    return {int(k): v for k, v in verdicts.items()}
