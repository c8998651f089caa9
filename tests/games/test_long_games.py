"""Bounded games: the log has at most GAME_MAX_LOG entries, and its length costs nothing.

A legal back-and-forth (a move, then undo) once grew a log without limit, every
undo replayed the whole log and the log endpoint sent it all at once. The work
of an undo, a move and each read is counted here (queries, rows read, engine
moves applied) on a 5,000-entry log and on a 200-entry one: it must be the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import connection
from pytest_django import Settings
from rest_framework.test import APIClient

from api import shapes
from api.pagination import CursorPage
from core.errors import GameFinished
from games.engine import Position
from games.engine.record import Entry, pack, position_bytes
from games.models import MOVE_LIMIT, UNDO, Game, Result
from games.play import move as play_move
from games.selectors import games as game_selectors
from games.services import dailies as daily_services
from games.services import games as game_services
from tests.daily_fixtures import DAY, FakeClock

pytestmark = pytest.mark.django_db
pytest_plugins = ["tests.daily_fixtures"]

LONG = 5000


def quiet(pos: Position) -> str:
    """A legal move that reveals no stock card (undone freely, even in a ranked game)."""
    return next(
        str(m)
        for m in pos.legal_moves
        if not str(m).startswith("deal") and pos.apply(m).stock_count == pos.stock_count
    )


def back_and_forth(game: Game, entries: int) -> Game:
    """Fill a new game's log with ``entries`` entries: a quiet move and its undo, repeated."""
    start = game_selectors.game_position(game)
    move = quiet(start)
    after = start.apply(move)
    log = pack(game.deal.variant, [Entry(UNDO if ply % 2 else move, 1) for ply in range(entries)])
    last = start if entries % 2 == 0 else after
    Game.objects.filter(pk=game.pk).update(ply=entries, position=position_bytes(last), log=log)
    game = Game.objects.select_related("deal").get(pk=game.pk)
    assert game_selectors.game_verify(game) is None
    return game


@dataclass
class Work:
    queries: int = 0
    most_rows: int = 0
    applied: int = 0


@contextmanager
def counted(monkeypatch: Any) -> Iterator[Work]:
    """Queries, the most rows one query returned, and engine moves applied, within."""
    work = Work()
    real_apply = Position.apply

    def apply(self: Position, move: Any) -> Position:
        work.applied += 1
        return real_apply(self, move)

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        work.queries += 1
        work.most_rows = max(work.most_rows, context["cursor"].rowcount)
        return result

    monkeypatch.setattr(Position, "apply", apply)
    with connection.execute_wrapper(wrapper):
        yield work
    monkeypatch.undo()


def work_of_a_turn(game: Game, monkeypatch: Any) -> dict[str, tuple[int, int, int]]:
    """The work of reading the game, a page of its log, a move and an undo."""
    api = APIClient()
    api.force_authenticate(game.player)
    base = f"/api/v1/games/{game.pk}/"
    out = {}
    move = quiet(game_selectors.game_position(game))
    steps = {
        "read": lambda: api.get(base),
        "log page": lambda: api.get(base + "moves/", {"limit": 100}),
        "move": lambda: api.post(base + "moves/", {"move": move, "ply": game.ply}, format="json"),
        "undo": lambda: api.post(base + "undo/", {"ply": game.ply + 1}, format="json"),
    }
    for name, step in steps.items():
        with counted(monkeypatch) as work:
            response = step()
        assert response.status_code == 200, (name, response.content[:300])
        out[name] = (work.queries, min(work.most_rows, 100), work.applied)
    return out


