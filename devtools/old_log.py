"""Games in the log's earlier form (a ``games_move`` row with the position's JSON per
entry, the game's position as JSON), for the test and the benchmark of the migration
that packs them.

``fill`` writes games as the earlier version's move path left them, through the
historical models of a migration state (``apps``): each game is played by the engine
from its deal, with undos, and ended in every way a game ends. Each ``OldGame`` says
what the game must still be after the migration: its log, its position after every
entry, its score and counters.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection

from games.engine import UNDO, VARIANTS, GameLog, Position, new_position

#: How the filled games end, in turn: still playing, by the rules (won or lost), resigned.
ENDINGS = ("playing", "rules", "resigned")


@dataclass(frozen=True)
class OldGame:
    """One filled game: its id and what its replay must give."""

    game_id: int
    log: list[str]
    positions: list[Position]  # after each entry
    score: int
    status: str
    undo_floor: int


def line(start: Position, rng: random.Random, most: int) -> Iterator[tuple[str, GameLog]]:
    """Up to ``most`` entries from ``start`` with the log after each: a home move if there
    is one, else a random legal move, and now and then an undo."""
    current, board = GameLog(start), [start]
    for _ in range(most):
        moves = [str(m) for m in current.position.legal_moves]
        if current.position.is_over or not moves:
            return
        if current.can_undo(ranked=False) and rng.random() < 0.08:
            current = current.undo(ranked=False, position_at=board.__getitem__)
            board.pop()
            yield UNDO, current
            continue
        home = [m for m in moves if m.endswith(("-f", "-a"))]
        move = home[0] if home else rng.choice(moves)
        current = current.play(move)
        board.append(current.position)
        yield move, current


def fill(apps: Any, *, games: int, most: int, seed: int = 1, at: datetime) -> list[OldGame]:
    """``games`` games of every variant in turn, up to ``most`` entries each, written in
    the earlier form through ``apps`` (a state before the packed log); what each must
    still be."""
    user_model, deal_model = apps.get_model("auth", "User"), apps.get_model("games", "Deal")
    game_model, move_model = apps.get_model("games", "Game"), apps.get_model("games", "Move")
    rng, made = random.Random(seed), []
    player = user_model.objects.create(username=f"old-log-{seed}")
    for n in range(games):
        variant = list(VARIANTS)[n % len(VARIANTS)]
        deal = deal_model.objects.create(variant=variant, seed=seed * 100_000 + n)
        start = new_position(variant, seed=int(deal.seed))
        entries = list(line(start, rng, most))
        last = entries[-1][1] if entries else GameLog(start)
        ending = ENDINGS[n % len(ENDINGS)]
        status = last.position.status.value
        if ending == "resigned" and status == "playing":
            status = "resigned"
        begun = at + timedelta(seconds=n)
        game = game_model.objects.create(
            player=player,
            deal=deal,
            status=status,
            ply=len(entries),
            score=last.position.score,
            undo_floor=last.undo_floor,
            started_at=begun,
            finished_at=None if status == "playing" else begun + timedelta(hours=1),
            position=last.position.to_json(),
        )
        stamp, rows = begun, []
        for ply, (notation, log) in enumerate(entries):
            stamp += timedelta(microseconds=rng.randrange(50_000, 20_000_000))
            position = json.dumps(log.position.to_json())
            made_at = connection.ops.adapt_datetimefield_value(stamp)
            rows.append((game.pk, ply, notation, made_at, position, log.moves_on_board))
        _insert(move_model, rows)
        made.append(
            OldGame(
                game.pk,
                [notation for notation, _ in entries],
                [log.position for _, log in entries],
                last.position.score,
                status,
                last.undo_floor,
            )
        )
    return made


def _insert(move_model: Any, rows: list[tuple[Any, ...]]) -> None:
    """Insert log rows with their own times (the model's ``auto_now_add`` would stamp
    them now), as one statement of many rows."""
    if not rows:
        return
    table = connection.ops.quote_name(move_model._meta.db_table)
    columns = "game_id, ply, notation, created_at, position, depth"
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s, %s, %s, %s)", rows)
