"""Daily challenges and leaderboards over REST: today's dailies, one daily, play/resume,
a day's board, replays, all-time boards and player statistics, with their errors."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from pytest_django import Settings
from rest_framework.test import APIClient

from accounts import services as account_services
from games.engine import VARIANTS, deck_order, new_position
from games.inputs import day_parse
from games.models import Deal, Game, Result
from tests.daily_fixtures import (
    DAY,
    NOON,
    FakeClock,
    committed,
    daily,
    day_where,
    finished_result,
    morning,
    quiet_move,
)
from tests.helpers import PAGE_KEYS, pages, stored_log, stored_position

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_boards")]
pytest_plugins = ["tests.daily_fixtures"]

API = "/api/v1"


def client_of(user: Any = None) -> APIClient:
    client = APIClient()
    if user is not None:
        _, key = account_services.token_create(user=user, name="tests")
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def person(name: str) -> Any:
    return get_user_model().objects.create_user(name, password=f"pw-{name}-12345")


def error_of(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    return body["error"]


def call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A request whose on-commit work (board mirror, events) runs as in production."""
    return committed(method, *args, **kwargs)


def url(variant: str, day: date | str, rest: str = "") -> str:
    return f"{API}/daily/{variant}/{day}/{rest}"


@pytest.fixture
def ann(db: None) -> Any:
    return person("ann")


@pytest.fixture
def today(daily_secret: str, daily_clock: FakeClock) -> date:
    """Today is a day whose Bristol daily has a quiet first move; the clock at 08:00."""
    day = day_where("bristol", lambda p: quiet_move(p) is not None)
    daily_clock.set(morning(day))
    return day


def play(client: APIClient, variant: str, day: date | str, status: int = 201) -> dict[str, Any]:
    response = call(client.post, url(variant, day, "play/"))
    assert response.status_code == status, response.content
    return response.json()


