"""examples/bot.py plays deals by itself against the API (in-process, through httpx)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model
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


LOGIN = {"username": "robot", "password": "correct-horse-battery-staple-42"}


@pytest.fixture
def http(bot: Any) -> Iterator[httpx.Client]:
    """A client of the in-process server, signed in as the bot signs in on a fresh server:
    there is no account yet, so ``sign_in`` registers one."""
    transport = httpx.WSGITransport(app=application)
    with httpx.Client(transport=transport, base_url="http://testserver") as c:
        assert not get_user_model().objects.exists()  # an empty database, no fixture account
        c.headers["Authorization"] = f"Token {bot.sign_in(c, **LOGIN)}"
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


@pytest.mark.django_db(transaction=True)
def test_the_bot_signs_in_again_with_a_new_token_and_no_second_account(
    bot: Any, http: Client
) -> None:
    transport = httpx.WSGITransport(app=application)
    with httpx.Client(transport=transport, base_url="http://testserver") as again:
        key = bot.sign_in(again, **LOGIN)
    assert key and key != http.headers["Authorization"].removeprefix("Token ")
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["robot"]


@pytest.mark.django_db(transaction=True)
def test_the_bot_stops_on_a_wrong_password(bot: Any, http: Client) -> None:
    transport = httpx.WSGITransport(app=application)
    with (
        httpx.Client(transport=transport, base_url="http://testserver") as other,
        pytest.raises(bot.ApiError) as refused,
    ):
        bot.sign_in(other, "robot", "not-the-password-of-robot")
    assert refused.value.status == 400 and refused.value.code == "validation_error"


@pytest.mark.parametrize("status", [429, 503])
def test_the_bot_waits_as_retry_after_says_and_sends_again(
    bot: Any, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    answers = iter(
        [
            httpx.Response(status, headers={"Retry-After": "7"}, json={"error": {"code": "x"}}),
            httpx.Response(status, headers={"Retry-After": "2"}, json={"error": {"code": "x"}}),
            httpx.Response(200, json={"ok": True}),
        ]
    )
    sent: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        return next(answers)

    slept: list[float] = []
    monkeypatch.setattr(bot.time, "sleep", slept.append)
    with httpx.Client(transport=httpx.MockTransport(answer), base_url="http://x") as c:
        assert bot.call(c, "GET", "games/") == {"ok": True}
    assert slept == [7.0, 2.0]
    assert sent == ["/api/v1/games/"] * 3
