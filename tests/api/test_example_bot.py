"""examples/bot.py plays deals by itself against the API (in-process, through httpx)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from httpx import Client

from games.models import Game
from patience_site.wsgi import application
from tests.daily_fixtures import FakeClock, morning

pytest_plugins = ["tests.daily_fixtures"]


def load_bot(repo_root: Any) -> Any:
    spec = importlib.util.spec_from_file_location("bot", repo_root / "examples" / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def bot(repo_root: Any) -> Any:
    return load_bot(repo_root)


@pytest.fixture
def http(user: Any) -> Iterator[httpx.Client]:
    from accounts.services import token_create

    _, key = token_create(user=user, name="bot")
    transport = httpx.WSGITransport(app=application)
    headers = {"Authorization": f"Token {key}"}
    with httpx.Client(transport=transport, base_url="http://testserver", headers=headers) as c:
        yield c


# The bot's games commit for real (results, boards), as in production.
@pytest.mark.django_db(transaction=True)
def test_the_bot_plays_a_practice_deal_to_its_end(
    bot: Any, http: Client, assert_consistent: Callable[[Any], None]
) -> None:
    game = bot.play(http, bot.start_practice(http, "picture-gallery", seed=11))
    assert game["status"] in ("won", "lost", "resigned")
    assert 0 < game["ply"] <= bot.BUDGET and game["deal"] is not None
    assert game["score"] > 0  # it sent cards home
    stored = Game.objects.get(pk=game["id"])
    assert stored.status == game["status"] and not stored.assisted
    assert_consistent(stored)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("isolated_boards")
def test_the_bot_plays_todays_daily_to_the_board(
    bot: Any, http: Client, daily_clock: FakeClock, daily_secret: str
) -> None:
    daily_clock.set(morning(daily_clock.t.date()))
    game = bot.play(http, bot.start_daily(http, "bristol"))
    assert game["ranked"] and game["status"] in ("won", "lost", "resigned")
    board = http.get("/api/v1/daily/bristol/today/board/").json()
    assert board["total"] == 1 and board["me"]["moves"] == game["ply"]
    assert board["me"]["cards_home"] == game["score"]


def test_the_command_line_needs_a_token(
    bot: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("PATIENCE_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exc:
        bot.main(["--variant", "bristol"])
    assert exc.value.code == 2
    assert "PATIENCE_TOKEN" in capsys.readouterr().err
