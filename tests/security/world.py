"""Real objects for the fuzzers' path parameters, and the schema they walk.

Shared by the schemathesis run (``test_sec_schemathesis``) and the walk with Redis
down (``test_sec_redis_down``).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from unittest import mock

import schemathesis
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client, override_settings
from drf_spectacular.generators import SchemaGenerator

from accounts import services as account_services
from accounts.models import ApiToken
from api import shapes
from core import clock
from devtools.accounts import PASSWORD
from games.engine import VARIANTS
from games.models import Game, Race
from games.play import finish
from games.services import dailies as daily_services
from games.services import games as game_services
from games.services import race_pool
from games.services import races as race_services
from tests.security.helpers import schema_operations

SEED = 1
MISSING = 10**9


def closed(node: Any) -> Any:
    """The schema with every object that lists its properties closed to others.

    OpenAPI lets an object carry properties its schema does not name, so an answer
    with an undocumented field would pass; closed, every field must be documented.
    """
    if isinstance(node, list):
        return [closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: closed(value) for key, value in node.items()}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def _schema() -> dict[str, Any]:
    raw = SchemaGenerator().get_schema(request=None, public=True)
    return closed(json.loads(json.dumps(raw, default=str)))


SCHEMA = schemathesis.openapi.from_dict(_schema())
OPERATIONS = sorted(op.label for op in schema_operations(SCHEMA))


class World:
    """Real objects for path parameters, kept usable between cases."""

    def __init__(self) -> None:
        users = get_user_model().objects
        self.user = users.create_user(username="fuzzer", password=PASSWORD)
        self.rival = users.create_user(username="rival", password=PASSWORD)
        today = clock.today()
        one_day = timedelta(days=1)
        yesterday = today - one_day
        daily_services.dailies_create(first=yesterday, days=2)
        self.live = game_services.practice_game_start(user=self.user, variant="bristol", seed=SEED)
        finished = game_services.practice_game_start(user=self.user, variant="bristol", seed=2)
        finish.resign(game_id=finished.pk, user=self.user)
        rivals = game_services.practice_game_start(user=self.rival, variant="bristol", seed=3)
        # A result on yesterday's board: the rival's ranked game of that day, resigned then.
        deal = daily_services.daily_create("bristol", yesterday)
        then = clock.now() - timedelta(days=1)
        with (
            mock.patch.object(clock, "now", lambda: then),
            mock.patch.object(clock, "shared_now", lambda: then),
        ):
            ranked = game_services.game_create(user=self.rival, deal=deal, ranked=True)
            finish.resign(game_id=ranked.pk, user=self.rival)
        self.result_id = ranked.result.pk
        over, waiting = self._races()
        self.token, self.key = account_services.token_create(user=self.user, name="fuzz")
        self.spare, _ = account_services.token_create(user=self.user, name="spare")
        rival_token, _ = account_services.token_create(user=self.rival, name="theirs")
        self.values: dict[str, list[Any]] = {
            "game_id": [self.live.pk, finished.pk, rivals.pk, MISSING],
            "token_id": [self.spare.pk, rival_token.pk, MISSING],
            # Real values more often than not, so that the views' logic is reached.
            "variant": ["bristol", "bristol", *sorted(VARIANTS), "klondike"],
            "day": [d.isoformat() for d in (yesterday, today, yesterday, today, today + one_day)],
            "result_id": [self.result_id, self.result_id, MISSING],
            "username": ["fuzzer", "rival", "nobody"],
            "code": [over.code, waiting.code, over.code, "nosuchrace"],
            "family": ["bristol", "gallery", "chess"],
        }
        self.session: dict[str, str] = {}

    def _races(self) -> tuple[Race, Race]:
        """A race the fuzzer and the rival raced to its time limit, and the fuzzer's private
        race that the rival joined, waiting to be started."""
        # Every variant has deals ready: an empty pool's 503 would count as a server error.
        with override_settings(RACE_POOL_SIZE=3, RACE_SOLVER_NODES=0):
            race_pool.race_pool_fill()
        over = race_services.race_create(user=self.rival, variant="bristol")
        race_services.race_join(user=self.user, code=over.code)
        over = race_services.race_start(user=self.rival, code=over.code)
        with mock.patch.object(clock, "shared_now", lambda: over.ends_at):
            race_services.races_tick()
        waiting = race_services.race_create(user=self.user, variant="bristol")
        return over, race_services.race_join(user=self.rival, code=waiting.code)

    def chosen(self, names: list[str], index: int) -> dict[str, Any]:
        """Known path parameters: ``index`` picks a combination (deterministically)."""
        out = {}
        for name in names:
            values = self.values[name]
            out[name] = values[index % len(values)]
            index //= len(values)
        return out

    def steer(self, label: str, case: Any, pick: int) -> None:
        """Now and then a request that succeeds: a legal move, an undo, the right password."""
        if pick % 3 or case.path_parameters.get("game_id", self.live.pk) != self.live.pk:
            return
        game = Game.objects.select_related("deal").get(pk=self.live.pk)
        if label == "POST /api/v1/games/{game_id}/moves/":
            legal = shapes.game_state(game)["legal_moves"]
            case.body = {"move": legal[pick % len(legal)], "ply": game.ply}
        elif label == "POST /api/v1/games/{game_id}/undo/":
            case.body = {"ply": game.ply}
        elif label in ("POST /api/v1/auth/login/", "POST /api/v1/auth/token/"):
            case.body = {"username": "fuzzer", "password": PASSWORD}

    def refresh(self) -> None:
        """Undo what earlier cases did to the objects the next case relies on."""
        if not ApiToken.objects.filter(pk=self.token.pk, revoked_at__isnull=True).exists():
            self.token, self.key = account_services.token_create(user=self.user, name="fuzz")
        ApiToken.objects.filter(pk=self.spare.pk).update(revoked_at=None)
        live = Game.objects.get(pk=self.live.pk)
        if live.status != "playing" or live.ply > 30:
            fresh = game_services.practice_game_start(user=self.user, variant="bristol", seed=SEED)
            fields: tuple[str, ...] = ("status", "ply", "score", "undo_floor", "position")
            fields += ("log", "moved_at", "finished_at")
            Game.objects.filter(pk=live.pk).update(**{f: getattr(fresh, f) for f in fields})
            fresh.delete()
        key = self.session.get("sessionid")
        if key is None or not Session.objects.filter(session_key=key).exists():
            client = Client()
            client.force_login(self.user)
            self.session = {"sessionid": client.cookies["sessionid"].value}

    def credentials(self, auth: str) -> dict[str, Any]:
        """A personal token, or the session cookie; both with a CSRF cookie and header
        (writes before a login, such as register, check CSRF whatever the credentials)."""
        csrf = "c" * 32  # an unmasked CSRF secret: cookie and header must match
        if auth == "token":
            return {
                "headers": {"Authorization": f"Token {self.key}", "X-CSRFToken": csrf},
                "cookies": {"csrftoken": csrf},
            }
        return {"headers": {"X-CSRFToken": csrf}, "cookies": {**self.session, "csrftoken": csrf}}
