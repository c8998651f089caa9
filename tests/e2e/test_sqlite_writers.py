"""The embedded default (SQLite) under several writers: they wait their turn, never
``database is locked`` (issue 30: two bots racing got 26-47 ``unavailable`` frames a race).

Two daphne processes share one SQLite file, as ``serve.sh`` and the background
jobs it starts do; a player on each plays over its game socket as fast as answered.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import websockets

from devtools.servers import Daphne, migrate, server_env, subprocess_json

pytestmark = pytest.mark.e2e

MOVES = 60

_PLAYERS = """
import json, django
django.setup()
from django.contrib.auth import get_user_model
from accounts.services import token_create
from games.services.games import practice_game_start
out = []
for name in ("ann", "bob"):
    user = get_user_model().objects.create_user(username=name, password=None)
    game = practice_game_start(user=user, variant="bristol", seed=len(out) + 1)
    out.append([token_create(user=user, name="t")[1], game.pk])
print(json.dumps(out))
"""


async def play(url: str, token: str, game_id: int, codes: Counter[str]) -> int:
    """Moves over the game socket until ``MOVES`` were stored or the game ended; the count."""
    headers = {"Authorization": f"Token {token}"}
    async with websockets.connect(
        f"{url.replace('http', 'ws')}/ws/v1/games/{game_id}/", additional_headers=headers
    ) as socket:
        state = json.loads(await socket.recv())["state"]
        stored = 0
        while stored < MOVES and state["status"] == "playing" and state["legal_moves"]:
            move = state["legal_moves"][stored % len(state["legal_moves"])]
            await socket.send(json.dumps({"type": "move", "move": move, "ply": state["ply"]}))
            answer = json.loads(await socket.recv())
            if answer["type"] == "state":
                state, stored = answer["state"], stored + 1
            else:
                codes[answer["error"]["code"]] += 1
                await socket.send(json.dumps({"type": "resync"}))
                state = json.loads(await socket.recv())["state"]
        return stored


def test_two_server_processes_on_one_sqlite_file_never_refuse_a_move(
    tmp_path: Path, daphne: Callable[..., Daphne]
) -> None:
    env = server_env(database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}", redis_url=None)
    migrate(env)
    players = subprocess_json("-c", _PLAYERS, env=env)
    servers = [daphne(env).start(), daphne(env).start()]
    codes: Counter[str] = Counter()

    async def both() -> list[int]:
        return await asyncio.gather(
            *(
                play(server.url, token, game, codes)
                for server, (token, game) in zip(servers, players, strict=True)
            )
        )

    stored = asyncio.run(both())
    assert codes == Counter(), codes
    assert stored == [MOVES, MOVES] or all(n > 20 for n in stored), stored
