"""Parallel requests (threads, each with its own PostgreSQL connection) on guests: one
guest session that registers and logs in at once, or registers twice at once, never loses
an account nor answers 201 twice for one name; bursts of guests and guest games from one
address stop at the cap.

PostgreSQL only: SQLite serializes every write, so the requests cannot overlap there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.test import Client

from accounts.models import Guest
from devtools.accounts import PASSWORD
from games.models import Game
from games.services import guests as guest_services
from tests.security.helpers import raise_rates

pytestmark = pytest.mark.django_db(transaction=True)

#: Trials per test: before guarded merges, 9 of 12 lost the registered account.
TRIALS = 12


@pytest.fixture(autouse=True)
def _parallel(settings: Any) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serializes every write; the requests cannot overlap")
    raise_rates(settings)


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in threads released together; their results, in order."""
    gate = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            gate.wait()
            results[i] = calls[i]()
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def posting(client: Client, path: str, username: str) -> Callable[[], Any]:
    """A POST of a user name and the password, to be sent later."""
    body = {"username": username, "password": PASSWORD}
    return partial(client.post, path, body, content_type="application/json")


def guest_session(n: int) -> tuple[Game, list[Client]]:
    """A guest's practice game, and two clients that share the guest's session."""
    guest = guest_services.guest_start(address=f"192.0.2.{n}")
    game = guest_services.practice_start(user=guest, variant="bristol", seed=n)
    first = Client()
    first.force_login(guest)
    second = Client()
    second.cookies = first.cookies
    return game, [first, second]


def test_register_and_log_in_from_one_guest_session_lose_no_account() -> None:
    users = get_user_model().objects
    main = users.create_user(username="main", password=PASSWORD)
    failed = []
    for n in range(TRIALS):
        game, (one, other) = guest_session(n)
        name = f"newcomer{n}"
        registered, logged_in = at_once(
            posting(one, "/api/v1/auth/register/", name),
            posting(other, "/api/v1/auth/login/", "main"),
        )
        exists = users.filter(username=name).exists()
        outcome = (registered.status_code, logged_in.status_code, exists)
        # The guest's game went to one of the two accounts, never nowhere.
        kept = Game.objects.filter(pk=game.pk, player__username__in=[name, "main"]).exists()
        if outcome != (201, 200, True) or not kept or Guest.objects.filter(user=game.player_id):
            failed.append((n, outcome, kept))
    assert not failed, f"(trial, (register, log-in, account exists), games kept): {failed}"
    assert users.filter(pk=main.pk).exists()


def test_two_registrations_of_one_name_at_once_make_one_account() -> None:
    users = get_user_model().objects
    failed = []
    for n in range(TRIALS):
        _, clients = guest_session(n)
        name = f"twin{n}"
        answers = at_once(*(posting(c, "/api/v1/auth/register/", name) for c in clients))
        statuses = sorted(a.status_code for a in answers)
        refused = [a.json()["error"]["details"] for a in answers if a.status_code == 400]
        if statuses != [201, 400] or refused != [{"username": ["taken"]}]:
            failed.append((n, statuses))
        assert users.filter(username=name).count() == 1
    assert not failed, f"(trial, statuses): {failed}"


#: Requests of a burst: few connections of the shared server, several times the cap.
BURST = 16


def test_a_burst_of_guests_from_one_address_stops_at_the_cap(settings: Any) -> None:
    settings.GUEST_GAMES_PER_HOUR = 4
    clients = [Client(REMOTE_ADDR="198.51.100.9") for _ in range(BURST)]
    answers = at_once(*(partial(c.post, "/api/v1/auth/guest/") for c in clients))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201] * 4 + [429] * (BURST - 4), f"{statuses.count(201)} guests made"
    assert Guest.objects.count() == 4


def test_a_burst_of_guest_games_from_one_address_stops_at_the_cap(settings: Any) -> None:
    settings.GUEST_GAMES_PER_HOUR = 4
    game, clients = guest_session(1)  # one game of the four already
    body = {"variant": "bristol"}
    starts = [
        partial(clients[i % 2].post, "/api/v1/games/", body, content_type="application/json")
        for i in range(BURST)
    ]
    statuses = sorted(a.status_code for a in at_once(*starts))
    assert statuses == [201] * 3 + [429] * (BURST - 3), f"{statuses.count(201)} games started"
    assert Game.objects.filter(player=game.player_id).count() == 4
