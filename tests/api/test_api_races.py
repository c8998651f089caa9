"""Races over REST: lobby, quick race, private races, moves in a race, standings, replays,
rematch, ratings on the boards and the player's page; and the error envelope."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from pytest_django import DjangoCaptureOnCommitCallbacks, Settings

from games.models import Race
from games.services import races as race_services
from tests.race_fixtures import at, pool, quiet_moves

pytestmark = pytest.mark.django_db

RACES = "/api/v1/races/"
RACE_KEYS = {
    "code",
    "variant",
    "kind",
    "status",
    "creator",
    "max_players",
    "min_players",
    "time_limit_seconds",
    "starts_at",
    "ends_at",
    "server_time",
    "rematch",
    "players",
    "you",
    "standings",
    "unrated",
}
PROGRESS_KEYS = {"username", "status", "cards_home", "moves", "finished_at", "time_ms"}


def error_of(response: Any, status: int) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    return body["error"]


@pytest.fixture
def clients(token_client: Callable[..., Any], make_user: Callable[..., Any]) -> list[Any]:
    return [token_client(make_user(name)) for name in ("ann", "bob", "cid")]


def quick(client: Any, variant: str = "bristol") -> Any:
    return client.post(f"{RACES}quick/", {"variant": variant}, format="json")


def a_race_of_two(settings: Any, clients: list[Any]) -> dict:
    pool(settings)
    assert quick(clients[0]).status_code == 201
    response = quick(clients[1])
    assert response.status_code == 200
    return response.json()


def game_of(client: Any, race: dict) -> dict:
    race = client.get(f"{RACES}{race['code']}/").json()
    return client.get(f"/api/v1/games/{race['you']['game']}/").json()


def test_quick_race_opens_then_joins_with_a_countdown(
    settings: Settings, clients: list[Any]
) -> None:
    pool(settings)
    first = quick(clients[0])
    assert first.status_code == 201
    body = first.json()
    assert set(body) == RACE_KEYS and body["status"] == "open" and body["kind"] == "quick"
    assert body["you"] == {"game": None} and body["standings"] is None
    assert body["unrated"] is None  # until it has finished
    assert body["time_limit_seconds"] == 300 and body["max_players"] == 8
    lobby = clients[2].get(RACES, {"variant": "bristol"}).json()
    assert [r["code"] for r in lobby] == [body["code"]]
    second = quick(clients[1]).json()
    assert second["code"] == body["code"] and second["status"] == "countdown"
    assert [p["username"] for p in second["players"]] == ["ann", "bob"]
    assert all(set(p) == PROGRESS_KEYS and p["status"] == "waiting" for p in second["players"])
    wait = datetime.fromisoformat(second["starts_at"]) - datetime.fromisoformat(
        second["server_time"]
    )
    assert timedelta(seconds=19) < wait <= timedelta(seconds=20)
    assert isinstance(second["you"]["game"], int)


def test_moves_of_a_race_game_are_refused_before_the_start_and_counted_after(
    settings: Settings, clients: list[Any], every_race_rated: None
) -> None:
    race = a_race_of_two(settings, clients)
    game = game_of(clients[0], race)
    assert game["ranked"] and game["kind"] == "race" and game["deal"] is None
    assert game["position"] is None and game["legal_moves"] == []  # no card before the start
    move = quiet_moves(Race.objects.get(code=race["code"]).deal, 1)[0]
    url = f"/api/v1/games/{game['id']}/moves/"
    # Legal or not, a move before the start learns nothing of the deal (the engine's
    # refusal would name a card: "r1-f: no foundation takes TH").
    for sent in (move, "r1-f", "r1-r2"):
        refused = clients[0].post(url, {"move": sent, "ply": 0}, format="json")
        assert error_of(refused, 409)["code"] == "race_not_started"
    with at(datetime.fromisoformat(race["starts_at"])):
        assert clients[0].post(url, {"move": move, "ply": 0}, format="json").status_code == 200
        hint = clients[0].post(f"/api/v1/games/{game['id']}/hint/")
        assert error_of(hint, 409)["code"] == "hint_not_allowed"
        view = clients[2].get(f"{RACES}{race['code']}/").json()
    assert view["status"] == "running" and view["you"] is None
    ann = next(p for p in view["players"] if p["username"] == "ann")
    assert ann["moves"] == 1 and ann["status"] == "playing"
    with at(datetime.fromisoformat(race["ends_at"])):
        late = clients[1].post(
            f"/api/v1/games/{game_of(clients[1], race)['id']}/moves/",
            {"move": move, "ply": 0},
            format="json",
        )
        assert error_of(late, 409)["code"] in {"race_over", "game_finished"}
        shown = clients[2].get(f"{RACES}{race['code']}/").json()
        # A read shows the race finished, with the places it will store, and stores nothing:
        # the race's sockets at its limit, or the job, finish it (ratings then).
        assert Race.objects.get(code=race["code"]).status != Race.Status.FINISHED
        assert shown["status"] == "finished" and [s["place"] for s in shown["standings"]] == [1, 2]
        assert all(s["rating"] is None for s in shown["standings"])
        assert race_services.races_tick()[1] == 1  # finished: stored now
        done = clients[2].get(f"{RACES}{race['code']}/").json()
    assert done["status"] == "finished"
    assert [s["username"] for s in done["standings"]] == [s["username"] for s in shown["standings"]]
    assert [s["place"] for s in done["standings"]] == [1, 2]
    ann = next(p for p in done["standings"] if p["username"] == "ann")
    # Neither won: more cards home first, else more moves (bob made none).
    assert ann["cards_home"] >= 0 and done["standings"][0]["username"] == "ann"
    assert all(s["rating"] is not None for s in done["standings"])
    assert done["unrated"] is None


def test_errors_of_joining_starting_and_leaving(settings: Settings, clients: list[Any]) -> None:
    pool(settings)
    created = clients[0].post(RACES, {"variant": "bristol"}, format="json")
    assert created.status_code == 201
    race = created.json()
    assert race["kind"] == "private" and race["creator"] == "ann"
    code = race["code"]
    assert error_of(clients[0].post(f"{RACES}{code}/start/"), 409)["code"] == "too_few_players"
    assert error_of(quick(clients[0]), 409)["code"] == "already_racing"
    assert clients[1].post(f"{RACES}{code}/join/").status_code == 200
    assert error_of(clients[1].post(f"{RACES}{code}/start/"), 403)["code"] == "not_creator"
    assert clients[1].post(f"{RACES}{code}/leave/").status_code == 200
    assert clients[1].post(f"{RACES}{code}/join/").status_code == 200
    started = clients[0].post(f"{RACES}{code}/start/")
    assert started.status_code == 200 and started.json()["status"] == "countdown"
    with at(datetime.fromisoformat(started.json()["starts_at"])):
        assert error_of(clients[2].post(f"{RACES}{code}/join/"), 409)["code"] == "race_started"
        assert error_of(clients[1].post(f"{RACES}{code}/leave/"), 409)["code"] == "race_started"
    assert error_of(clients[2].get(f"{RACES}nosuchrace/"), 404)["code"] == "not_found"
    assert error_of(clients[2].post(f"{RACES}nosuchrace/join/"), 404)["code"] == "not_found"
    bad = clients[2].post(f"{RACES}quick/", {"variant": "chess"}, format="json")
    assert error_of(bad, 400)["code"] == "validation_error"
    assert Race.objects.count() == 1


def test_a_full_race_is_refused(
    settings: Settings, make_user: Callable[..., Any], token_client: Callable[..., Any]
) -> None:
    pool(settings)
    players = [token_client(make_user(f"r{i}")) for i in range(9)]
    code = players[0].post(RACES, {"variant": "bristol"}, format="json").json()["code"]
    for client in players[1:8]:
        assert client.post(f"{RACES}{code}/join/").status_code == 200
    assert error_of(players[8].post(f"{RACES}{code}/join/"), 409)["code"] == "race_full"


def test_an_empty_pool_answers_503_with_retry_after(settings: Settings, clients: list[Any]) -> None:
    settings.RACE_POOL_SIZE = 0
    response = quick(clients[0])
    assert error_of(response, 503)["code"] == "race_pool_empty"
    assert response["Retry-After"] == "5"


def test_replay_rematch_leaderboard_and_player_stats(
    settings: Settings,
    clients: list[Any],
    client: Client,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
    every_race_rated: None,
) -> None:
    race = a_race_of_two(settings, clients)
    code = race["code"]
    replay_url = f"{RACES}{code}/players/ann/replay/"
    assert error_of(client.get(replay_url), 409)["code"] == "race_not_finished"
    with at(datetime.fromisoformat(race["starts_at"])):
        game = game_of(clients[0], race)
        move = next(m for m in game["legal_moves"] if m != "deal")
        clients[0].post(
            f"/api/v1/games/{game['id']}/moves/", {"move": move, "ply": 0}, format="json"
        )
        for c in clients[:2]:
            url = f"/api/v1/games/{game_of(c, race)['id']}/resign/"
            with django_capture_on_commit_callbacks(execute=True):
                assert c.post(url).status_code == 200
    replay = client.get(replay_url, {"step": 1})
    assert replay.status_code == 200, replay.content
    body = replay.json()
    assert body["moves"] == [move] and body["steps"] == 1 and body["step"] == 1
    assert len(body["deal"]["deck"]) == 52
    assert error_of(client.get(f"{RACES}{code}/players/cid/replay/"), 404)["code"] == "not_found"
    assert error_of(client.get(replay_url, {"step": 5}), 400)["code"] == "validation_error"
    assert error_of(clients[2].post(f"{RACES}{code}/rematch/"), 404)["code"] == "not_found"
    rematch = clients[1].post(f"{RACES}{code}/rematch/")
    assert rematch.status_code == 201 and rematch.json()["kind"] == "private"
    joined = clients[0].post(f"{RACES}{code}/rematch/")
    assert joined.status_code == 200 and joined.json()["code"] == rematch.json()["code"]
    assert client.get(f"{RACES}{code}/").json()["rematch"] == rematch.json()["code"]
    standings = client.get(f"{RACES}{code}/").json()["standings"]
    board = client.get(f"{RACES}leaderboards/bristol/").json()["results"]
    assert [line["player"] for line in board] == [s["username"] for s in standings]
    assert [line["rating"] for line in board] == [s["rating"]["after"] for s in standings]
    assert set(board[0]) == {"rank", "player", "family", "rating", "mu", "sigma", "races"}
    assert error_of(client.get(f"{RACES}leaderboards/chess/"), 404)["code"] == "not_found"
    stats = client.get("/api/v1/players/ann/stats/").json()
    assert [r["family"] for r in stats["race_ratings"]] == ["bristol"]
    assert stats["race_ratings"][0]["races"] == 1


def test_private_races_beyond_the_hourly_limit_are_429_with_retry_after(
    settings: Settings, clients: list[Any], race_pool_jobs: list[int]
) -> None:
    from games.services.races import PRIVATE_RACES_PER_HOUR

    pool(settings)
    for _ in range(PRIVATE_RACES_PER_HOUR):
        code = clients[0].post(RACES, {"variant": "bristol"}, format="json").json()["code"]
        assert clients[0].post(f"{RACES}{code}/leave/").status_code == 200
    refused = clients[0].post(RACES, {"variant": "bristol"}, format="json")
    assert error_of(refused, 429)["code"] == "race_limit"
    assert 0 < int(refused["Retry-After"]) <= 3601
    assert clients[1].post(RACES, {"variant": "bristol"}, format="json").status_code == 201


def test_a_quick_race_nobody_raced_says_why_it_is_unrated(
    settings: Settings,
    clients: list[Any],
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    race = a_race_of_two(settings, clients)
    with at(datetime.fromisoformat(race["starts_at"])):
        for c in clients[:2]:
            with django_capture_on_commit_callbacks(execute=True):
                assert c.post(f"/api/v1/games/{game_of(c, race)['id']}/resign/").status_code == 200
        done = clients[2].get(f"{RACES}{race['code']}/").json()
    assert done["status"] == "finished" and done["unrated"] == "uncontested"
    assert all(s["rating"] is None for s in done["standings"])
