"""The common path of a move: the guarded write of the game with its log entry (one
update of its row), and the path when it misses (a race's game too, once a move proved
the race's start).

A process that served a game's last move (or started it, or read it) holds the game at
that ply; its next move then reads nothing. These tests run in autocommit
(``transaction=True``), as servers do.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models.functions import Now
from django.test.utils import CaptureQueriesContext

from core import errors
from core import events as core_events
from core.errors import RaceOver, StalePly
from games.engine import new_position
from games.models import Game, Race
from games.play import finish, store
from games.play import move as play_move
from games.selectors.games import game_log
from games.services import games as game_services
from games.services import races as race_services
from tests.race_fixtures import game_of, pool, quiet_moves

pytestmark = pytest.mark.django_db(transaction=True)
pytest_plugins = ["tests.own_redis"]

TRANSACTION_CONTROL = {"BEGIN", "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"}  # SQLite: IMMEDIATE


def statements(captured: CaptureQueriesContext) -> tuple[list[str], int]:
    """The SQL statements run (transaction control left out) and the explicit commits."""
    sqls = [q["sql"] for q in captured.captured_queries]
    return [s for s in sqls if s not in TRANSACTION_CONTROL], sqls.count("COMMIT")


def playable(seed: int = 3, moves: int = 6) -> list[str]:
    """A line of ``moves`` moves of a Bristol deal that leaves the game playing, no move
    the same as the one before it."""
    pos, line = new_position("bristol", seed=seed), [""]
    while len(line) <= moves:
        move = min(str(m) for m in pos.legal_moves if str(m) != line[-1])
        pos = pos.apply(move)
        line.append(move)
    return line[1:]


needs_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the database's clock is PostgreSQL's"
)


def is_move(sqls: list[str]) -> bool:
    """The guarded write and nothing else: one update of the game's row, which appends the
    entry to its packed log."""
    return len(sqls) == 1 and sqls[0].startswith('UPDATE "games_game"')


def test_service_moves_cost_one_update_each(user: Any, assert_consistent: Any) -> None:
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    for ply, move in enumerate(playable()):
        with CaptureQueriesContext(connection) as captured:
            out = play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
        sqls, commits = statements(captured)
        assert is_move(sqls) and commits <= 1, captured.captured_queries
        assert "FOR UPDATE" not in " ".join(sqls)
        assert out.game.ply == ply + 1 and not out.duplicate
    assert_consistent(game)


def test_a_game_this_process_does_not_hold_is_read_once_not_locked(user: Any) -> None:
    first, second = playable(moves=2)
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    store._held.clear()  # as another process, which never saw the game
    with CaptureQueriesContext(connection) as captured:
        play_move.apply_move(game_id=game.pk, user=user, move=first, ply=0)
    sqls, _ = statements(captured)
    assert sqls[0].startswith("SELECT") and "FOR UPDATE" not in sqls[0] and is_move(sqls[1:])
    with CaptureQueriesContext(connection) as captured:  # held from then on
        play_move.apply_move(game_id=game.pk, user=user, move=second, ply=1)
    assert is_move(statements(captured)[0])


def rest_moves(api: Any, assert_consistent: Any) -> list[list[str]]:
    """Play a line over REST; the statements each move ran."""
    started = api.post("/api/v1/games/", {"variant": "bristol", "seed": 3}, format="json")
    assert started.status_code == 201, started.content
    url = f"/api/v1/games/{started.json()['id']}/moves/"
    ran = []
    for ply, move in enumerate(playable()):
        with CaptureQueriesContext(connection) as captured:
            answer = api.post(url, {"move": move, "ply": ply}, format="json")
        assert answer.status_code == 200, answer.content
        sqls, commits = statements(captured)
        assert commits <= 1, captured.captured_queries
        ran.append(sqls)
    assert_consistent(Game.objects.get(pk=started.json()["id"]))
    return ran


def test_rest_moves_cost_the_token_and_the_move(api: Any, assert_consistent: Any) -> None:
    for sqls in rest_moves(api, assert_consistent):
        assert len(sqls) <= 2 and is_move(sqls[-1:]), sqls  # token, move


def test_rest_moves_with_the_token_cached_cost_the_move_alone(
    own_redis: Any, api: Any, assert_consistent: Any
) -> None:
    for sqls in rest_moves(api, assert_consistent):  # the game's start filled the entry
        assert is_move(sqls), sqls


def test_a_held_state_that_another_process_outran_answers_as_before(user: Any) -> None:
    """The process holds ply 1 but the game is at ply 2: the locked path answers."""
    first, second, third = playable(moves=3)
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    at_one = play_move.apply_move(game_id=game.pk, user=user, move=first, ply=0)
    play_move.apply_move(game_id=game.pk, user=user, move=second, ply=1)
    store.hold(at_one.game, at_one.position)  # as another process left it

    again = play_move.apply_move(game_id=game.pk, user=user, move=second, ply=1)
    assert again.duplicate and again.game.ply == 2
    store.hold(at_one.game, at_one.position)
    with pytest.raises(StalePly) as refused:
        play_move.apply_move(game_id=game.pk, user=user, move=third, ply=1)
    assert refused.value.details == {"ply": 2}
    assert Game.objects.get(pk=game.pk).ply == 2


def test_a_held_game_resigned_meanwhile_takes_no_move(user: Any) -> None:
    first, second = playable(moves=2)
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    play_move.apply_move(game_id=game.pk, user=user, move=first, ply=0)
    finish.resign(game_id=game.pk, user=user)  # the held state stays as it was

    with pytest.raises(errors.GameFinished):
        play_move.apply_move(game_id=game.pk, user=user, move=second, ply=1)
    assert len(game_log(Game.objects.get(pk=game.pk))) == 1


def test_a_hint_given_elsewhere_shows_in_the_next_move(user: Any) -> None:
    """The guard includes the hint mark: a move on a held state from before a hint elsewhere
    misses, and the move is judged again on the game as it is."""
    first, second = playable(moves=2)
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    play_move.apply_move(game_id=game.pk, user=user, move=first, ply=0)
    Game.objects.filter(pk=game.pk).update(assisted=True)  # another process's hint

    out = play_move.apply_move(game_id=game.pk, user=user, move=second, ply=1)
    assert out.game.assisted is True and out.state.assisted and not out.duplicate
    assert Game.objects.get(pk=game.pk).ply == 2


# -- a race's game ------------------------------------------------------------------------


def _racing(settings: Any, make_user: Any) -> tuple[Any, list[Any], Any]:
    """A private race of two whose start was a second ago on the database's clock (no test
    pins that clock: the race's times are moved instead); the race, its players and ann's game."""
    pool(settings)
    users = [make_user("ann"), make_user("bob")]
    race = race_services.race_create(user=users[0], variant="bristol")
    race_services.race_join(user=users[1], code=race.code)
    race_services.race_start(user=users[0], code=race.code)
    Race.objects.filter(pk=race.pk).update(
        starts_at=Now() - timedelta(seconds=1), ends_at=Now() + timedelta(minutes=5)
    )
    race.refresh_from_db()
    Game.objects.filter(race_entry__race=race).update(started_at=race.starts_at)
    return race, users, game_of(race, users[0])


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every channel-layer message sent, as (group, message)."""
    messages: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(
        core_events, "send", lambda group, message: messages.append((group, message))
    )
    return messages


