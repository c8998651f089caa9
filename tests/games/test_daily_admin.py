"""Admin: a day's results per variant; disqualify, restore and remove results; replace a
future daily nobody has played. Driven as a logged-in staff member posting the actions."""

from __future__ import annotations

import io
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from pytest_django import Settings

from core import jobs
from games import boards
from games.models import Deal, PlayerStats, Result
from games.services import dailies as daily_services
from games.services import games as game_services
from tests.daily_fixtures import DAY, NOON, SECRET, FakeClock, committed, daily, finished_result
from tests.daily_fixtures import day_board as board_page

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("isolated_boards")]
pytest_plugins = ["tests.daily_fixtures"]

RESULTS = "/admin/games/result/"
DEALS = "/admin/games/deal/"


@pytest.fixture
def staff(client: Client) -> Any:
    user = get_user_model().objects.create_user(
        "staffer", password="pw-staff-12345", is_staff=True, is_superuser=True
    )
    client.force_login(user)
    return client


def people(*names: str) -> list[Any]:
    User = get_user_model()
    return [User.objects.create_user(n, password=f"pw-{n}-12345") for n in names]


def board_of(deal: Deal) -> tuple[int, list[int]]:
    """(size, result ids in rank order) of a day's board."""
    page = board_page(deal=deal, limit=100)
    return page["total"], [e["result_id"] for e in page["results"]]


def action(client: Any, url: str, name: str, ids: Iterable[int]) -> str:
    """Post an admin action; returns the page text after the redirect (with its messages)."""
    response = committed(
        client.post, url, {"action": name, "_selected_action": [str(i) for i in ids]}, follow=True
    )
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def day_board(board_backend: str, daily_clock: FakeClock) -> tuple[Deal, list[Result]]:
    deal = daily("bristol", DAY)
    names = ["ann", "bob", "cid", "dan"]
    results = [
        finished_result(deal, p, won=True, moves=100 + i) for i, p in enumerate(people(*names))
    ]
    return deal, results


def test_results_list_shows_a_days_results_per_variant_in_board_order(
    staff: Any, day_board: tuple[Deal, list[Result]]
) -> None:
    deal, results = day_board
    other = daily("mod3", DAY)
    finished_result(other, get_user_model().objects.get(username="ann"), won=False)
    response = staff.get(RESULTS, {"deal__variant": "bristol", "deal__date": DAY.isoformat()})
    assert response.status_code == 200
    shown = list(response.context["cl"].result_list)
    assert [r.pk for r in shown] == [r.pk for r in results]
    assert all(r.deal_id == deal.pk for r in shown)


def test_disqualify_and_requalify_actions(staff: Any, day_board: tuple[Deal, list[Result]]) -> None:
    deal, results = day_board
    text = action(staff, RESULTS, "disqualify", [results[1].pk])
    assert "1 result(s) disqualified" in text
    assert Result.objects.get(pk=results[1].pk).disqualified
    total, ids = board_of(deal)
    assert total == 3 and ids == [results[0].pk, results[2].pk, results[3].pk]
    assert boards.rank_of(deal.pk, results[3].sort_key) == 3
    bob = board_page(deal=deal, user=results[1].player)
    assert bob["me"] is None

    text = action(staff, RESULTS, "requalify", [results[1].pk])
    assert "1 result(s) restored" in text
    total, ids = board_of(deal)
    assert total == 4 and ids == [r.pk for r in results]
    assert boards.rank_of(deal.pk, results[3].sort_key) == 4


def test_remove_players_results_action(staff: Any, day_board: tuple[Deal, list[Result]]) -> None:
    deal, results = day_board
    cid = results[2].player
    finished_result(
        daily("bristol", DAY - timedelta(days=1)),
        cid,
        won=True,
        finished_at=NOON - timedelta(days=1),
    )
    text = action(staff, RESULTS, "remove_players_results", [results[2].pk])
    assert "2 result(s) of 1 player(s) removed" in text
    assert not Result.objects.filter(player=cid).exists()
    assert not PlayerStats.objects.filter(player=cid).exists()
    total, ids = board_of(deal)
    assert total == 3 and ids == [results[0].pk, results[1].pk, results[3].pk]
    assert boards.rank_of(deal.pk, results[3].sort_key) == 3


def test_replace_daily_action(
    staff: Any, daily_clock: FakeClock, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DAILY_SECRET = SECRET
    future = daily("bristol", DAY + timedelta(days=2))
    played = daily("mod3", DAY + timedelta(days=2))
    today = daily("bristol", DAY)
    game_services.game_create(user=people("eve")[0], deal=played)
    old = future.commitment
    started: list[tuple[str, ...]] = []
    monkeypatch.setattr(jobs, "manage_command", lambda *args: started.append(args))
    text = action(staff, DEALS, "replace_daily", [future.pk, played.pk, today.pk])
    assert "being replaced with the next seed (create_dailies job)" in text
    assert "somebody has played this daily already" in text
    assert "only a future daily can be replaced" in text
    # The request only started the job; the job certifies the next seed.
    assert started == [("create_dailies", "--replace", str(future.pk))]
    assert Deal.objects.get(pk=future.pk).commitment == old
    call_command("create_dailies", replace=[future.pk, played.pk], stdout=io.StringIO())
    future = Deal.objects.get(pk=future.pk)
    assert future.seed_index == 1 and future.commitment != old and future.date is not None
    assert future.commitment == daily_services.commitment_derive(
        daily_services.daily_seed_derive("bristol", future.date, 1)
    )
    assert Deal.objects.get(pk=played.pk).seed_index == 0
    assert Deal.objects.get(pk=today.pk).seed_index == 0


def test_the_actions_need_staff(client: Client, day_board: tuple[Deal, list[Result]]) -> None:
    deal, results = day_board
    client.force_login(people("mallory")[0])
    response = client.post(
        RESULTS, {"action": "disqualify", "_selected_action": [str(results[0].pk)]}
    )
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert not Result.objects.get(pk=results[0].pk).disqualified
