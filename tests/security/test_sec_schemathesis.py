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

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.urls import URLPattern, get_resolver
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

from patience_site.wsgi import application
from tests.security.world import OPERATIONS, SCHEMA, World

pytest_plugins = ["tests.daily_fixtures"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("no_rate_limits", "raw_wsgi", "isolated_boards"),
]

#: Examples per operation and mode (token pass); the session pass draws fewer.
EXAMPLES = {GenerationMode.POSITIVE: 30, GenerationMode.NEGATIVE: 15}
SESSION_EXAMPLES = {GenerationMode.POSITIVE: 10, GenerationMode.NEGATIVE: 5}


@schemathesis.check
def retry_hint(ctx: Any, response: Any, case: Any) -> bool | None:
    """An answer that invites a retry (429, 503) says when: ``Retry-After`` and the same
    seconds in ``error.details.retry_after``."""
    if response.status_code not in (429, 503):
        return None
    headers = {name.lower(): values for name, values in response.headers.items()}
    header = headers.get("retry-after", [None])[0]
    details = response.json().get("error", {}).get("details", {})
    if header is None or str(details.get("retry_after")) != header:
        raise Failure(
            operation=case.operation.label,
            title="Retry hint missing",
            message=f"Retry-After {header!r}, details.retry_after {details.get('retry_after')!r}",
        )
    return True


CHECKS = [
    not_a_server_error,
    retry_hint,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


#: Totals over the module, printed at its end.
TOTALS: Counter = Counter()


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


def test_every_api_route_is_an_operation_of_the_schema() -> None:
    """The fuzzers walk the schema's operations: a route missing from the schema would be
    walked by neither this module nor the Redis-down walk."""
    paths = {label.split(" ", 1)[1] for label in OPERATIONS}
    routes = set()
    for pattern in get_resolver("api.urls").url_patterns:
        view = getattr(pattern.callback, "cls", None)
        if not isinstance(pattern, URLPattern) or getattr(view, "schema", True) is None:
            continue  # the catch-all
        route = re.sub(r"<\w+:(\w+)>", r"{\1}", str(pattern.pattern))
        routes.add(f"/api/v1/{route}")
    served_documents = {"/api/v1/schema/", "/api/v1/docs/", "/api/v1/redoc/", "/api/v1/asyncapi/"}
    assert routes - served_documents <= paths, routes - served_documents - paths
    assert len(OPERATIONS) >= 27


@pytest.fixture(scope="module", autouse=True)
def _print_totals() -> Iterator[None]:
    """After the module: the totals, for the write-up (shown with ``-s``)."""
    yield
    if TOTALS["operations"]:
        print(
            f"\nschemathesis: {TOTALS['operations']} operation runs "
            f"({len(OPERATIONS)} operations x 2 clients), {TOTALS['examples']} examples, "
            f"{TOTALS['examples'] * len(CHECKS)} checks ({len(CHECKS)} per answer), "
            f"{TOTALS['failures']} failures; answers by status: "
            + ", ".join(f"{k[7:]}: {v}" for k, v in sorted(TOTALS.items()) if k[:6] == "status")
        )
