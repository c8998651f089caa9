"""A lost database connection answers 503 ``unavailable`` with Retry-After, never 500.

And the connection is replaced: after PostgreSQL terminated every backend, the
pool's check on checkout hands out a fresh connection, so the next requests succeed.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from django.db import OperationalError, close_old_connections, connection

from api.consumers import GameConsumer
from games import selectors, services


def lost(*args: Any, **kwargs: Any) -> Any:
    raise OperationalError("terminating connection due to administrator command")


@pytest.mark.django_db
def test_a_lost_connection_is_503_unavailable_on_rest(api, monkeypatch):
    monkeypatch.setattr(selectors, "games_of_player", lost)
    response = api.get("/api/v1/games/")
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert response.json()["error"]["code"] == "unavailable"


@pytest.mark.django_db
def test_a_lost_connection_is_503_on_pages(client, user, monkeypatch):
    client.force_login(user)
    monkeypatch.setattr(selectors, "games_of_player", lost)
    response = client.get("/games/")
    assert response.status_code == 503
    assert response["Retry-After"] == "1"


@pytest.mark.django_db
def test_a_lost_connection_is_the_unavailable_error_on_sockets(user, monkeypatch):
    game = services.practice_game_start(user=user, variant="bristol", seed=1)
    consumer = GameConsumer()
    consumer.game_id, consumer.user, consumer.sent = game.pk, user, None
    monkeypatch.setattr(services, "game_apply_move", lost)
    monkeypatch.setattr(selectors, "game_for_player", lost)
    text, shown = consumer._apply("move", "t1-f", 0)
    assert '"code":"unavailable"' in text and shown is None


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL's pool")
@pytest.mark.django_db(transaction=True)
def test_terminated_backends_are_replaced_before_the_next_request(api):
    assert api.get("/api/v1/games/").status_code == 200
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    with psycopg.connect(**params, autocommit=True) as admin:
        killed = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()[0]
    assert killed >= 1
    statuses = []
    for _ in range(5):
        # What a server does around every request (the test client leaves it out).
        close_old_connections()
        statuses.append(api.get("/api/v1/games/").status_code)
    assert statuses == [200] * 5
