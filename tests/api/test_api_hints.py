"""Hints over REST and the game socket: practice only (and never in a game of a daily
before its day is over), the game becomes assisted; one at a time per player, a
bounded pool of solver workers, a deadline."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.core.cache import cache

from accounts import services as account_services
from core import clock
from games import hints
from games.engine import new_position
from games.engine.solver import Verdict, solve
from games.models import Game
from games.play import finish
from games.play import move as play_move
from games.services import dailies as daily_services
from games.services import games as game_services
from games.services import hints as hint_services
from patience_site.asgi import application
from tests.daily_fixtures import DAY
from tests.helpers import rest_hint

pytest_plugins = ["tests.daily_fixtures"]

# Random legal play from Bristol seed 0 that leaves a game still playing but lost
# even with every card known (found once by search, pinned here).
LOST_LINE = [
    "r2-t1",
    "t7-t6",
    "deal",
    "r1-f",
    "deal",
    "deal",
    "t4-t1",
    "r3-t8",
    "deal",
    "t4-t5",
    "t4-f",
    "t6-f",
    "t5-t2",
    "t6-f",
    "r3-f",
    "t3-f",
    "deal",
    "deal",
    "t2-t5",
    "r2-t1",
    "t7-t1",
    "t3-t5",
    "deal",
    "r1-t1",
    "r3-t3",
    "t1-f",
    "t3-f",
    "t8-t5",
    "t3-f",
]


@pytest.fixture(autouse=True)
def _own_solver_pool() -> Any:
    """Each test gets this process's solver pool to itself: a solve an earlier test gave up
    on (its deadline passed) would otherwise still hold a queue slot and answer hint_busy."""
    hints.shutdown()
    yield
    hints.shutdown()


def _hint(client: Any, game_id: int) -> Any:
    """A hint over REST: asked, and polled while it is solved."""
    return rest_hint(client, game_id)


@pytest.mark.django_db
def test_hint_is_the_next_move_of_a_win_and_marks_the_game(token_client: Any, user: Any) -> None:
    client = token_client(user)
    game = game_services.practice_game_start(user=user, variant="bristol", seed=7)
    response = _hint(client, game.pk)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["verdict"] == "won" and body["ply"] == 0
    after = new_position("bristol", seed=7).apply(body["move"])
    assert solve(after, max_nodes=100_000).verdict is Verdict.WON
    game.refresh_from_db()
    assert game.assisted
    assert client.get(f"/api/v1/games/{game.pk}/").json()["assisted"] is True


@pytest.mark.django_db
def test_hint_says_when_the_game_is_no_longer_winnable(token_client: Any, user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=0)
    for ply, move in enumerate(LOST_LINE):
        play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
    body = _hint(token_client(user), game.pk).json()
    assert body == {"ply": len(LOST_LINE), "verdict": "lost", "move": None, "nodes": body["nodes"]}


@pytest.mark.django_db
def test_hint_is_refused_in_a_ranked_game(token_client: Any, user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=7)
    Game.objects.filter(pk=game.pk).update(ranked=True)
    response = _hint(token_client(user), game.pk)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "hint_not_allowed"
    game.refresh_from_db()
    assert not game.assisted


@pytest.mark.django_db
def test_hint_after_the_end_and_for_others(token_client: Any, user: Any, make_user: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=7)
    client = token_client(user)
    finish.resign(game_id=game.pk, user=user)
    response = _hint(client, game.pk)
    assert response.status_code == 409 and response.json()["error"]["code"] == "game_finished"
    other = game_services.practice_game_start(user=make_user(), variant="bristol", seed=7)
    response = _hint(client, other.pk)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


async def hint_asked(user: Any, variant: str = "bristol", seed: int = 7) -> WebsocketCommunicator:
    """A game socket on a new practice game (Bristol 7) that has just asked for a hint."""
    from asgiref.sync import sync_to_async

    game = await sync_to_async(game_services.practice_game_start)(
        user=user, variant=variant, seed=seed
    )
    token = (await sync_to_async(account_services.token_create)(user=user, name="ws"))[1]
    communicator = WebsocketCommunicator(
        application,
        f"/ws/v1/games/{game.pk}/?token={token}",
        headers=[(b"host", b"localhost")],
    )
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "state"
    await communicator.send_json_to({"type": "hint"})
    return communicator


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_hint_over_the_socket(user: Any) -> None:
    communicator = await hint_asked(user)
    message = await communicator.receive_json_from(timeout=10)
    assert message["type"] == "hint" and message["ply"] == 0
    assert message["hint"]["verdict"] == "won" and message["hint"]["move"]
    await communicator.disconnect()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_the_socket_answers_other_frames_while_a_hint_is_solved(
    user: Any, settings: Any
) -> None:
    """The solve holds nothing: a resync sent after the hint is answered first, and the
    hint comes when the solver is done."""
    settings.HINT_SOLVER_NODES = 10**9
    settings.HINT_SOLVER_SECONDS = 3.0  # a slow position: solved to its time limit
    communicator = await hint_asked(user, variant="royal-parade", seed=3)
    await communicator.send_json_to({"type": "resync"})
    first = await communicator.receive_json_from(timeout=10)
    assert first["type"] == "state" and first["cause"] == "resync"
    later = await communicator.receive_json_from(timeout=30)
    assert later["type"] == "hint" and later["hint"]["nodes"] > 0, later
    await communicator.disconnect()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_socket_hint_still_queued_at_its_deadline_times_out_and_goes_on(
    user: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A solve still waiting for a worker at the deadline: the socket answers
    ``hint_timeout`` (not "no hint asked"), and the solve is not cancelled, so whoever
    joined it still gets its answer."""
    settings.HINT_DEADLINE_SECONDS = 0.5
    queued: Future[Any] = Future()  # no worker takes it in time
    monkeypatch.setattr(hints, "_submit", lambda position: queued)
    communicator = await hint_asked(user)
    message = await communicator.receive_json_from(timeout=10)
    assert message["type"] == "error" and message["cause"] == "hint", message
    assert message["error"]["code"] == "hint_timeout"
    assert not queued.cancelled() and queued.set_running_or_notify_cancel()
    await communicator.disconnect()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_hint_flood_is_answered_on_the_socket_before_any_work(
    user: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the server's hint budget spent, a hint frame is refused ``hint_busy`` with a
    retry hint by the socket itself: the service (a thread, Redis, a read) is never called."""
    settings.HINT_RATE = 1.0
    monkeypatch.setattr(hints, "_clock", lambda: 1000.0)
    hints.hint_admit()  # another player's hint took this second's only one

    def not_reached(**kwargs: Any) -> None:
        raise AssertionError("a refused hint reached the service")

    monkeypatch.setattr(hint_services, "game_hint", not_reached)
    communicator = await hint_asked(user)
    message = await communicator.receive_json_from(timeout=10)
    assert message["type"] == "error" and message["cause"] == "hint" and message["ply"] == 0
    assert message["error"]["code"] == "hint_busy"
    assert message["error"]["details"]["retry_after"] >= 1
    await communicator.disconnect()


# -- limits: one hint at a time per player, a bounded pool, a deadline ---------------------


@pytest.mark.django_db
def test_one_solve_at_a_time_per_player_and_then_a_pause(
    token_client: Any, user: Any, settings: Any
) -> None:
    settings.HINT_PLAYER_INTERVAL_SECONDS = 30
    client = token_client(user)
    first = game_services.practice_game_start(user=user, variant="bristol", seed=7)
    second = game_services.practice_game_start(user=user, variant="bristol", seed=8)
    assert _hint(client, first.pk).json()["nodes"] > 0  # solved
    response = _hint(client, second.pk)  # another solve at once: refused, nothing solved
    assert response.status_code == 429, response.json()
    assert response.json()["error"]["code"] == "hint_in_progress"
    assert response["Retry-After"] == "30"
    again = _hint(client, first.pk)  # the cache answers: never held up
    assert again.status_code == 200 and again.json()["nodes"] == 0
    settings.HINT_PLAYER_INTERVAL_SECONDS = 0
    cache.delete(f"hint-solving:{user.pk}")  # the pause is over
    assert _hint(client, second.pk).json()["nodes"] > 0


@pytest.mark.django_db
def test_a_hint_beyond_the_pools_queue_is_refused_at_once(
    token_client: Any, user: Any, settings: Any
) -> None:
    settings.HINT_QUEUE = 1
    hints.shutdown()
    game = game_services.practice_game_start(user=user, variant="bristol", seed=7)
    _, slots = hints._workers()
    assert slots.acquire(blocking=False)  # another player's hint holds the only slot
    try:
        response = _hint(token_client(user), game.pk)
    finally:
        slots.release()
        hints.shutdown()
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "hint_busy" and response["Retry-After"] == "2"
    game.refresh_from_db()
    assert not game.assisted


@pytest.mark.django_db
def test_a_hint_past_its_deadline_gets_a_clear_answer(
    token_client: Any, user: Any, settings: Any
) -> None:
    settings.HINT_DEADLINE_SECONDS = 0  # no worker answers within no time at all
    settings.HINT_PLAYER_INTERVAL_SECONDS = 0
    game = game_services.practice_game_start(user=user, variant="royal-parade", seed=3)
    response = _hint(token_client(user), game.pk)
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "hint_timeout" and "no hint within 0 s" in error["message"]
    assert response["Retry-After"] == "5"


@pytest.mark.django_db
def test_a_solve_answers_202_with_where_and_when_to_ask_again(token_client: Any, user: Any) -> None:
    """No request waits for the solver: the answer says where to poll, and the poll
    answers the hint once solved; a poll after the game moved on, or with no hint asked,
    is refused clearly."""
    client = token_client(user)
    game = game_services.practice_game_start(user=user, variant="bristol", seed=7)
    url = f"/api/v1/games/{game.pk}/hint/"
    assert error_code(client.get(url), 404) == "not_found"  # nothing asked yet
    asked = client.post(url)
    assert asked.status_code == 202, asked.json()
    assert asked.json() == {"ply": 0, "status": "solving", "retry_after": 1}
    assert asked["Location"] == f"http://testserver{url}?ply=0" and asked["Retry-After"] == "1"
    hint = _hint(client, game.pk)  # asked again: the solve under way, or its answer
    assert hint.status_code == 200 and hint.json()["verdict"] == "won"
    assert client.get(asked["Location"]).json() == hint.json()
    play_move.apply_move(game_id=game.pk, user=user, move=hint.json()["move"], ply=0)
    assert error_code(client.get(asked["Location"]), 409) == "stale_ply"


def error_code(response: Any, status: int) -> str:
    assert response.status_code == status, response.content
    return str(response.json()["error"]["code"])


# -- dailies: no hint before the day is over, ranked or not -------------------------------


@pytest.mark.django_db
def test_no_hint_in_a_replay_of_todays_daily_until_the_day_is_over(
    token_client: Any, user: Any, daily_clock: Any, settings: Any, client: Any
) -> None:
    ranked, _ = daily_services.daily_game_start(user=user, variant="bristol", day=DAY)
    finish.resign(game_id=ranked.pk, user=user)
    again, created = daily_services.daily_game_start(user=user, variant="bristol", day=DAY)
    assert created and not again.ranked  # "play again": practice
    api = token_client(user)
    response = _hint(api, again.pk)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "hint_not_allowed"
    client.force_login(user)
    page = client.get(f"/play/{again.pk}/").content.decode()
    assert 'id="btn-hint"' not in page

    daily_clock.set(clock.day_end(DAY))  # midnight: ended, not yet revealed
    assert _hint(api, again.pk).status_code == 409
    daily_clock.advance(seconds=settings.DAILY_REVEAL_GRACE_SECONDS)
    response = _hint(api, again.pk)
    assert response.status_code == 200 and response.json()["verdict"] == "won"
    assert 'id="btn-hint"' in client.get(f"/play/{again.pk}/").content.decode()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_no_hint_over_the_socket_in_a_replay_of_todays_daily(
    user: Any, daily_clock: Any
) -> None:
    from asgiref.sync import sync_to_async

    @sync_to_async
    def replay_of_today() -> tuple[int, str]:
        ranked, _ = daily_services.daily_game_start(user=user, variant="bristol", day=DAY)
        finish.resign(game_id=ranked.pk, user=user)
        again, _ = daily_services.daily_game_start(user=user, variant="bristol", day=DAY)
        return again.pk, account_services.token_create(user=user, name="ws")[1]

    game_id, token = await replay_of_today()
    communicator = WebsocketCommunicator(
        application, f"/ws/v1/games/{game_id}/?token={token}", headers=[(b"host", b"localhost")]
    )
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "state"
    await communicator.send_json_to({"type": "hint"})
    message = await communicator.receive_json_from(timeout=10)
    assert message["type"] == "error" and message["error"]["code"] == "hint_not_allowed"
    await communicator.disconnect()
