"""ws/v1/races/<code>/: the roster, countdown, progress, end and standings, live.

Progress goes out after each committed move of a race game, whichever door the
move came through; no message on a race socket ever holds a card of any game.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from pytest_django import Settings

from accounts import services as account_services
from core import clock
from games.models import Game, Race
from games.play import finish
from games.play import move as play_move
from games.services import races as race_services
from patience_site.asgi import application
from tests.helpers import token_headers
from tests.race_fixtures import at, game_of, pool, quiet_moves, starts

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("channel_layers"),
]

#: A card as the engine writes it (rank and suit, e.g. "10H", "QS"): never on a race socket.
CARD = re.compile(r"\b(?:[2-9]|10|[AJQK])[CDHS]\b")


def _race(settings: Any) -> tuple[Any, list[Any], list[str]]:
    pool(settings)
    users = [get_user_model().objects.create_user(n, password="x" * 20) for n in ("ann", "bob")]
    race = [race_services.race_quick_join(user=u, variant="bristol")[0] for u in users][-1]
    race.refresh_from_db()
    keys = [account_services.token_create(user=u, name="ws")[1] for u in users]
    return race, users, keys


async def opened(*paths: tuple[str, str | None]) -> list[WebsocketCommunicator]:
    """Sockets connected to each (path, token key or None for an anonymous one)."""
    sockets = []
    for path, key in paths:
        socket = WebsocketCommunicator(application, path, headers=token_headers(key) if key else [])
        connected, _ = await socket.connect()
        assert connected
        sockets.append(socket)
    return sockets


async def receive(communicator: WebsocketCommunicator, texts: list[str]) -> dict[str, Any]:
    text = await communicator.receive_from(timeout=5)
    assert isinstance(text, str)
    texts.append(text)
    return json.loads(text)


async def test_players_and_spectators_see_progress_standings_and_no_card(
    settings: Settings,
) -> None:
    race, users, keys = await database_sync_to_async(_race)(settings)
    texts: list[str] = []
    ann, spectator = await opened(
        (f"/ws/v1/races/{race.code}/", keys[0]), (f"/ws/v1/races/{race.code}/", None)
    )
    first = await receive(ann, texts)
    assert first["type"] == "race.state" and first["race"]["status"] == "countdown"
    assert first["race"]["you"]["game"] is not None
    watched = await receive(spectator, texts)
    assert watched["race"]["you"] is None

    def bob_plays() -> list[str]:
        game = game_of(race, users[1])
        played = quiet_moves(race.deal, 2)
        for ply, move in enumerate(played):
            play_move.apply_move(game_id=game.pk, user=users[1], move=move, ply=ply)
        return played

    with at(starts(race) + timedelta(milliseconds=10)):
        await database_sync_to_async(bob_plays)()
        for socket in (ann, spectator):
            for moves in (1, 2):
                message = await receive(socket, texts)
                assert message["type"] == "race.progress"
                assert message["player"]["username"] == "bob"
                assert message["player"]["moves"] == moves
        await ann.send_to(text_data=json.dumps({"type": "ping"}))
        assert await receive(ann, texts) == {"type": "pong"}
        await ann.send_to(text_data=json.dumps({"type": "move"}))
        assert (await receive(ann, texts))["error"]["code"] == "bad_message"

    def everyone_resigns() -> None:
        for user in users:
            game = game_of(race, user)
            finish.resign(game_id=game.pk, user=user)

    with at(starts(race) + timedelta(seconds=3)):
        await database_sync_to_async(everyone_resigns)()
        seen: list[str] = []
        while "race.finished" not in seen:
            seen.append((await receive(spectator, texts))["type"])
        finished = json.loads(texts[-1])["race"]
    assert seen.count("race.progress") == 2
    assert [s["place"] for s in finished["standings"]] == [1, 2]
    # Neither won: more cards home first, else more moves (ann made none): bob either way.
    assert finished["standings"][0]["username"] == "bob"
    for socket in (ann, spectator):
        await socket.disconnect()
    assert texts and not [t for t in texts if CARD.search(t)]


async def test_an_unknown_race_closes_with_4404() -> None:
    socket = WebsocketCommunicator(application, "/ws/v1/races/nosuchrace/")
    connected, _ = await socket.connect()
    assert connected
    out = await socket.receive_output(5)
    assert out["type"] == "websocket.close" and out["code"] == 4404


async def test_a_race_games_socket_shows_no_card_before_the_start_and_moves_after(
    settings: Settings,
) -> None:
    race, users, keys = await database_sync_to_async(_race)(settings)
    games = [await database_sync_to_async(game_of)(race, u) for u in users]
    texts: list[str] = []
    socket = WebsocketCommunicator(
        application, f"/ws/v1/games/{games[0].pk}/", headers=token_headers(keys[0])
    )
    connected, _ = await socket.connect()
    assert connected
    first = await receive(socket, texts)
    assert first["state"]["position"] is None and first["state"]["legal_moves"] == []
    # Not even a refusal names a card ("r1-f: no foundation takes TH").
    await socket.send_to(text_data=json.dumps({"type": "move", "move": "r1-f", "ply": 0}))
    assert (await receive(socket, texts))["error"]["code"] == "race_not_started"
    assert not [t for t in texts if CARD.search(t)]

    def both_move() -> None:
        """Bob moves, then ann through another door (REST, another tab)."""
        for user, game in zip(reversed(users), reversed(games), strict=True):
            move = quiet_moves(race.deal, 1)[0]
            play_move.apply_move(game_id=game.pk, user=user, move=move, ply=0)

    with at(starts(race) + timedelta(milliseconds=10)):
        await socket.send_to(text_data=json.dumps({"type": "resync"}))
        dealt = await receive(socket, texts)
        assert dealt["state"]["position"]["piles"] and dealt["state"]["legal_moves"]
        await database_sync_to_async(both_move)()
        # Ann's move reaches her game's socket through the race's one event; bob's does not.
        changed = await receive(socket, texts)
        assert (changed["cause"], changed["ply"]) == ("changed", 1)
        assert await socket.receive_nothing(timeout=0.3)
    await socket.disconnect()


async def test_sockets_waiting_for_the_start_get_it_without_the_races_job(
    settings: Settings,
) -> None:
    """A bot waiting on its game socket gets the dealt state at the start, and the race
    socket shows the race running: each socket wakes at ``starts_at`` by itself."""
    race, users, keys = await database_sync_to_async(_race)(settings)
    game = await database_sync_to_async(game_of)(race, users[0])

    def start_soon() -> None:
        soon = clock.now() + timedelta(milliseconds=400)
        Race.objects.filter(pk=race.pk).update(starts_at=soon, ends_at=soon + timedelta(minutes=5))
        Game.objects.filter(race_entry__race=race).update(started_at=soon)

    await database_sync_to_async(start_soon)()
    texts: list[str] = []
    bot, watcher = await opened(
        (f"/ws/v1/games/{game.pk}/", keys[0]), (f"/ws/v1/races/{race.code}/", None)
    )
    assert (await receive(bot, texts))["state"]["position"] is None
    assert (await receive(watcher, texts))["race"]["status"] == "countdown"
    dealt = await receive(bot, texts)
    assert (dealt["type"], dealt["cause"], dealt["ply"]) == ("state", "changed", 0)
    assert dealt["state"]["position"]["piles"] and dealt["state"]["legal_moves"]
    running = await receive(watcher, texts)
    assert (running["type"], running["race"]["status"]) == ("race.state", "running")
    # No job marked it: the stored status is still the countdown's.
    stored = await database_sync_to_async(lambda: Race.objects.get(pk=race.pk).status)()
    assert stored == Race.Status.COUNTDOWN
    assert await bot.receive_nothing(0.3) and await watcher.receive_nothing(0.1)
    for socket in (bot, watcher):
        await socket.disconnect()


async def test_a_race_socket_finishes_the_race_at_its_time_limit_without_the_job(
    settings: Settings,
) -> None:
    """At ``ends_at`` the race socket wakes, its read finishes the overdue race, and the
    standings go out once (the finish's own change event repeats nothing)."""
    race, _, _ = await database_sync_to_async(_race)(settings)

    def end_soon() -> None:
        now = clock.now()
        starts, ends = now - timedelta(seconds=30), now + timedelta(milliseconds=400)
        Race.objects.filter(pk=race.pk).update(starts_at=starts, ends_at=ends)
        Game.objects.filter(race_entry__race=race).update(started_at=starts)

    await database_sync_to_async(end_soon)()
    texts: list[str] = []
    (watcher,) = await opened((f"/ws/v1/races/{race.code}/", None))
    assert (await receive(watcher, texts))["race"]["status"] == "running"
    finished = await receive(watcher, texts)
    expired = []
    while finished["type"] == "race.progress":  # the games still playing, ended at the limit
        expired.append(finished["player"]["status"])
        finished = await receive(watcher, texts)
    assert set(expired) <= {"expired"}
    assert (finished["type"], finished["race"]["status"]) == ("race.finished", "finished")
    assert [s["place"] for s in finished["race"]["standings"]] == [1, 2]
    while not await watcher.receive_nothing(0.5):  # the games' ends may come after it
        later = await receive(watcher, texts)
        assert (later["type"], later["player"]["status"]) == ("race.progress", "expired")
        expired.append("expired")
    assert len(expired) == 2  # both games still playing ended at the limit, each said once
    await watcher.disconnect()
