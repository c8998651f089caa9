"""A lost database connection answers 503 ``unavailable`` with Retry-After, never 500.

A read is tried once more on a new connection first; the pool drops the dead
connections as they come back, so after PostgreSQL terminated every backend the
requests succeed again after at most one 503 per dead connection.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from django.db import OperationalError, close_old_connections, connection
from django.test import Client

from api.consumers import GameConsumer
from games.play import move as play_move
from games.selectors import games as game_selectors
from games.services import games as game_services


def lost(*args: Any, **kwargs: Any) -> Any:
    raise OperationalError("terminating connection due to administrator command")


@pytest.mark.django_db
def test_a_lost_connection_is_503_unavailable_on_rest(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(game_selectors, "games_of_player", lost)
    response = api.get("/api/v1/games/")
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert response.json()["error"]["code"] == "unavailable"


@pytest.mark.django_db
def test_a_lost_connection_is_503_on_pages(
    client: Client, user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client.force_login(user)
    monkeypatch.setattr(game_selectors, "games_of_player", lost)
    response = client.get("/games/")
    assert response.status_code == 503
    assert response["Retry-After"] == "1"


@pytest.mark.django_db
def test_a_lost_connection_is_the_unavailable_error_on_sockets(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=1)
    consumer = GameConsumer()
    consumer.game_id, consumer.user, consumer.sent = game.pk, user, None
    consumer.channel_name = "specific.test!1"
    monkeypatch.setattr(play_move, "apply_move", lost)
    monkeypatch.setattr(game_selectors, "game_for_player", lost)
    text, shown = consumer._apply("move", "t1-f", 0)
    assert '"code":"unavailable"' in text and shown is None


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL's pool")
@pytest.mark.django_db(transaction=True)
def test_terminated_backends_cost_503s_then_are_replaced(api: Any) -> None:
    assert api.get("/api/v1/games/").status_code == 200
    params = connection.get_connection_params()
    for name in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(name, None)
    with psycopg.connect(**params, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    killed = row[0]
    assert killed >= 1
    answers: list[Any] = []
    # Until three in a row succeed. A dead connection may come out of the pool after a
    # new one (a request whose transaction lost its connection takes another to finish),
    # so the 503s need not all come first; each dead connection costs at most one.
    while len(answers) < 2 * killed + 3 and [a.status_code for a in answers[-3:]] != [201] * 3:
        # What a server does around every request (the test client leaves it out).
        close_old_connections()
        answers.append(api.post("/api/v1/games/", {"variant": "bristol"}, format="json"))
    statuses = [a.status_code for a in answers]
    assert set(statuses) <= {201, 503} and statuses[-3:] == [201] * 3, statuses
    assert statuses.count(503) <= killed, statuses
    for answer in answers:
        if answer.status_code == 503:
            assert answer["Retry-After"] == "1"
            assert answer.json()["error"]["code"] == "unavailable"


@pytest.mark.django_db
def test_a_read_that_lost_its_connection_is_tried_once_more(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real = game_selectors.games_of_player

    def once_lost(**kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(**kwargs)

    monkeypatch.setattr(game_selectors, "games_of_player", once_lost)
    assert api.get("/api/v1/games/").status_code == 200
    assert len(calls) == 2
    monkeypatch.setattr(game_selectors, "games_of_player", lost)
    assert api.get("/api/v1/games/").status_code == 503  # tried twice, then answered


@pytest.mark.django_db
def test_a_write_that_lost_its_connection_is_not_tried_again(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []

    def lost_start(**kwargs: Any) -> Any:
        calls.append(1)
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(game_services, "practice_game_start", lost_start)
    response = api.post("/api/v1/games/", {"variant": "bristol"}, format="json")
    assert response.status_code == 503 and len(calls) == 1
