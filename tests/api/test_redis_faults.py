"""Redis is a helper: killed, paused (SIGSTOP) or restarted under play, nothing answers 500.

Each test runs its own redis-server (``own_redis``) and injects the fault there.
While Redis is away, REST and pages answer as usual (rate limits per process,
ranks from PostgreSQL) and sockets keep playing; once it is back, a board's
mirror that missed a result is rebuilt from PostgreSQL, so no result is
missing and no two results share a rank.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest
import redis
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from accounts import services as account_services
from devtools.accounts import PASSWORD
from devtools.servers import RedisServer
from games import boards
from games.models import Result
from games.play import finish
from games.services import dailies as daily_services
from games.services import games as game_services
from patience_site.asgi import application
from tests.daily_fixtures import DAY, FakeClock
from tests.helpers import token_headers

pytestmark = [pytest.mark.django_db(transaction=True)]
pytest_plugins = ["tests.daily_fixtures", "tests.own_redis"]


def player(name: str) -> tuple[Any, APIClient, Client]:
    user = get_user_model().objects.create_user(username=name, password=PASSWORD)
    api = APIClient()
    api.credentials(
        HTTP_AUTHORIZATION=f"Token {account_services.token_create(user=user, name='t')[1]}"
    )
    page = Client()
    page.force_login(user)
    return user, api, page


def play_round(api: APIClient, page: Client, game_id: int) -> list[tuple[str, int]]:
    """One of each kind of request a player makes; (what, status) for each."""
    state = api.get(f"/api/v1/games/{game_id}/").json()
    move = {"move": state["legal_moves"][0], "ply": state["ply"]}
    day = DAY.isoformat()
    answers = [
        ("game", api.get(f"/api/v1/games/{game_id}/").status_code),
        ("games", api.get("/api/v1/games/").status_code),
        ("move", api.post(f"/api/v1/games/{game_id}/moves/", move, format="json").status_code),
        ("log", api.get(f"/api/v1/games/{game_id}/moves/").status_code),
        ("dailies", api.get("/api/v1/daily/").status_code),
        ("board", api.get(f"/api/v1/daily/bristol/{day}/board/").status_code),
        ("alltime", api.get("/api/v1/leaderboards/bristol/").status_code),
        ("record", api.get("/api/v1/players/ann/stats/").status_code),
        ("home page", page.get("/").status_code),
        ("board page", page.get(f"/leaderboards/bristol/{day}/").status_code),
    ]
    return answers


def all_ok(answers: list[tuple[str, int]]) -> bool:
    return all(status == 200 for _, status in answers)


def resign_daily(user: Any) -> Result:
    game, _ = daily_services.daily_game_start(user=user, variant="bristol", day=DAY)
    finish.resign(game_id=game.pk, user=user)
    return Result.objects.get(game=game)


def board_ranks(api: APIClient) -> tuple[int, list[int]]:
    board = api.get(f"/api/v1/daily/bristol/{DAY.isoformat()}/board/").json()
    return board["total"], [line["rank"] for line in board["results"]]


def mirror_size(server: Any, deal_id: int) -> int:
    """Results in the board's mirror (its members less the sentinel)."""
    client = redis.Redis.from_url(server.url)
    return client.zcard(boards._key(deal_id)) - 1


def wait_for_retry() -> None:
    """Let the circuit breaker's pause end, so the next call tries Redis again."""
    time.sleep(django_settings.REDIS_RETRY_AFTER + 0.1)


