"""The floor of a move: the product's servers doing the least a move can do.

Run by ``bench/floor.py`` next to the product, on the product's database and
settings (``bench.floor_settings``: no middleware). Over WebSocket it is daphne
and a Channels ``AsyncWebsocketConsumer`` (with the product's channel layer) that
reads the JSON frame, makes one ``database_sync_to_async`` hop (connections
tidied as the product's consumers tidy them) running the product's one guarded
statement from the ply the process holds, and sends a JSON reply the size of a
move's answer (JSON written by orjson, as the product's). Over REST it is the same
work in a plain Django view under gunicorn's gthread worker: no DRF, no
authentication, no throttle, no middleware. What the product spends above this
is its own code; what this spends is the stack's.
"""

from __future__ import annotations

import json
import os
from typing import Any

import orjson
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.floor_settings")
django_asgi_app = get_asgi_application()

from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpRequest, HttpResponse  # noqa: E402
from django.urls import path  # noqa: E402
from django.utils import timezone  # noqa: E402

from api.consumers.base import in_worker  # noqa: E402
from games.engine import finish_line, new_position, safe_moves  # noqa: E402
from games.engine.record import position_bytes  # noqa: E402
from games.models import Game  # noqa: E402
from games.play import store  # noqa: E402

_START = new_position("bristol", seed=1)
#: What a move stores: a real position (the product stores the one after the move).
POSITION = position_bytes(_START)
#: What a move answers: a real game state's fields, as the product's state renders them.
STATE: dict[str, Any] = {
    "id": 0,
    "variant": "bristol",
    "kind": "practice",
    "date": None,
    "status": "playing",
    "score": 0,
    "max_score": 52,
    "ply": 0,
    "moves_on_board": 0,
    "ranked": False,
    "assisted": False,
    "started_at": "2026-01-01T00:00:00.000000Z",
    "finished_at": None,
    "elapsed_ms": 0,
    "position": _START.public_json(),
    "legal_moves": [str(m) for m in _START.legal_moves],
    "safe_moves": [str(m) for m in safe_moves(_START)],
    "finish": [str(m) for m in finish_line(_START)],
    "can_undo": True,
    "deal": None,
}

#: Each game this process has seen (read once per game: held, as the product).
_games: dict[int, Game] = {}


def floor_move(game_id: int, ply: int, move: str) -> tuple[int, str]:
    """The product's guarded statement from ``ply``; (HTTP status, JSON reply)."""
    game = _games.get(game_id)
    if game is None:
        game = _games[game_id] = Game.objects.select_related("deal").get(pk=game_id)
    # not hinted, no day (not a ranked daily) and no race window: the statement's bounds
    guard = store.Guard(game_id, game.player_id, ply, assisted=False)
    change = store.Change(ply + 1, 0, 0, "playing", None, POSITION)
    moved = store.write(guard, game, change, store.Entry(move, timezone.now()))
    if moved is None:
        return 409, orjson.dumps(
            {"type": "error", "ply": ply, "error": {"code": "stale_ply"}}
        ).decode()
    _games[game_id] = moved
    answer = {"type": "state", "cause": "move", "ply": ply + 1, "duplicate": False}
    return 200, orjson.dumps({**answer, "state": {**STATE, "id": game_id, "ply": ply + 1}}).decode()


class FloorConsumer(AsyncWebsocketConsumer):
    """One game's socket: each frame is one move, answered."""

    async def connect(self) -> None:
        self.game_id = int(self.scope["url_route"]["kwargs"]["game_id"])
        await self.accept()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        data = json.loads(text_data or "{}")
        _, text = await in_worker(floor_move, self.game_id, data["ply"], data["move"])
        await self.send(text_data=text)


def move_view(request: HttpRequest, game_id: int) -> HttpResponse:
    """One move over HTTP (POST ``{"move", "ply"}``)."""
    data = json.loads(request.body)
    status, text = floor_move(game_id, data["ply"], data["move"])
    return HttpResponse(text, status=status, content_type="application/json")


def health(request: HttpRequest) -> HttpResponse:
    """What ``devtools.servers.wait_until_up`` asks for."""
    return HttpResponse("{}", content_type="application/json")


urlpatterns = [
    path("floor/<int:game_id>/moves/", move_view),
    path("api/v1/health/", health),
]

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # A consumer in Django's path(), as Channels documents (see api/routing.py).
        "websocket": URLRouter(
            [path("ws/floor/<int:game_id>/", FloorConsumer.as_asgi())]  # type: ignore[arg-type,list-item]
        ),
    }
)
wsgi_application = get_wsgi_application()