@needs_postgres
@pytest.mark.database_clock
def test_race_moves_after_the_first_cost_the_move_alone_and_one_event(
    settings: Any, make_user: Any, sent: list, assert_consistent: Any
) -> None:
    race, (ann, _), game = _racing(settings, make_user)
    line = quiet_moves(race.deal, 4)
    sent.clear()
    play_move.apply_move(game_id=game.pk, user=ann, move=line[0], ply=0)  # proves the start
    for ply, move in enumerate(line[1:], start=1):
        with CaptureQueriesContext(connection) as captured:
            out = play_move.apply_move(game_id=game.pk, user=ann, move=move, ply=ply)
        sqls, commits = statements(captured)
        assert is_move(sqls) and commits <= 1, captured.captured_queries
        assert out.game.ply == ply + 1
    # One event a move, to the race's group: the progress and the game's state.
    assert [group for group, _ in sent] == [f"race.{race.code}"] * 4
    assert [(m["type"], m["game_id"], m["ply"]) for _, m in sent] == [
        ("game.moved", game.pk, n) for n in (1, 2, 3, 4)
    ]
    assert sent[-1][1]["progress"]["moves"] == 4 and sent[-1][1]["progress"]["username"] == "ann"
    assert sent[-1][1]["state"]["ply"] == 4
    assert_consistent(game)


@needs_postgres
@pytest.mark.database_clock
def test_a_held_race_game_takes_no_move_after_the_time_limit(
    settings: Any, make_user: Any, sent: list
) -> None:
    """The time limit is checked in the guarded statement, on the database's clock."""
    race, (ann, _), game = _racing(settings, make_user)
    first, second = quiet_moves(race.deal, 2)
    play_move.apply_move(game_id=game.pk, user=ann, move=first, ply=0)
    held = store._held[game.pk]
    assert held.race is not None and held.race.code == race.code
    # Time is up: the limit moves into the past, in the database and in what the process holds.
    Race.objects.filter(pk=race.pk).update(ends_at=Now())
    race.refresh_from_db()
    assert race.ends_at is not None
    store.hold(held.game, held.position, replace(held.race, ends_at=race.ends_at))
    sent.clear()

    with pytest.raises(RaceOver):
        play_move.apply_move(game_id=game.pk, user=ann, move=second, ply=1)
    assert Game.objects.get(pk=game.pk).ply == 1 and not sent


@needs_postgres
def test_the_move_statement_is_prepared_on_its_connection(user: Any) -> None:
    """Server-side binding (PG_PREPARE_THRESHOLD): PostgreSQL plans the move once."""
    game = game_services.practice_game_start(user=user, variant="bristol", seed=3)
    with connection.cursor() as cursor:  # one connection for the whole test
        for ply, move in enumerate(playable(moves=8)):
            play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any(s.startswith('UPDATE "games_game" SET ply = $1') for s in prepared), prepared
