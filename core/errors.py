"""Application errors of the service layer, with the stable codes clients see.

Engine errors (:class:`games.engine.EngineError`) pass through unchanged; both
kinds carry a ``code`` and a message, so REST and WebSocket clients see the same
codes. What each one means in HTTP is the API's business (``api.errors``).
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """Base of service errors: ``code`` is stable, the message says what to do."""

    code = "error"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


class NotFound(ServiceError):
    """Unknown object, or one that belongs to somebody else (not told apart on purpose)."""

    code = "not_found"


class StalePly(ServiceError):
    """The client has not seen the latest move; ``details.ply`` is the current ply."""

    code = "stale_ply"


class BadPly(StalePly):
    """The client claims more log entries than the game has; ``details.ply`` is the current ply.

    A client bug rather than a race, hence its own code; like ``stale_ply`` it is
    cured by reading the game again.
    """

    code = "bad_ply"


class GameFinished(ServiceError):
    """The game has ended; no more moves, undos or resignations."""

    code = "game_finished"


class DayOver(GameFinished):
    """A move in a ranked daily whose day has ended: the game has ended with the day (as
    expired, not won) and takes no more moves."""

    code = "day_over"


class UndoNotAllowed(ServiceError):
    """Undo is not allowed here (nothing to undo, or the game's rules forbid it)."""

    code = "undo_not_allowed"


class InvalidInput(ServiceError):
    """Input that fails validation before any rule is applied."""

    code = "validation_error"


class NoCertifiedDeal(ServiceError):
    """No seed candidate of a daily could be proven winnable within the limits."""

    code = "no_certified_deal"


class HintNotAllowed(ServiceError):
    """Hints depend on the hidden stock: refused in ranked games and in every game of a
    daily whose day is not over."""

    code = "hint_not_allowed"


class HintInProgress(ServiceError):
    """The player already waits for a hint: one at a time per player."""

    code = "hint_in_progress"


class HintBusy(ServiceError):
    """Every solver worker of this server is taken; ``details.retry_after`` in seconds."""

    code = "hint_busy"


class HintUnavailable(ServiceError):
    """The solver worker died under this hint; a new one is starting (``retry_after``)."""

    code = "hint_unavailable"


class HintTimeout(ServiceError):
    """No hint within the deadline; ``details.retry_after`` in seconds."""

    code = "hint_timeout"


class GameNotFinished(ServiceError):
    """The game is still being played: it has no analysis yet."""

    code = "game_not_finished"


class DayNotOver(ServiceError):
    """A daily's game is analysed (and its deal shown) only once its day is over."""

    code = "day_not_over"


class DailyNotReady(ServiceError):
    """Today's daily is being dealt by the job; ``details.retry_after`` in seconds."""

    code = "daily_not_ready"


class RaceNotStarted(ServiceError):
    """A move in a race game before the race's countdown has run out."""

    code = "race_not_started"


class RaceOver(ServiceError):
    """A move in a race game after the race's time limit (or its end)."""

    code = "race_over"


class AlreadyRacing(ServiceError):
    """The player is in another race that has not finished: one race at a time."""

    code = "already_racing"


class RaceFull(ServiceError):
    """The race has its maximum of players."""

    code = "race_full"


class RaceStarted(ServiceError):
    """The race has started (or ended): nobody joins or leaves it any more."""

    code = "race_started"


class TooFewPlayers(ServiceError):
    """A race starts with at least two players."""

    code = "too_few_players"


class NotRaceCreator(ServiceError):
    """Only the creator of a private race starts it."""

    code = "not_creator"


class RaceNotFinished(ServiceError):
    """Replays and rematches come once the race has finished."""

    code = "race_not_finished"


class RacePoolEmpty(ServiceError):
    """No certified race deal is ready: the job is dealing some; ``details.retry_after``."""

    code = "race_pool_empty"


class RaceLimit(ServiceError):
    """The account opened its share of private races lately; ``details.retry_after``."""

    code = "race_limit"


class GuestLimit(ServiceError):
    """The address started its share of guest games lately; ``details.retry_after``."""

    code = "guest_limit"


class GuestNotAllowed(ServiceError):
    """A guest (no account yet) plays practice games only: no dailies, races or tokens."""

    code = "guest_not_allowed"


class Unavailable(ServiceError):
    """A write needs Redis, which cannot be reached now; nothing changed (``retry_after``)."""

    code = "unavailable"


class NotReady(ServiceError):
    """This process should get no traffic yet (readiness probe): ``details.checks`` names the
    checks that failed, each with why."""

    code = "not_ready"
