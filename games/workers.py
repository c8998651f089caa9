"""Work done in the solver worker processes, never on a request or socket thread.

Plain functions of the engine (no Django: a worker process imports only this and
``games.engine``), called through the pool of ``games.hints``. Their arguments
and results are plain data, so they cross the process boundary by pickle.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from core.lifeline import die_with_parent
from games.engine import Position
from games.engine.solver import Verdict, solve


def worker_start(increment: int, parent: int) -> None:
    """Start of a worker process: run below the server's threads (``os.nice``), so a
    busy solver slows hints, not moves; and end with the server process ``parent``,
    so a killed server leaves no solver running."""
    os.nice(increment)
    die_with_parent(parent)


def lowest_priority() -> None:
    """Put this process below every other of the machine: Linux's idle scheduling class,
    so moves and hints (whose workers run at ``nice 19``) always come first; elsewhere
    ``nice 19``. For the analysis worker (``manage.py analyse_games``)."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)


def position_key(position: Position) -> str:
    """A digest of the full position (stock included): the cache key of its hint."""
    text = json.dumps(position.to_json(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def hint_line(
    position: dict[str, Any], *, max_nodes: int, max_seconds: float
) -> tuple[str, list[tuple[str, str]], int]:
    """Solve a position (its ``to_json`` form) within the limits.

    Returns the verdict, the winning line as ``(key of the position, move to play
    there)`` for every position along it (empty unless won), and the nodes used.
    Every position on the line gets its move, so a player who follows the line is
    answered from the cache to the end, and never by a second, different line.
    """
    pos = Position.from_json(position)
    result = solve(pos, max_nodes=max_nodes, max_seconds=max_seconds)
    steps: list[tuple[str, str]] = []
    if result.verdict is Verdict.WON:
        for move in result.line:
            steps.append((position_key(pos), move))
            pos = pos.apply(move)
    return result.verdict.value, steps, result.nodes
