"""Reads of dailies: the published deal, the day's overview, a finished day's replays.

A read never creates a row or runs the solver: a missing daily is not found, or (today's)
starts the background job and answers ``daily_not_ready``.
"""

from __future__ import annotations

from datetime import date
from typing import NamedTuple

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User

from core import clock, jobs
from core.errors import DailyNotReady, InvalidInput, NotFound
from games.boards import rank_of
from games.engine import VARIANTS, Position, get_variant
from games.models import Deal, Game, Result
from games.selectors.games import game_log, game_position_after

#: Seconds a client is asked to wait while the job deals today's dailies.
NOT_READY_RETRY_S = 10


def check_day(day: date) -> None:
    """Raise NotFound unless ``day`` has dailies: from ``DAILY_FIRST_DAY`` up to today.

    It also keeps every date arithmetic of a day (its end, the day before and
    after) inside the calendar: 0001-01-01 and 9999-12-31 are not found.
    """
    if day > clock.today():
        raise NotFound(f"the daily of {day.isoformat()} is not out yet")
    if day < settings.DAILY_FIRST_DAY:
        raise NotFound(f"there are no dailies before {settings.DAILY_FIRST_DAY.isoformat()}")


def daily_missing(variant: str, day: date) -> Deal:
    """What a request gets for a daily that was not dealt: never a new row, never the solver.

    Today's: the job is started (``dailies_job_start``) and the answer is
    ``daily_not_ready``. Any other day: not found. (Tests put the job's work here.)
    """
    if day != clock.today():
        raise NotFound(f"no {variant} daily was dealt for {day.isoformat()}")
    jobs.dailies_job_start()
    raise DailyNotReady(
        f"the {variant} daily of {day.isoformat()} is being dealt: try again in a few seconds",
        details={"retry_after": NOT_READY_RETRY_S},
    )


def daily_get(variant: str, day: date) -> Deal:
    """The daily of a variant and day as a request may have it (see ``daily_missing``)."""
    v = get_variant(variant)
    deal = Deal.objects.filter(kind=Deal.Kind.DAILY, variant=v.key, date=day).first()
    return deal if deal is not None else daily_missing(v.key, day)


def published_deal(variant: str, day: date) -> Deal:
    """A daily that is out (today or earlier); a future day is not found."""
    check_day(day)
    return daily_get(variant, day)


def dailies_of_day(
    *, user: User | AnonymousUser | None, day: date
) -> list[tuple[Deal, Game | None, int | None]]:
    """Every variant's daily of a day, with the player's ranked game of it and that game's
    rank on the day's board (None if none, or disqualified)."""
    deals = [daily_get(key, day) for key in VARIANTS]
    mine: dict[int, Game] = {}
    if user is not None and user.is_authenticated:
        games = Game.objects.filter(player=user, deal__in=deals, ranked=True)
        mine = {g.deal_id: g for g in games.select_related("result")}
    out: list[tuple[Deal, Game | None, int | None]] = []
    for deal in deals:
        game = mine.get(deal.pk)
        result = getattr(game, "result", None) if game is not None else None
        rank = None if result is None or result.disqualified else rank_of(deal.pk, result.sort_key)
        out.append((deal, game, rank))
    return out


def replays_public(deal: Deal) -> bool:
    """Whether a daily's games may be shown move by move (its deal with them): once its
    day is over. The one rule for replays and analyses of a day's games."""
    assert deal.date is not None, "a daily has its day"
    return clock.day_over(deal.date)


class ResultReplay(NamedTuple):
    """A finished day's result, its log, and the position after ``step`` entries if asked."""

    result: Result
    moves: list[str]
    step: int | None
    position: Position | None


def result_replay(*, deal: Deal, result_id: int, step: int | None) -> ResultReplay:
    """A finished day's result: its log, and the position after ``step`` log entries."""
    if not replays_public(deal):
        raise NotFound("replays are public once the day is over")
    try:
        result = Result.objects.select_related("game", "player", "deal").get(
            pk=result_id, deal=deal
        )
    except Result.DoesNotExist:
        raise NotFound(f"no result {result_id} on this board") from None
    log = game_log(result.game)
    if step is None:
        return ResultReplay(result, log, None, None)
    if not 0 <= step <= len(log):
        raise InvalidInput(f"step must be between 0 and {len(log)}")
    return ResultReplay(result, log, step, game_position_after(result.game, step))
