"""Every list pages the same way (``api.pagination.CursorPage``): walks through ``next``
with no row twice and none skipped while rows arrive, 400 for a cursor that is not the
list's, ``limit``'s bounds, and the schema of every list."""

from __future__ import annotations

from base64 import b64encode
from collections.abc import Callable
from datetime import timedelta
from itertools import count
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from api.pagination import CursorPage
from games.models import PlayerStats, RaceRating
from tests.daily_fixtures import DAY, NOON, FakeClock, daily, finished_result
from tests.helpers import PAGE_KEYS, pages, rows

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_boards")]
pytest_plugins = ["tests.daily_fixtures"]

API = "/api/v1"
_names = count()


def person() -> Any:
    return get_user_model().objects.create_user(f"p{next(_names):04d}", password="pw-12345-x")


# -- each paged list: how to fill it, add a row, and name a row ----------------------------


class Games:
    """My games: new ones come first, before any cursor."""

    def __init__(self, api: Any) -> None:
        self.client = api
        self.url = f"{API}/games/"

    def add(self) -> Any:
        response = self.client.post(self.url, {"variant": "bristol"}, format="json")
        assert response.status_code == 201
        return response.json()["id"]

    def key(self, row: dict[str, Any]) -> Any:
        return row["id"]


class Moves:
    """A game's log: new entries come last, after every cursor."""

    def __init__(self, api: Any) -> None:
        self.client = api
        game = api.post(f"{API}/games/", {"variant": "bristol", "seed": 3}, format="json").json()
        self.url = f"{API}/games/{game['id']}/moves/"
        self.game = game

    def add(self) -> Any:
        undo = self.game["can_undo"] and self.game["ply"] % 2
        notation = "undo" if undo else self.game["legal_moves"][0]
        body = {"move": notation, "ply": self.game["ply"]}
        response = self.client.post(self.url, body, format="json")
        assert response.status_code == 200, response.content
        self.game = response.json()
        return self.game["ply"] - 1

    def key(self, row: dict[str, Any]) -> Any:
        return row["ply"]


class Tokens:
    """My personal tokens: new ones come first."""

    def __init__(self, api: Any) -> None:
        self.client = api
        self.url = f"{API}/auth/tokens/"

    def add(self) -> Any:
        response = self.client.post(self.url, {"name": "a bot"}, format="json")
        assert response.status_code == 201
        return response.json()["id"]

    def key(self, row: dict[str, Any]) -> Any:
        return row["id"]


class DayBoard:
    """A day's board: new results land anywhere, ahead of the cursor or behind it."""

    def __init__(self, api: Any) -> None:
        self.client = APIClient()
        self.deal = daily("bristol", DAY)
        self.url = f"{API}/daily/bristol/{DAY.isoformat()}/board/"
        self.moves = count(100)

    def add(self) -> Any:
        moves = next(self.moves)
        won = moves % 3 == 0
        result = finished_result(self.deal, person(), won=won, moves=200 - moves if won else moves)
        return result.pk

    def key(self, row: dict[str, Any]) -> Any:
        return row["result_id"]


class AlltimeBoard:
    """An all-time board; every line ties on both counts, so only the player id orders it."""

    def __init__(self, api: Any) -> None:
        self.client = APIClient()
        self.url = f"{API}/leaderboards/bristol/"

    def add(self) -> Any:
        stats = PlayerStats.objects.create(
            player=person(), variant="bristol", played=2, won=1, best_streak=1
        )
        return stats.player.get_username()

    def key(self, row: dict[str, Any]) -> Any:
        return row["player"]


class RaceBoard:
    """A family's race ratings, several equal (the cursor's offset among them)."""

    def __init__(self, api: Any) -> None:
        self.client = APIClient()
        self.url = f"{API}/races/leaderboards/bristol/"
        self.ratings = count()

    def add(self) -> Any:
        rating = float(next(self.ratings) % 3)
        line = RaceRating.objects.create(
            player=person(), family="bristol", mu=25.0, sigma=8.0, rating=rating, races=1
        )
        return line.player.get_username()

    def key(self, row: dict[str, Any]) -> Any:
        return row["player"]


LISTS: dict[str, Callable[[Any], Any]] = {
    "games": Games,
    "moves": Moves,
    "tokens": Tokens,
    "day board": DayBoard,
    "all-time board": AlltimeBoard,
    "race board": RaceBoard,
}


@pytest.fixture(params=list(LISTS))
def paged(request: pytest.FixtureRequest, api: Any, daily_clock: Any, daily_secret: str) -> Any:
    """One paged list with seven rows added (``size``: its rows, those it had included)."""
    daily_clock.set(NOON)
    listed = LISTS[request.param](api)
    for _ in range(7):
        listed.add()
    listed.size = len(rows(listed.client, listed.url, {"limit": 1000}))
    return listed


def test_a_walk_through_next_shows_every_row_once_while_rows_arrive(
    paged: Any, daily_clock: FakeClock
) -> None:
    before = [paged.key(row) for row in rows(paged.client, paged.url, {"limit": 100})]
    added: list[Any] = []

    def meanwhile(read: int) -> None:
        daily_clock.advance(seconds=1)
        added.append(paged.add())

    walked = pages(paged.client, paged.url, {"limit": 2}, between=meanwhile)
    seen = [paged.key(row) for page in walked for row in page["results"]]
    assert len(walked) >= 4 and all(len(page["results"]) <= 2 for page in walked)
    assert len(seen) == len(set(seen)), "a row was shown twice"
    assert set(before) <= set(seen), "a row present from the start was skipped"
    assert set(seen) <= set(before) | set(added)
    ranks = [row["rank"] for page in walked for row in page["results"] if "rank" in row]
    assert ranks == sorted(ranks)


