"""Convert games to the compact log, in batches: shared by two migrations and their test.

Each game's ``Move`` rows become its packed ``log`` (``games.engine.record``), its JSON
position its stored bytes (``packed``), and ``log_ply`` records the ply converted. A
game whose ``ply`` moved on after its batch (an older server still playing it) differs
from its ``log_ply`` and is converted again by the next pass.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Q

from games.engine import Position
from games.engine.record import EPOCH, Entry, pack, position_bytes

#: Games converted in one transaction.
BATCH = 1000

_MS = timedelta(milliseconds=1)


def _entries(rows: list[tuple[str, Any]]) -> list[Entry]:
    """The log entries of ``(notation, created_at)`` rows: each one's time since the one
    before, in whole milliseconds since the epoch (so no rounding adds up)."""
    entries, before = [], 0
    for notation, at in rows:
        since = (at - EPOCH) // _MS
        entries.append(Entry(notation, since - before))
        before = since
    return entries


def convert(game_model: Any, move_model: Any, *, batch: int = BATCH) -> int:
    """Convert every game not converted at its current ply, ``batch`` games a
    transaction, in id order; the number converted."""
    due = game_model.objects.filter(Q(log_ply__isnull=True) | ~Q(log_ply=F("ply")))
    done, after = 0, 0
    while True:
        with transaction.atomic():
            games = list(
                due.filter(pk__gt=after)
                .select_related("deal")
                .select_for_update(of=("self",))
                .order_by("pk")[:batch]
            )
            if not games:
                return done
            rows: dict[int, list[tuple[str, Any]]] = {g.pk: [] for g in games}
            moves = move_model.objects.filter(game_id__in=list(rows)).order_by("game_id", "ply")
            for game_id, notation, at in moves.values_list("game_id", "notation", "created_at"):
                rows[game_id].append((notation, at))
            for game in games:
                log = rows[game.pk]
                game.log = pack(game.deal.variant, _entries(log))
                game.packed = position_bytes(Position.from_json(game.position))
                game.moved_at = log[-1][1] if log else None
                game.log_ply = game.ply
            game_model.objects.bulk_update(games, ["log", "packed", "moved_at", "log_ply"])
        done += len(games)
        after = games[-1].pk
