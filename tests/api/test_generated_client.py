"""A Python client generated from /api/v1/schema/ plays the service from the first minute.

``openapi-python-client`` (a dev dependency) generates the client from the
schema the server serves, with no network (a proxy that goes nowhere is set, so
any attempt to download would fail). With it the test registers, gets a token
for the password, plays a practice game to a win along a line the solver finds,
reads the day's board, plays today's ranked daily to a win, and reads the board,
the player's record and, the next day, the replay. A schema that the generator
cannot use, or whose shapes or status codes differ from the answers, fails
here: the generated code parses every answer into the documented model, and an
undocumented status raises (``raise_on_unexpected_status``).

The requests go in-process to the WSGI application (httpx's WSGI transport)
with the server clock pinned to a fixed day.

Run alone: ``bash scripts/test.sh tests/api/test_generated_client.py``.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from devtools.accounts import PASSWORD
from games.engine import new_position
from games.engine.solver import Verdict, solve
from games.models import Deal
from patience_site.wsgi import application
from tests.daily_fixtures import FakeClock, day_where, morning

pytest_plugins = ["tests.daily_fixtures"]
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("isolated_boards")]

BASE = "http://testserver"
PACKAGE = "patience_client"
#: Solver budget for the deals played here (they are decided far below it).
NODES = 400_000


def winning_line(variant: str, seed: int) -> list[str]:
    result = solve(new_position(variant, seed=seed), max_nodes=NODES)
    assert result.verdict is Verdict.WON, (variant, seed, result.verdict)
    return list(result.line)


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[ModuleType]:
    """The client package generated from the served schema, imported."""
    transport = httpx.WSGITransport(app=application)
    with httpx.Client(transport=transport, base_url=BASE) as http:
        response = http.get("/api/v1/schema/", params={"format": "json"})
    assert response.status_code == 200, response.text
    (tmp_path / "schema.json").write_text(json.dumps(response.json()))
    # No post-processing hooks: the generated code is used as generated.
    (tmp_path / "config.json").write_text(
        json.dumps({"post_hooks": [], "package_name_override": PACKAGE})
    )
    nowhere = "http://127.0.0.1:9"  # offline: any download attempt fails
    env = {**os.environ, "HTTP_PROXY": nowhere, "HTTPS_PROXY": nowhere, "ALL_PROXY": nowhere}
    env.pop("NO_PROXY", None)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "openapi-python-client"), "generate"]
        + ["--path", "schema.json", "--config", "config.json", "--meta", "none"]
        + ["--output-path", PACKAGE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout + done.stderr, done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def op(name: str) -> ModuleType:
    """One operation's module of the generated client, e.g. ``games.games_create``."""
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def test_a_generated_client_registers_and_plays(
    generated: ModuleType, daily_clock: FakeClock, daily_secret: str
) -> None:
    pc = generated
    models = importlib.import_module(f"{PACKAGE}.models")
    bristol_key = models.VariantEnum.BRISTOL

    # A day whose Bristol daily the solver wins, at 08:00 UTC.
    today = day_where("bristol", lambda p: solve(p, max_nodes=NODES).verdict is Verdict.WON)
    daily_clock.set(morning(today))

    def anonymous() -> Any:
        return pc.Client(
            base_url=BASE,
            raise_on_unexpected_status=True,
            httpx_args={"transport": httpx.WSGITransport(app=application)},
        )

    # -- register (a session write: the CSRF cookie and header), then a token for a password
    browser_like = anonymous()
    csrf = op("accounts.auth_csrf_retrieve").sync(client=browser_like)
    browser_like.get_httpx_client().headers["X-CSRFToken"] = csrf.csrf_token
    registered = op("accounts.auth_register_create").sync_detailed(
        client=browser_like, body=models.RegisterInput(username="robot", password=PASSWORD)
    )
    assert registered.status_code == HTTPStatus.CREATED, registered.content
    assert registered.parsed.username == "robot"

    wrong = op("accounts.auth_token_create").sync_detailed(
        client=anonymous(), body=models.TokenLoginInput(username="robot", password="nope")
    )
    assert wrong.status_code == HTTPStatus.UNAUTHORIZED
    assert wrong.parsed.error.code == "authentication_failed"
    new = op("accounts.auth_token_create").sync(
        client=anonymous(),
        body=models.TokenLoginInput(username="robot", password=PASSWORD, name="generated"),
    )
    assert isinstance(new, models.NewToken) and new.name == "generated"
    client = pc.AuthenticatedClient(
        base_url=BASE,
        token=new.token,
        prefix="Token",
        raise_on_unexpected_status=True,
        httpx_args={"transport": httpx.WSGITransport(app=application)},
    )

    # -- a practice game, to a win along the solver's line
    game = op("games.games_create").sync(
        client=client, body=models.GameCreateInput(variant=bristol_key, seed=7)
    )
    assert isinstance(game, models.GameState) and game.status == models.StatusEnum.PLAYING
    line = winning_line("bristol", 7)
    for notation in line:
        assert notation in game.legal_moves
        game = op("games.games_moves_create").sync(
            game.id, client=client, body=models.MoveInput(move=notation, ply=game.ply)
        )
        assert isinstance(game, models.MoveResult) and not game.duplicate, game
    assert game.status == models.StatusEnum.WON and game.score == game.max_score == 52
    assert game.deal.seed == "7"  # revealed once the game is over
    log = op("games.games_moves_list").sync(game.id, client=client, limit=1000)
    assert [entry.move for entry in log.results] == line and log.next_ is None
    late = op("games.games_moves_create").sync_detailed(
        game.id, client=client, body=models.MoveInput(move="deal", ply=game.ply + 3)
    )
    assert late.status_code == HTTPStatus.CONFLICT and late.parsed.error.code == "game_finished"

    # -- the day's board, before anyone played
    overview = op("daily.daily_list").sync(client=client)
    bristol = next(d for d in overview if d.variant == "bristol")
    assert bristol.date == today and bristol.my_game is None and bristol.par is None
    board = op("leaderboards.daily_board_retrieve").sync(bristol_key, "today", client=client)
    assert board.total == 0 and board.me is None

    # -- today's daily: ranked, no hints, won along the solver's line
    started = op("daily.daily_play_create").sync_detailed(bristol_key, "today", client=client)
    assert started.status_code == HTTPStatus.CREATED
    ranked = started.parsed
    assert ranked.ranked and ranked.date == today and ranked.deal is None
    refused = op("games.games_hint_create").sync_detailed(ranked.id, client=client)
    assert refused.status_code == HTTPStatus.CONFLICT
    assert refused.parsed.error.code == "hint_not_allowed"
    seed = int(Deal.objects.get(kind="daily", variant="bristol", date=today).seed)
    for notation in winning_line("bristol", seed):
        ranked = op("games.games_moves_create").sync(
            ranked.id, client=client, body=models.MoveInput(move=notation, ply=ranked.ply)
        )
        assert isinstance(ranked, models.MoveResult), ranked
    assert ranked.status == models.StatusEnum.WON
    assert ranked.deal is None  # a daily's deal stays hidden until the day is over

    board = op("leaderboards.daily_board_retrieve").sync(bristol_key, "today", client=client)
    assert board.total == 1 and board.me.rank == 1 and board.me.player == "robot"
    assert board.results[0].won and board.results[0].moves == ranked.ply
    record = op("leaderboards.players_stats_retrieve").sync("robot", client=client)
    assert record.played == 1 and record.won == 1
    mine = next(d for d in op("daily.daily_list").sync(client=client) if d.variant == "bristol")
    assert mine.my_game.id == ranked.id and mine.my_game.rank == 1

    # -- the next day: seed, deck and par of yesterday's deal, and the replay of the result
    daily_clock.next_day()
    over = op("daily.daily_retrieve").sync(bristol_key, today.isoformat(), client=client)
    assert over.seed == str(seed) and len(over.deck) == 52
    replay = op("leaderboards.daily_results_replay_retrieve").sync(
        bristol_key, today.isoformat(), board.me.result_id, client=client, step=0
    )
    assert replay.won and replay.steps == ranked.ply and replay.step == 0
