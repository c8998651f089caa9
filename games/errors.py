"""Application errors of the service layer, with the stable codes clients see.

Engine errors (:class:`games.engine.EngineError`) pass through unchanged; both
kinds carry ``code`` and map to one HTTP status (``status``) and one WebSocket
error message, so REST and WebSocket clients see the same codes.
"""

from __future__ import annotations

from typing import Any

from games.engine import EngineError, GameOverError


class ServiceError(Exception):
    """Base of service errors: ``code`` is stable, ``status`` is the HTTP status."""

    code = "error"
    status = 400

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


class NotFound(ServiceError):
    """Unknown object, or one that belongs to somebody else (not told apart on purpose)."""

    code = "not_found"
    status = 404


class StalePly(ServiceError):
    """The client has not seen the latest move; ``details.ply`` is the current ply."""

    code = "stale_ply"
    status = 409


class BadPly(StalePly):
    """The client claims more log entries than the game has; ``details.ply`` is the current ply.

    A client bug rather than a race, hence its own code; like ``stale_ply`` it is
    cured by reading the game again.
    """

    code = "bad_ply"


class GameFinished(ServiceError):
    """The game has ended; no more moves, undos or resignations."""

    code = "game_finished"
    status = 409


class DayOver(GameFinished):
    """A move in a ranked daily whose day has ended: the game has ended with the day (as
    expired, not won) and takes no more moves."""

    code = "day_over"


class UndoNotAllowed(ServiceError):
    """Undo is not allowed here (nothing to undo, or the game's rules forbid it)."""

    code = "undo_not_allowed"
    status = 409


class InvalidInput(ServiceError):
    """Input that fails validation before any rule is applied."""

    code = "validation_error"
    status = 400


class NoCertifiedDeal(ServiceError):
    """No seed candidate of a daily could be proven winnable within the limits."""

    code = "no_certified_deal"
    status = 503


class HintNotAllowed(ServiceError):
    """Hints depend on the hidden stock: refused in ranked games and in every game of a
    daily whose day is not over."""

    code = "hint_not_allowed"
    status = 409


class HintInProgress(ServiceError):
    """The player already waits for a hint: one at a time per player."""

    code = "hint_in_progress"
    status = 429


class HintBusy(ServiceError):
    """Every solver worker of this server is taken; ``details.retry_after`` in seconds."""

    code = "hint_busy"
    status = 503


class HintTimeout(ServiceError):
    """No hint within the deadline; ``details.retry_after`` in seconds."""

    code = "hint_timeout"
    status = 503


class DailyNotReady(ServiceError):
    """Today's daily is being dealt by the job; ``details.retry_after`` in seconds."""

    code = "daily_not_ready"
    status = 503


def error_status(exc: Exception) -> int:
    """HTTP status for a service or engine error."""
    if isinstance(exc, ServiceError):
        return exc.status
    if isinstance(exc, GameOverError):
        return 409
    if isinstance(exc, EngineError):
        return 400
    return 500


class RaceNotStarted(ServiceError):
    """A move in a race game before the race's countdown has run out."""

    code = "race_not_started"
    status = 409


class RaceOver(ServiceError):
    """A move in a race game after the race's time limit (or its end)."""

    code = "race_over"
    status = 409


class AlreadyRacing(ServiceError):
    """The player is in another race that has not finished: one race at a time."""

    code = "already_racing"
    status = 409


class RaceFull(ServiceError):
    """The race has its maximum of players."""

    code = "race_full"
    status = 409


class RaceStarted(ServiceError):
    """The race has started (or ended): nobody joins or leaves it any more."""

    code = "race_started"
    status = 409


class TooFewPlayers(ServiceError):
    """A race starts with at least two players."""

    code = "too_few_players"
    status = 409


class NotRaceCreator(ServiceError):
    """Only the creator of a private race starts it."""

    code = "not_creator"
    status = 403


class RaceNotFinished(ServiceError):
    """Replays and rematches come once the race has finished."""

    code = "race_not_finished"
    status = 409


class RacePoolEmpty(ServiceError):
    """No certified race deal is ready: the job is dealing some; ``details.retry_after``."""

    code = "race_pool_empty"
    status = 503
