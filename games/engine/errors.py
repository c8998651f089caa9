"""Engine errors: one class per failure, each with a stable ``code``.

The codes are part of the public contract: the REST and WebSocket APIs send them
to clients unchanged, so they never change once published.
"""

from __future__ import annotations


class EngineError(ValueError):
    """Base of every engine error; ``code`` is stable, the message is for people."""

    code: str = "engine_error"


class BadNotationError(EngineError):
    """Text that is not a card code or a move of the game's notation."""

    code = "bad_notation"


class IllegalMoveError(EngineError):
    """A well-formed move that the rules do not allow in this position."""

    code = "illegal_move"


class GameOverError(EngineError):
    """A move was offered to a position that is already won or lost."""

    code = "game_over"


class UnknownVariantError(EngineError):
    """A variant key that the registry does not know."""

    code = "unknown_variant"


class BadPositionError(EngineError):
    """A position or deck order that breaks the variant's invariants."""

    code = "bad_position"


class ReplayError(EngineError):
    """A move list failed during replay; ``index`` is the 0-based failing move.

    ``code`` is the code of the underlying error, so a client sees the same code
    whether a move failed live or during a replay.
    """

    def __init__(self, index: int, move: str, cause: EngineError) -> None:
        super().__init__(f"move {index + 1} ({move!r}): {cause}")
        self.index = index
        self.move = move
        self.cause = cause
        self.code = cause.code
