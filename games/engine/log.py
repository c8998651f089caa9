"""A game's move log as a value: replay, undo and its floor, and safe retries.

A server stores a game as its log: the moves in the spec's notation and the
``undo`` entries, in order. :class:`GameLog` holds what the rules need to know
of such a log and decides each new entry, so every door (REST, WebSocket, the
replay of a finished daily) follows the same rules.

Two counts, two names. ``entries`` is the length of the log, undos included;
it is what a client sends as ``ply`` with each move (the API's concurrency
counter, see the README) and what a replay steps through. ``moves_on_board``
is the position's ``ply``: the moves not undone. A move adds one to both; an
undo adds one entry and takes one move off the board.

>>> from games.engine import new_position
>>> log = GameLog(new_position("bristol", seed=7))
>>> log = log.play("deal").play("r1-t4")
>>> log.entries, log.moves_on_board, log.undo_floor
(2, 2, 1)

An undo goes back to the position the log last left with one move less on the
board. A server that keeps those positions says where they are
(``position_at``); :meth:`GameLog.replay` keeps its own. A ranked game never
undoes a move that revealed a card of the stock (a deal, or a reserve refilled
from the stock): that would let its player see the stock and take it back.

>>> log = GameLog.replay(new_position("bristol", seed=7), ["deal", "r1-t4", UNDO])
>>> log.entries, log.moves_on_board, log.can_undo(ranked=True), log.can_undo(ranked=False)
(3, 1, False, True)
>>> try:
...     log.undo(ranked=True, position_at=lambda depth: log.position)
... except UndoNotAllowedError as exc:
...     print(exc.code)
undo_not_allowed
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from .errors import BadPositionError, EngineError
from .position import Position

#: The log entry that takes the last move back.
UNDO = "undo"


class UndoNotAllowedError(EngineError):
    """An undo with no move to take back, in a finished game, or below a ranked game's
    undo floor."""

    code = "undo_not_allowed"


@dataclass(frozen=True, slots=True)
class GameLog:
    """A move log as far as the rules need it: the position it leads to, its length and
    its undo floor.

    ``undo_floor`` is the number of moves on the board when the stock last revealed a
    card, or less after undos (practice games may undo below it).
    """

    position: Position
    entries: int = 0
    undo_floor: int = 0

    @classmethod
    def replay_steps(cls, start: Position, notations: Iterable[str]) -> Iterator[GameLog]:
        """The log after each entry of ``notations``, played from ``start``.

        Raises an :class:`EngineError` at the first entry the rules refuse.
        """
        board = [start]  # board[d]: the position left with d moves on the board
        yield from cls._steps(start, notations, board)

    @classmethod
    def _steps(
        cls, start: Position, notations: Iterable[str], board: list[Position]
    ) -> Iterator[GameLog]:
        log = cls(start)
        for notation in notations:
            if notation == UNDO:
                log = log.undo(ranked=False, position_at=board.__getitem__)
                board.pop()
            else:
                log = log.play(notation)
                board.append(log.position)
            yield log

    @classmethod
    def replay_board(cls, start: Position, notations: Iterable[str]) -> list[Position]:
        """The positions the log of ``notations`` last left with 0, 1, 2 ... moves on the
        board, up to its current one: what an undo goes back to, rebuilt from the start.

        >>> from games.engine import new_position
        >>> board = GameLog.replay_board(new_position("bristol", seed=7), ["deal", "r1-t4", UNDO])
        >>> [pos.ply for pos in board]
        [0, 1]
        """
        board = [start]
        for _ in cls._steps(start, notations, board):
            pass
        return board

    @classmethod
    def replay(cls, start: Position, notations: Iterable[str]) -> GameLog:
        """The log after all of ``notations``, played from ``start``.

        >>> from games.engine import new_position
        >>> GameLog.replay(new_position("bristol", seed=7), []).entries
        0
        """
        log = cls(start)
        for log in cls.replay_steps(start, notations):  # noqa: B007 (the last one is wanted)
            pass
        return log

    @property
    def moves_on_board(self) -> int:
        """Moves not undone: the position's ``ply``."""
        return self.position.ply

    def floor(self, *, ranked: bool) -> int:
        """Moves on the board that an undo may not take back (none in practice games)."""
        return self.undo_floor if ranked else 0

    def can_undo(self, ranked: bool) -> bool:
        """Whether an undo would be accepted now (each undo is still an entry)."""
        return self._why_no_undo(ranked) is None

    def _why_no_undo(self, ranked: bool) -> str | None:
        pos = self.position
        if pos.is_over:
            return f"the game is over ({pos.status.value})"
        if pos.ply == 0:
            return "there is no move to undo"
        if pos.ply <= self.floor(ranked=ranked):
            return "a ranked game cannot undo a move that revealed a card of the stock"
        return None

    def play(self, text: str) -> GameLog:
        """The log after the move ``text``; raises an :class:`EngineError` if the move is
        not legal here."""
        before = self.position
        after = before.apply(before.parse_legal(text))
        floor = after.ply if after.stock_count < before.stock_count else self.undo_floor
        return GameLog(after, self.entries + 1, floor)

    def undo(self, *, ranked: bool, position_at: Callable[[int], Position]) -> GameLog:
        """The log after an undo; raises :class:`UndoNotAllowedError` when not allowed.

        ``position_at(depth)`` is the position the log last left with ``depth`` moves
        on the board (the start for 0); it is called only for an allowed undo.
        """
        why = self._why_no_undo(ranked)
        if why is not None:
            raise UndoNotAllowedError(why)
        depth = self.position.ply - 1
        below = position_at(depth)
        if below.ply != depth:
            raise BadPositionError(
                f"the position to undo to has {below.ply} moves on the board, not {depth}"
            )
        return GameLog(below, self.entries + 1, min(self.undo_floor, depth))

    def is_retry(self, ply: int, entry: str, stored: Callable[[int], str | None]) -> bool:
        """Whether a request to add ``entry`` after ``ply`` entries repeats the entry
        already logged there (``stored(ply)`` gives it): a client resending a request
        whose answer it lost. It is answered with the current state, not applied twice,
        even once the game is over.

        >>> from games.engine import new_position
        >>> log = GameLog(new_position("bristol", seed=7)).play("deal")
        >>> stored = ["deal"].__getitem__
        >>> log.is_retry(0, "deal", stored), log.is_retry(0, UNDO, stored)
        (True, False)
        >>> log.is_retry(1, "deal", stored)   # ply 1 is the next entry, not a retry
        False
        """
        return 0 <= ply < self.entries and stored(ply) == entry