def move(client: APIClient, game: dict[str, Any], notation: str | None) -> dict[str, Any]:
    assert notation is not None, "the deal has no such move"
    response = call(
        client.post,
        f"{API}/games/{game['id']}/moves/",
        {"move": notation, "ply": game["ply"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    return response.json()


def resign(client: APIClient, game: dict[str, Any]) -> dict[str, Any]:
    response = call(client.post, f"{API}/games/{game['id']}/resign/")
    assert response.status_code == 200, response.content
    return response.json()


def assert_secret_kept(response: Any, deal: Deal) -> None:
    text = response.content.decode()
    assert str(int(deal.seed)) not in text
    assert ",".join(f'"{c}"' for c in deck_order(deal.variant, int(deal.seed))[:6]) not in text


# -- today's dailies and one daily --------------------------------------------------------


def test_todays_dailies_for_anyone(today: date) -> None:
    response = APIClient().get(f"{API}/daily/")
    assert response.status_code == 200
    body = response.json()
    assert [d["variant"] for d in body] == list(VARIANTS)
    for d in body:
        deal = Deal.objects.get(kind="daily", variant=d["variant"], date=today)
        assert d["date"] == today.isoformat() and d["commitment"] == deal.commitment
        assert d["seed"] is None and d["deck"] is None and d["my_game"] is None
        assert d["seconds_left"] == 16 * 3600 and d["name"]
        assert_secret_kept(response, deal)


def test_todays_dailies_show_my_game_and_rank(today: date, ann: Any) -> None:
    client = client_of(ann)
    game = play(client, "mod3", today)
    body = {d["variant"]: d for d in client.get(f"{API}/daily/").json()}
    mine = body["mod3"]["my_game"]
    assert mine == {
        "id": game["id"],
        "status": "playing",
        "score": game["score"],
        "ply": 0,
        "rank": None,
    }
    assert body["bristol"]["my_game"] is None
    for name in ("bob", "cid"):
        finished_result(daily("mod3", today), person(name), won=True)
    resign(client, game)
    mine = {d["variant"]: d for d in client.get(f"{API}/daily/").json()}["mod3"]["my_game"]
    assert mine["status"] == "resigned" and mine["rank"] == 3


def test_one_daily_keeps_its_seed_until_the_day_is_over(
    today: date, daily_clock: FakeClock
) -> None:
    response = APIClient().get(url("picture-gallery", today))
    assert response.status_code == 200
    body = response.json()
    deal = Deal.objects.get(kind="daily", variant="picture-gallery", date=today)
    assert body["commitment"] == deal.commitment and body["seed"] is None and body["deck"] is None
    assert_secret_kept(response, deal)

    daily_clock.next_day()
    body = APIClient().get(url("picture-gallery", today)).json()
    assert hashlib.sha256(body["seed"].encode()).hexdigest() == body["commitment"]
    assert body["deck"] == deck_order("picture-gallery", int(body["seed"]))
    assert body["seconds_left"] == 0


def test_today_stands_for_the_current_utc_day(
    today: date, ann: Any, daily_clock: FakeClock
) -> None:
    client = client_of(ann)
    body = client.get(url("bristol", "today")).json()
    assert body["date"] == today.isoformat()
    assert body == client.get(url("bristol", today)).json()
    game = play(client, "bristol", "today")
    assert game["ranked"] and game["date"] == today.isoformat()
    assert play(client, "bristol", today, status=200)["id"] == game["id"]  # the same game
    board = client.get(url("bristol", "today", "board/"))
    assert board.status_code == 200 and board.json()["total"] == 0
    # The last microsecond of the day is still today; the next one is the next day.
    daily_clock.set(datetime.combine(today, datetime.max.time(), tzinfo=UTC))
    assert day_parse("today") == today
    daily_clock.advance(microseconds=1)
    assert day_parse("today") == today + timedelta(days=1)


@pytest.mark.parametrize(
    "bad",
    ["2026-13-01", "yesterday", "2026-02-30", "10.03.2026", "20260310", "2026-W11-2", "Today"],
)
def test_a_bad_date_is_a_validation_error(today: date, bad: str) -> None:
    error_of(APIClient().get(url("bristol", bad)), 400, "validation_error")
    error_of(APIClient().get(url("bristol", bad, "board/")), 400, "validation_error")


def test_unknown_variant_and_future_day_are_not_found(today: date, ann: Any) -> None:
    error_of(APIClient().get(url("klondike", today)), 404, "not_found")
    error_of(APIClient().get(url("klondike", today, "board/")), 404, "not_found")
    tomorrow = today + timedelta(days=1)
    error_of(APIClient().get(url("bristol", tomorrow)), 404, "not_found")
    error_of(APIClient().get(url("bristol", tomorrow, "board/")), 404, "not_found")
    error_of(call(client_of(ann).post, url("bristol", tomorrow, "play/")), 404, "not_found")
    error_of(call(client_of(ann).post, url("klondike", today, "play/")), 404, "not_found")
    error_of(APIClient().get(f"{API}/leaderboards/klondike/"), 404, "not_found")
    assert not Game.objects.exists()


# -- playing -----------------------------------------------------------------------------------


def test_play_starts_the_ranked_game_then_resumes_then_practice(today: date, ann: Any) -> None:
    client = client_of(ann)
    error_of(call(APIClient().post, url("bristol", today, "play/")), 401, "not_authenticated")
    first = play(client, "bristol", today, 201)
    assert first["ranked"] and first["kind"] == "daily" and first["date"] == today.isoformat()
    assert first["deal"] is None and "s" not in first["position"]["piles"]
    again = play(client, "bristol", today, 200)
    assert again["id"] == first["id"] and again["ranked"]
    resign(client, first)
    practice = play(client, "bristol", today, 201)
    assert not practice["ranked"] and practice["id"] != first["id"]
    resign(client, practice)
    board = client.get(url("bristol", today, "board/")).json()
    assert board["total"] == 1 and board["me"]["result_id"] == Result.objects.get().pk
    past = play(client, "bristol", today - timedelta(days=3), 201)
    assert not past["ranked"] and past["date"] == (today - timedelta(days=3)).isoformat()


def test_time_is_the_servers_whatever_the_client_sends(
    today: date, ann: Any, daily_clock: FakeClock
) -> None:
    client = client_of(ann)
    t0 = daily_clock.advance(minutes=1)
    game = play(client, "bristol", today)
    first = quiet_move(
        new_position("bristol", seed=int(Deal.objects.get(pk=Game.objects.get().deal_id).seed))
    )
    daily_clock.advance(seconds=30)
    response = call(
        client.post,
        f"{API}/games/{game['id']}/moves/",
        {
            "move": first,
            "ply": 0,
            "time_ms": 1,
            "elapsed_ms": 1,
            "started_at": "2026-01-01T00:00:00Z",
            "finished_at": "2026-01-01T00:00:00Z",
        },
        format="json",
    )
    assert response.status_code == 200 and response.json()["elapsed_ms"] == 30_000
    t1 = daily_clock.advance(seconds=95, milliseconds=7)
    response = call(
        client.post,
        f"{API}/games/{game['id']}/resign/",
        {"time_ms": 5, "finished_at": "2026-01-01T00:00:00Z"},
        format="json",
    )
    assert response.status_code == 200
    result = Result.objects.get()
    assert result.time_ms == (t1 - t0) // timedelta(milliseconds=1) == 125_007
    assert response.json()["elapsed_ms"] == 125_007
    board = client.get(url("bristol", today, "board/")).json()
    assert board["me"]["time_ms"] == 125_007 and board["me"]["moves"] == 1


def test_ranked_undo_of_a_deal_is_refused_over_rest(today: date, ann: Any) -> None:
    client = client_of(ann)
    game = play(client, "bristol", today)
    game = move(client, game, "deal")
    assert game["can_undo"] is False
    response = call(client.post, f"{API}/games/{game['id']}/undo/", {"ply": 1}, format="json")
    error_of(response, 409, "undo_not_allowed")


# -- the day's board ---------------------------------------------------------------------------


@pytest.fixture
def board(board_backend: str, today: date) -> tuple[Deal, list[Any], list[Result]]:
    deal = daily("bristol", today)
    people = [person(f"p{i:02d}") for i in range(12)]
    # In board order: winners by fewer moves, then games not won by more moves.
    results = [
        finished_result(
            deal, p, won=i < 5, moves=100 + i if i < 5 else 200 - i, finished_at=morning(today)
        )
        for i, p in enumerate(people)
    ]
    return deal, people, results


def test_board_pages_with_a_cursor_my_rank_and_around(
    board: tuple[Deal, list[Any], list[Result]], today: date
) -> None:
    deal, people, results = board
    client = client_of(people[7])
    first = client.get(url("bristol", today, "board/"), {"limit": 5, "around": 2})
    assert first.status_code == 200
    body = first.json()
    assert body["total"] == 12
    assert [e["result_id"] for e in body["results"]] == [r.pk for r in results[:5]]
    assert [e["rank"] for e in body["results"]] == [1, 2, 3, 4, 5]
    assert body["results"][0]["player"] == "p00" and body["results"][0]["won"] is True
    assert body["me"]["rank"] == 8 and body["me"]["player"] == "p07"
    assert [e["rank"] for e in body["around"]] == [6, 7, 8, 9, 10]
    assert_secret_kept(first, deal)

    walked = pages(APIClient(), url("bristol", today, "board/"), {"limit": 5})
    assert all(page["me"] is None and page["total"] == 12 for page in walked)
    seen = [(e["rank"], e["result_id"]) for page in walked for e in page["results"]]
    assert seen == [(i + 1, r.pk) for i, r in enumerate(results)]
    # Every page carries my line and neighbours, whichever page it is.
    second = client.get(body["next"]).json()
    assert [e["rank"] for e in second["results"]] == [6, 7, 8, 9, 10]
    assert second["me"] == body["me"] and second["around"] == body["around"]
    assert client.get(second["previous"]).json()["results"] == body["results"]


@pytest.mark.parametrize(
    "params", [{"around": 26}, {"around": -1}, {"cursor": "x" * 65}, {"cursor": "bz0tMQ=="}]
)
def test_bad_board_parameters(
    board: tuple[Deal, list[Any], list[Result]], today: date, params: dict[str, int | str]
) -> None:
    error = error_of(
        APIClient().get(url("bristol", today, "board/"), params), 400, "validation_error"
    )
    assert set(error["details"]) == set(params)


def test_the_board_pages_by_any_limit(
    board: tuple[Deal, list[Any], list[Result]], today: date
) -> None:
    body = APIClient().get(url("bristol", today, "board/"), {"limit": 100}).json()
    assert len(body["results"]) == 12 and body["next"] is None
    # An empty cursor is no cursor (the first page), as for any omitted query field.
    body = APIClient().get(url("bristol", today, "board/"), {"cursor": "", "limit": "3"}).json()
    assert [e["rank"] for e in body["results"]] == [1, 2, 3]


# -- replays -------------------------------------------------------------------------------


def test_replays_are_public_once_the_day_is_over(
    today: date, ann: Any, daily_clock: FakeClock
) -> None:
    client = client_of(ann)
    game = play(client, "bristol", today)
    deal = Deal.objects.get(kind="daily", variant="bristol", date=today)
    start = new_position("bristol", seed=int(deal.seed))
    for n in (quiet_move(start), "undo", "deal"):
        game = move(client, game, n)
    resign(client, game)
    result = Result.objects.get()
    replay_url = url("bristol", today, f"results/{result.pk}/replay/")

    error_of(APIClient().get(replay_url), 404, "not_found")  # the day is not over
    error_of(APIClient().get(replay_url, {"step": 1}), 404, "not_found")

    daily_clock.next_day()
    body = APIClient().get(replay_url).json()
    log = [notation for _, notation in stored_log(game["id"])]
    assert body["moves"] == log and body["steps"] == len(log) == result.moves
    assert body["player"] == "ann" and body["result_id"] == result.pk
    assert hashlib.sha256(body["deal"]["seed"].encode()).hexdigest() == deal.commitment
    assert body["deal"]["deck"] == deck_order("bristol", int(body["deal"]["seed"]))
    assert body["step"] is None and body["position"] is None

    stack, expected = [start], [start]
    for n in log:
        if n == "undo":
            stack.pop()
        else:
            stack.append(stack[-1].apply(n))
        expected.append(stack[-1])
    for k in range(len(log) + 1):
        step = APIClient().get(replay_url, {"step": k}).json()
        assert step["step"] == k
        assert step["position"]["piles"] == expected[k].to_json()["piles"]
        assert step["position"]["score"] == expected[k].score
    final = stored_position(game["id"]).to_json()
    assert step["position"]["piles"] == final["piles"]


def test_replay_errors(today: date, ann: Any, daily_clock: FakeClock) -> None:
    deal = daily("bristol", today)
    result = finished_result(deal, ann, won=False, moves=0)
    other = finished_result(daily("mod3", today), person("bob"), won=False, moves=0)
    daily_clock.next_day()
    base = url("bristol", today, f"results/{result.pk}/replay/")
    assert APIClient().get(base, {"step": 0}).status_code == 200
    error_of(APIClient().get(base, {"step": 1}), 400, "validation_error")  # out of range
    error_of(APIClient().get(base, {"step": -1}), 400, "validation_error")
    error_of(APIClient().get(base, {"step": "two"}), 400, "validation_error")
    error_of(
        APIClient().get(url("bristol", today, f"results/{other.pk}/replay/")), 404, "not_found"
    )
    error_of(APIClient().get(url("bristol", today, "results/999999/replay/")), 404, "not_found")
    error_of(
        APIClient().get(url("bristol", "2026-99-01", f"results/{result.pk}/replay/")),
        400,
        "validation_error",
    )


# -- all-time boards and player statistics -------------------------------------------------------


def win_days(daily_clock: FakeClock, user: Any, days: list[date]) -> None:
    for day in days:
        daily_clock.set(datetime.combine(day, NOON.timetz()))
        finished_result(daily("bristol", day), user, won=True)


def test_alltime_boards_by_days_won_best_and_current_streak(
    daily_secret: str, daily_clock: FakeClock
) -> None:
    ann, bob = person("ann"), person("bob")
    win_days(daily_clock, ann, [DAY, DAY + timedelta(days=1), DAY + timedelta(days=2)])
    win_days(
        daily_clock,
        bob,
        [DAY, DAY + timedelta(days=2), DAY + timedelta(days=3), DAY + timedelta(days=4)],
    )
    lb = f"{API}/leaderboards/bristol/"
    body = APIClient().get(lb).json()
    assert set(body) == PAGE_KEYS
    assert [(e["rank"], e["player"], e["days_won"]) for e in body["results"]] == [
        (1, "bob", 4),
        (2, "ann", 3),
    ]
    body = APIClient().get(lb, {"order": "best_streak"}).json()
    # a tie on the best streak goes to more days won
    assert [(e["player"], e["best_streak"]) for e in body["results"]] == [("bob", 3), ("ann", 3)]
    body = APIClient().get(lb, {"order": "streak"}).json()
    assert [(e["player"], e["current_streak"]) for e in body["results"]] == [("bob", 3)]
    page = APIClient().get(lb, {"limit": "1", "order": "best_streak"}).json()
    assert len(page["results"]) == 1 and "order=best_streak" in page["next"]
    page = APIClient().get(page["next"]).json()
    assert page["results"][0]["rank"] == 2 and page["next"] is None
    bad: dict[str, str]
    for bad in ({"order": "fastest"}, {"cursor": "made-up"}):
        error = error_of(APIClient().get(lb, bad), 400, "validation_error")
        assert list(error["details"]) == list(bad)


def test_player_statistics(daily_secret: str, daily_clock: FakeClock) -> None:
    ann = person("ann")
    win_days(daily_clock, ann, [DAY, DAY + timedelta(days=1)])
    daily_clock.set(datetime.combine(DAY + timedelta(days=2), NOON.timetz()))
    finished_result(daily("bristol", DAY + timedelta(days=2)), ann, won=False, cards_home=30)
    body = APIClient().get(f"{API}/players/ann/stats/").json()
    assert (body["player"], body["played"], body["won"]) == ("ann", 3, 2)
    assert body["win_rate"] == round(2 / 3, 4)
    (bristol,) = body["variants"]
    assert (bristol["best_streak"], bristol["current_streak"]) == (2, 0)
    assert bristol["best"]["date"] == DAY.isoformat() and bristol["best"]["won"] is True
    error_of(APIClient().get(f"{API}/players/nobody/stats/"), 404, "not_found")
    get_user_model().objects.filter(username="ann").update(is_active=False)
    error_of(APIClient().get(f"{API}/players/ann/stats/"), 404, "not_found")


def test_game_state_keeps_the_deal_until_the_day_is_over(
    today: date, ann: Any, daily_clock: FakeClock, settings: Settings
) -> None:
    client = client_of(ann)
    game = resign(client, play(client, "royal-parade", today))
    assert game["deal"] is None
    assert client.get(f"{API}/games/{game['id']}/").json()["deal"] is None
    daily_clock.set(datetime.combine(today + timedelta(days=1), datetime.min.time(), tzinfo=UTC))
    assert client.get(f"{API}/games/{game['id']}/").json()["deal"] is None  # the grace
    daily_clock.advance(seconds=settings.DAILY_REVEAL_GRACE_SECONDS)
    shown = client.get(f"{API}/games/{game['id']}/").json()["deal"]
    deal = Deal.objects.get(kind="daily", variant="royal-parade", date=today)
    assert hashlib.sha256(shown["seed"].encode()).hexdigest() == deal.commitment


def test_a_move_after_the_day_is_refused_with_day_over(
    today: date, ann: Any, daily_clock: FakeClock
) -> None:
    client = client_of(ann)
    game = move(client, play(client, "bristol", today), "deal")
    daily_clock.next_day()
    response = call(
        client.post, f"{API}/games/{game['id']}/moves/", {"move": "deal", "ply": 1}, format="json"
    )
    assert "the day of this ranked daily is over" in error_of(response, 409, "day_over")["message"]
    ended = Game.objects.get(pk=game["id"])
    assert ended.ply == 1 and ended.status == "expired"
    # It ended with its day, as not won: the day's board and the player's record count it.
    assert not Result.objects.get(game=ended).won
    response = call(client.post, f"{API}/games/{game['id']}/resign/")
    error_of(response, 409, "game_finished")