def test_rest_and_pages_answer_while_redis_is_down_and_after(
    own_redis: RedisServer, daily_clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    user, api, page = player("ann")
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    assert all_ok(play_round(api, page, game.pk))
    own_redis.kill()
    down = play_round(api, page, game.pk) + play_round(api, page, game.pk)
    assert all_ok(down), down
    assert "rate limits per process" in caplog.text
    own_redis.start()
    wait_for_retry()
    assert all_ok(play_round(api, page, game.pk))
    assert "Redis is back" in caplog.text


def test_rest_and_pages_answer_while_redis_is_stalled(
    own_redis: RedisServer, daily_clock: FakeClock
) -> None:
    user, api, page = player("ann")
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    assert all_ok(play_round(api, page, game.pk))
    own_redis.pause()
    try:
        stalled = play_round(api, page, game.pk) + play_round(api, page, game.pk)
    finally:
        own_redis.resume()
    assert all_ok(stalled), stalled
    wait_for_retry()
    assert all_ok(play_round(api, page, game.pk))


def test_a_result_entered_during_a_stall_is_in_the_mirror_afterwards(
    own_redis: RedisServer, daily_clock: FakeClock
) -> None:
    users = [player(name)[0] for name in ("ann", "bob", "cyd", "dee")]
    _, api, _ = player("eve")
    for user in users[:2]:
        resign_daily(user)
    deal = daily_services.daily_create("bristol", DAY)
    assert board_ranks(api) == (2, [1, 2]) and mirror_size(own_redis, deal.pk) == 2
    own_redis.pause()
    try:
        resign_daily(users[2])  # its mirror update times out
        assert board_ranks(api) == (3, [1, 2, 3])  # counted in PostgreSQL meanwhile
    finally:
        own_redis.resume()
    wait_for_retry()
    assert board_ranks(api) == (3, [1, 2, 3])
    assert mirror_size(own_redis, deal.pk) == 3
    # Killed and restarted empty under play: the board is rebuilt from PostgreSQL.
    own_redis.kill()
    resign_daily(users[3])
    own_redis.start()
    wait_for_retry()
    assert board_ranks(api) == (4, [1, 2, 3, 4])
    assert mirror_size(own_redis, deal.pk) == 4
    ranks = [boards.rank_of(deal.pk, r.sort_key) for r in Result.objects.all()]
    assert sorted(ranks) == [1, 2, 3, 4]


def test_create_dailies_drops_a_mirror_that_lost_a_result(
    own_redis: RedisServer, daily_clock: FakeClock
) -> None:
    users = [player(name)[0] for name in ("ann", "bob", "cyd")]
    _, api, _ = player("eve")
    results = [resign_daily(user) for user in users]
    deal = daily_services.daily_create("bristol", DAY)
    assert board_ranks(api) == (3, [1, 2, 3])
    # A process that died between a commit and its mirror update leaves this behind.
    redis.Redis.from_url(own_redis.url).zrem(boards._key(deal.pk), results[0].sort_key)
    assert board_ranks(api)[0] == 2
    call_command("create_dailies", days=1, stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert board_ranks(api) == (3, [1, 2, 3])
    assert mirror_size(own_redis, deal.pk) == 3


@pytest.mark.asyncio
async def test_an_open_socket_keeps_playing_while_redis_is_down(
    own_redis: RedisServer, daily_clock: FakeClock
) -> None:
    from asgiref.sync import sync_to_async
    from django.db import connections

    user, api, _ = await sync_to_async(player)("ann")
    game = await sync_to_async(game_services.practice_game_start)(
        user=user, variant="bristol", seed=3
    )
    key = await sync_to_async(account_services.token_create)(user=user, name="ws")
    headers = token_headers(key[1])
    comm = WebsocketCommunicator(application, f"/ws/v1/games/{game.pk}/", headers=headers)
    assert (await comm.connect())[0]
    state = json.loads(await comm.receive_from(5))["state"]
    own_redis.kill()
    try:
        for _ in range(3):
            await comm.send_to(
                text_data=json.dumps(
                    {"type": "move", "move": state["legal_moves"][0], "ply": state["ply"]}
                )
            )
            answer = json.loads(await comm.receive_from(5))
            assert answer["type"] == "state", answer
            state = answer["state"]
        assert state["ply"] == 3
    finally:
        # Leaving its groups needs Redis: Channels raises that error as the socket closes.
        with contextlib.suppress(redis.exceptions.ConnectionError):
            await comm.disconnect()
        await sync_to_async(connections.close_all)()  # in the thread the consumer used