def test_previous_goes_back_to_the_same_rows(paged: Any) -> None:
    first = paged.client.get(paged.url, {"limit": 3}).json()
    assert set(first) >= PAGE_KEYS and first["previous"] is None
    second = paged.client.get(first["next"]).json()
    assert second["previous"] is not None
    assert paged.client.get(second["previous"]).json()["results"] == first["results"]


@pytest.mark.parametrize(
    "cursor",
    [
        "not base64!",
        "x" * 65,
        b64encode(b"o=-1").decode(),  # a negative offset
        b64encode(b"p=\xff").decode(),  # not ASCII
        b64encode(b"p=no-such-position").decode(),  # the right form, not the list's field
        b64encode(b"p=2026-13-45").decode(),
    ],
)
def test_a_cursor_that_is_not_the_lists_is_400(paged: Any, cursor: str) -> None:
    response = paged.client.get(paged.url, {"cursor": cursor})
    if response.status_code == 200:
        # A string key (a board's key) takes any well-formed position: then the cursor is
        # a place in the list, and the page is a page.
        assert isinstance(paged, DayBoard | AlltimeBoard) and cursor.startswith("cD")
        assert set(response.json()) >= PAGE_KEYS
        return
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error" and list(error["details"]) == ["cursor"]


def test_a_position_of_the_wrong_type_is_400_on_an_integer_order(api: Any) -> None:
    Games(api).add()
    cursor = b64encode(b"p=abc").decode()
    response = api.get(f"{API}/games/", {"cursor": cursor})
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"cursor": [CursorPage.invalid_cursor_message]}


def test_limit_is_bounded(paged: Any) -> None:
    assert len(paged.client.get(paged.url, {"limit": 1}).json()["results"]) == 1
    for default in ({}, {"limit": 0}, {"limit": -3}, {"limit": "ten"}):
        page = paged.client.get(paged.url, default).json()
        assert len(page["results"]) == paged.size and page["next"] is None, default


@pytest.mark.parametrize(
    ("asked", "size"), [("1", 1), ("1000", 1000), ("1001", 1000), ("10000000000", 1000)]
)
def test_limit_above_the_maximum_is_capped(asked: str, size: int) -> None:
    request = Request(APIRequestFactory().get("/", {"limit": asked}))
    assert CursorPage().get_page_size(request) == size == min(int(asked), CursorPage.max_page_size)


def test_the_schema_describes_every_list_as_a_page_or_a_bounded_array(client: Client) -> None:
    schema = client.get(f"{API}/schema/?format=json").json()
    components = schema["components"]["schemas"]
    paged, bare = set(), set()
    for path, operations in schema["paths"].items():
        get = operations.get("get")
        if get is None:
            continue
        body = get["responses"]["200"]["content"]["application/json"]["schema"]
        if body.get("type") == "array":
            bare.add(path)
            continue
        names = {p["name"] for p in get.get("parameters", ())}
        if "$ref" in body:
            body = components[body["$ref"].rsplit("/", 1)[1]]
        if {"cursor", "limit"} <= names:
            paged.add(path)
            assert set(body["properties"]) >= PAGE_KEYS, path
            assert body["properties"]["results"]["type"] == "array", path
            assert "400" in get["responses"], path
            limit = next(p for p in get["parameters"] if p["name"] == "limit")
            assert limit["schema"]["maximum"] == CursorPage.max_page_size
        else:
            assert not set(body.get("properties", ())) >= PAGE_KEYS, path
    assert bare == {f"{API}/variants/", f"{API}/daily/", f"{API}/races/"}
    assert paged == {
        f"{API}/games/",
        f"{API}/games/{{game_id}}/moves/",
        f"{API}/auth/tokens/",
        f"{API}/daily/{{variant}}/{{day}}/board/",
        f"{API}/leaderboards/{{variant}}/",
        f"{API}/races/leaderboards/{{family}}/",
    }


def test_ranks_continue_across_pages_on_every_board(paged: Any) -> None:
    walked = rows(paged.client, paged.url, {"limit": 3})
    if walked and "rank" in walked[0]:
        assert [row["rank"] for row in walked] == list(range(1, len(walked) + 1))
    assert len(walked) == paged.size


def test_a_day_boards_page_carries_my_line_on_every_page(
    token_client: Callable[..., Any], daily_clock: FakeClock, daily_secret: str
) -> None:
    daily_clock.set(NOON)
    deal = daily("bristol", DAY)
    people = [person() for _ in range(6)]
    for i, p in enumerate(people):
        finished_result(deal, p, won=True, moves=100 + i, finished_at=NOON - timedelta(seconds=i))
    client = token_client(people[4])
    url = f"{API}/daily/bristol/{DAY.isoformat()}/board/"
    walked = pages(client, url, {"limit": 2, "around": 1})
    assert len(walked) == 3
    assert all(page["me"]["rank"] == 5 and page["total"] == 6 for page in walked)
    assert all([line["rank"] for line in page["around"]] == [4, 5, 6] for page in walked)
    assert all("around=1" in page["next"] for page in walked[:-1])