def test_a_turn_costs_the_same_on_a_5000_entry_log(
    user: Any, other_user: Any, monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    settings.GAME_MAX_LOG = LONG + 10
    short = back_and_forth(
        game_services.practice_game_start(user=user, variant="bristol", seed=5), 200
    )
    long = back_and_forth(
        game_services.practice_game_start(user=other_user, variant="bristol", seed=5), LONG
    )
    short_turn, long_turn = work_of_a_turn(short, monkeypatch), work_of_a_turn(long, monkeypatch)
    # The same statements and rows; an undo replays the log from the deal (bench/storage.py).
    assert {k: v[:2] for k, v in short_turn.items()} == {k: v[:2] for k, v in long_turn.items()}
    assert {k: v[2] for k, v in long_turn.items() if k != "undo"} == {
        "read": 0,
        "log page": 0,
        "move": 1,
    }
    for game in (short, long):
        assert (
            game_selectors.game_verify(Game.objects.select_related("deal").get(pk=game.pk)) is None
        )


def test_an_undo_reads_the_game_row_alone_and_replays_the_moves_on_the_board(
    user: Any, monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    settings.GAME_MAX_LOG = LONG + 10
    game = back_and_forth(
        game_services.practice_game_start(user=user, variant="bristol", seed=5), LONG
    )
    move = quiet(game_selectors.game_position(game))
    play_move.apply_move(game_id=game.pk, user=user, move=move, ply=LONG)
    with counted(monkeypatch) as work:
        outcome = play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=LONG + 1)
    assert outcome.position == game_selectors.game_position(game)  # back at the start
    # The log's undone moves are taken back on the way: half the entries were undos.
    assert work.applied == LONG // 2 + 1 and work.queries <= 2 and work.most_rows <= 1, work


def test_the_log_is_paged(user: Any, settings: Settings) -> None:
    settings.GAME_MAX_LOG = LONG + 10
    game = back_and_forth(
        game_services.practice_game_start(user=user, variant="bristol", seed=5), LONG
    )
    api = APIClient()
    api.force_authenticate(user)
    page = api.get(f"/api/v1/games/{game.pk}/moves/").json()
    assert len(page["results"]) == CursorPage.page_size  # the default page
    plies, url, pages = [], f"/api/v1/games/{game.pk}/moves/?limit=1000", 0
    while url:
        page = api.get(url).json()
        assert len(page["results"]) <= 1000
        assert all("position" not in e for e in page["results"])
        plies += [e["ply"] for e in page["results"]]
        url, pages = page["next"], pages + 1
    assert plies == list(range(LONG)) and pages == 5
    assert len(api.get(f"/api/v1/games/{game.pk}/moves/?limit=5000").json()["results"]) == 1000


def test_the_entry_that_fills_the_log_ends_the_game(user: Any, settings: Settings) -> None:
    settings.GAME_MAX_LOG = LONG
    game = back_and_forth(
        game_services.practice_game_start(user=user, variant="bristol", seed=5), LONG - 2
    )
    move = quiet(game_selectors.game_position(game))
    outcome = play_move.apply_move(game_id=game.pk, user=user, move=move, ply=LONG - 2)
    assert outcome.game.status == "playing"
    outcome = play_move.apply_move(game_id=game.pk, user=user, move=UNDO, ply=LONG - 1)
    assert outcome.game.status == MOVE_LIMIT and outcome.game.finished_at is not None
    assert outcome.game.ply == LONG
    with pytest.raises(GameFinished):
        play_move.apply_move(game_id=game.pk, user=user, move=move, ply=LONG)
    game = Game.objects.select_related("deal").get(pk=game.pk)
    assert game_selectors.game_verify(game) is None
    state = shapes.game_state(game)
    assert state["status"] == MOVE_LIMIT and state["legal_moves"] == []


def test_a_ranked_game_at_the_limit_counts_as_not_won(
    user: Any, settings: Settings, daily_clock: FakeClock
) -> None:
    settings.GAME_MAX_LOG = 4
    game, _ = daily_services.daily_game_start(user=user, variant="bristol", day=DAY)
    for ply in range(4):
        pos = game_selectors.game_position(Game.objects.get(pk=game.pk))
        move = quiet(pos) if ply % 2 == 0 else UNDO
        outcome = play_move.apply_move(game_id=game.pk, user=user, move=move, ply=ply)
    assert outcome.game.status == MOVE_LIMIT
    result = Result.objects.get(game=game)
    assert not result.won and result.moves == 4
    assert result.cards_home == outcome.game.score
