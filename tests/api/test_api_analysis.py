"""GET /api/v1/games/{id}/analysis/ and a day's analyses: who may see which game's
analysis when, 202 while it waits, 200 once done, and one analysis per game."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from games.models import Analysis
from games.services.analysis import analyses_work
from tests.analysis_fixtures import LOST_GAME, finished_practice_game
from tests.api.test_api_races import a_race_of_two, error_of, game_of
from tests.daily_fixtures import DAY, daily, finished_result
from tests.race_fixtures import at

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.daily_fixtures"]


def url(game_id: int) -> str:
    return f"/api/v1/games/{game_id}/analysis/"


@pytest.fixture(autouse=True)
def analysis_jobs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The analysis job a request would start: counted, run by the test itself."""
    from core import jobs

    started: list[int] = []
    monkeypatch.setattr(jobs, "analysis_job_start", lambda: started.append(1))
    return started


def test_a_finished_practice_game_is_queued_once_then_analysed(
    api: Any, user: Any, django_capture_on_commit_callbacks: Any, analysis_jobs: list[int]
) -> None:
    game = finished_practice_game(user, *LOST_GAME)
    with django_capture_on_commit_callbacks(execute=True):
        first = api.get(url(game.pk))
    assert first.status_code == 202 and first["Retry-After"] == "3"
    assert first.json() == {"game_id": game.pk, "state": "queued", "analysis": None}
    assert api.get(url(game.pk)).status_code == 202
    assert Analysis.objects.filter(game=game).count() == 1  # never queued twice
    assert analysis_jobs  # the worker was started
    assert analyses_work(idle_seconds=0) == 1
    done = api.get(url(game.pk))
    assert done.status_code == 200, done.content
    body = done.json()["analysis"]
    assert body["summary"] == "fatal"
    k = body["fatal"]["move"]
    assert body["verdicts"][k - 1 : k + 1] == ["won", "lost"]
    assert body["fatal"]["notation"] == body["moves"][k - 1]
    line = body["winning_line"]
    assert line["start"] == k - 1 and len(line["positions"]) == len(line["moves"]) + 1
    assert "s" not in line["positions"][0]["piles"]  # public positions: the stock counted
    assert body["played"] == len(body["moves"]) and body["par"] is None
    assert analyses_work(idle_seconds=0) == 0  # done once


def test_unknown_unfinished_and_other_players_games_are_refused(
    api: Any, user: Any, other_user: Any, token_client: Any
) -> None:
    from games.services.games import practice_game_start

    assert error_of(api.get(url(999_999)), 404)["code"] == "not_found"
    playing = practice_game_start(user=user, variant="bristol", seed=1)
    assert error_of(api.get(url(playing.pk)), 409)["code"] == "game_not_finished"
    mine = finished_practice_game(user, *LOST_GAME)
    other = token_client(other_user)
    assert error_of(other.get(url(mine.pk)), 404)["code"] == "not_found"
    theirs = practice_game_start(user=other_user, variant="bristol", seed=1)
    assert error_of(api.get(url(theirs.pk)), 404)["code"] == "not_found"
    assert not Analysis.objects.exists()  # a refusal changes nothing


def test_a_daily_game_waits_for_the_end_of_its_day(
    daily_clock: Any, api: Any, user: Any, client: Any, settings: Any
) -> None:
    deal = daily("bristol", DAY)
    result = finished_result(deal, user)
    game_id = result.game_id
    assert error_of(api.get(url(game_id)), 409)["code"] == "day_not_over"
    assert error_of(client.get(url(game_id)), 409)["code"] == "day_not_over"
    day_url = f"/api/v1/daily/bristol/{DAY.isoformat()}/analysis/"
    assert error_of(client.get(day_url), 409)["code"] == "day_not_over"
    daily_clock.next_day()
    assert client.get(url(game_id)).status_code == 202  # anyone: it is on the board
    summary = client.get(day_url).json()
    assert (summary["analysed"], summary["pending"]) == (0, 1)
    analyses_work(idle_seconds=0)
    summary = client.get(day_url).json()
    assert (summary["analysed"], summary["pending"]) == (1, 0)
    # The game was entered lost at its start: never winnable, or unknown, never guessed.
    report = client.get(url(game_id)).json()["analysis"]
    assert report["summary"] in {"never_winnable", "still_winnable", "unknown"}
    assert summary["after_move"][0] == {
        "won": report["verdicts"][0] == "won",
        "lost": report["verdicts"][0] == "lost",
        "unknown": report["verdicts"][0] == "unknown",
    }


def test_a_race_game_waits_for_the_end_of_its_race(
    settings: Any,
    token_client: Any,
    make_user: Any,
    client: Any,
    django_capture_on_commit_callbacks: Any,
    every_race_rated: Any,
) -> None:
    clients = [token_client(make_user(name)) for name in ("ann", "bob")]
    race = a_race_of_two(settings, clients)
    with at(datetime.fromisoformat(race["starts_at"]) + timedelta(seconds=1)):
        games = [game_of(c, race)["id"] for c in clients]
        assert error_of(clients[0].get(url(games[0])), 409)["code"] == "game_not_finished"
        assert error_of(client.get(url(games[0])), 409)["code"] == "race_not_finished"
        for c, game_id in zip(clients, games, strict=True):
            with django_capture_on_commit_callbacks(execute=True):
                assert c.post(f"/api/v1/games/{game_id}/resign/").status_code == 200
        assert client.get(url(games[1])).status_code == 202
