"""schemathesis over every operation of the OpenAPI schema, in-process through the WSGI app.

For each operation, Hypothesis (derandomized: the same cases on every run) draws
schema-valid requests (positive) and schema-violating ones (negative), sent
with a personal token and, in a second pass, with a session cookie and its
CSRF token. Path parameters are either generated or taken from a world of real
objects (my game in progress, a finished one, another player's game, today's
and yesterday's dailies, a result on yesterday's board, my tokens and
another's, a finished race and my private race waiting to start), so the fuzzer
reaches the views' logic and not only their 404s.

Every answer must be a documented status, never a 5xx, with a body that
matches the documented schema (errors: the one envelope), the documented
content type and headers. The schema's objects are closed for this run
(``closed``), so a field the schema does not name fails too. Failures are
collected per operation and reported together, a few lines each (the check,
where in the body, the request as curl, the answer); the totals are printed
(``-s``) for the write-up.

Run alone: ``bash scripts/test.sh tests/security/test_sec_schemathesis.py -s``
(``-k 'auth/token'`` for one operation).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client, override_settings
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts import services as account_services
from accounts.models import ApiToken
from devtools.accounts import PASSWORD
from games import clock, shapes
from games.engine import VARIANTS
from games.models import Game, Move, Race
from games.services import dailies as daily_services
from games.services import games as game_services
from games.services import races as race_services
from patience_site.wsgi import application
from tests.security.helpers import schema_operations

pytest_plugins = ["tests.daily_fixtures"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("no_rate_limits", "raw_wsgi", "isolated_boards"),
]

#: Examples per operation and mode (token pass); the session pass draws fewer.
EXAMPLES = {GenerationMode.POSITIVE: 30, GenerationMode.NEGATIVE: 15}
SESSION_EXAMPLES = {GenerationMode.POSITIVE: 10, GenerationMode.NEGATIVE: 5}
SEED = 1
MISSING = 10**9

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


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

#: Totals over the module, printed at its end.
TOTALS: Counter = Counter()


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
        game_services.game_resign(game_id=finished.pk, user=self.user)
        rivals = game_services.practice_game_start(user=self.rival, variant="bristol", seed=3)
        # A result on yesterday's board: the rival's ranked game of that day, resigned then.
        deal = daily_services.daily_create("bristol", yesterday)
        then = clock.now() - timedelta(days=1)
        with (
            mock.patch.object(clock, "now", lambda: then),
            mock.patch.object(clock, "shared_now", lambda: then),
        ):
            ranked = game_services.game_create(user=self.rival, deal=deal, ranked=True)
            game_services.game_resign(game_id=ranked.pk, user=self.rival)
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
            race_services.race_pool_fill()
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
            Move.objects.filter(game=live).delete()
            fields = ("status", "ply", "score", "undo_floor", "position", "finished_at")
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


def readable(failure: Any, case: Any, response: Any) -> str:
    """One failure in a few lines: what is wrong, where, the request and the answer."""
    lines = []
    message = failure.message.strip().splitlines()
    if getattr(failure, "instance_path", None) is not None:  # a body that breaks its schema
        where = "/".join(str(p) for p in failure.instance_path) or "(the whole body)"
        lines.append(f"  at {where}: {message[0] if message else ''}")
    else:
        lines += [f"  {line}" for line in message[:6]]
    lines.append(f"  request:  {case.as_curl_command()}")
    lines.append(f"  answered: {response.status_code} {response.text[:300]}")
    return "\n".join(lines)


class Tally:
    """What one operation's run saw."""

    def __init__(self) -> None:
        self.runs = 0
        self.statuses: Counter = Counter()
        self.failures: Counter = Counter()
        self.samples: dict[tuple, str] = {}

    def record(self, mode: GenerationMode, case: Any, response: Any) -> None:
        self.runs += 1
        self.statuses[response.status_code] += 1
        try:
            case.validate_response(response, checks=CHECKS)
        except (Failure, FailureGroup) as exc:
            for failure in exc.exceptions if isinstance(exc, FailureGroup) else [exc]:
                key = (mode.value, failure.title, response.status_code)
                self.failures[key] += 1
                self.samples.setdefault(key, readable(failure, case, response))


def run_mode(
    op: Any, mode: GenerationMode, count: int, world: World, auth: str, tally: Tally
) -> None:
    names = [p.name for p in op.path_parameters]

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=op.as_strategy(mode), pick=st.integers(min_value=-1, max_value=10**6))
    def run(case: Any, pick: int) -> None:
        world.refresh()
        if names and pick >= 0:  # most cases: real objects; the rest as generated
            case.path_parameters = {**(case.path_parameters or {}), **world.chosen(names, pick)}
        if mode is GenerationMode.POSITIVE and pick >= 0:
            world.steer(op.label, case, pick)
        response = case.call(app=application, **world.credentials(auth))
        tally.record(mode, case, response)

    try:
        run()
    except Unsatisfiable:
        # Nothing of this operation can violate the schema (no body, no typed parameter).
        assert mode is GenerationMode.NEGATIVE


def fuzz(label: str, auth: str, examples: dict[GenerationMode, int]) -> None:
    op = SCHEMA.find_operation_by_label(label)
    assert op is not None, label
    world = World()
    tally = Tally()
    for mode, count in examples.items():
        run_mode(op, mode, count, world, auth, tally)
    TOTALS["operations"] += 1
    TOTALS["examples"] += tally.runs
    TOTALS["failures"] += sum(tally.failures.values())
    assert tally.runs > 0
    assert not tally.failures, f"{label} ({auth}): answers that break the schema\n\n" + (
        "\n\n".join(
            f"{mode} case, {title}, status {status}: x{tally.failures[mode, title, status]}\n"
            f"{sample}"
            for (mode, title, status), sample in tally.samples.items()
        )
    )
    # The fuzzer got past authentication and the router somewhere.
    TOTALS.update({f"status {s}": n for s, n in tally.statuses.items()})
    assert any(s < 400 or s in (400, 409) for s in tally.statuses), tally.statuses


@pytest.mark.parametrize("label", OPERATIONS)
def test_token_client_gets_only_documented_answers(label: str) -> None:
    fuzz(label, "token", EXAMPLES)


@pytest.mark.parametrize("label", OPERATIONS)
def test_session_client_gets_only_documented_answers(label: str) -> None:
    fuzz(label, "session", SESSION_EXAMPLES)


def test_every_operation_was_fuzzed() -> None:
    """Runs last in this module: the totals, for the write-up (shown with ``-s``)."""
    assert len(OPERATIONS) >= 27
    if TOTALS["operations"]:
        print(
            f"\nschemathesis: {TOTALS['operations']} operation runs "
            f"({len(OPERATIONS)} operations x 2 clients), {TOTALS['examples']} examples, "
            f"{TOTALS['examples'] * len(CHECKS)} checks ({len(CHECKS)} per answer), "
            f"{TOTALS['failures']} failures; answers by status: "
            + ", ".join(f"{k[7:]}: {v}" for k, v in sorted(TOTALS.items()) if k[:6] == "status")
        )
