"""Reads of dailies: the published deal, the day's overview, a finished day's replays.

A read never creates a row or runs the solver: a missing daily is not found, or (today's)
starts the background job and answers ``daily_not_ready``.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User

from games import clock, jobs
from games.boards import rank_of
from games.engine import VARIANTS, deck_order, get_variant
from games.errors import DailyNotReady, InvalidInput, NotFound
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


def deal_public(deal: Deal) -> dict[str, Any]:
    """What anyone may know of a daily: its commitment, and the seed once the day is over."""
    assert deal.date is not None, "a daily has its day"
    over = clock.day_over(deal.date)
    return {
        "variant": deal.variant,
        "date": deal.date,
        "commitment": deal.commitment,
        "seed": str(deal.seed) if over else None,
        "deck": deck_order(deal.variant, int(deal.seed)) if over else None,
        "par": deal.par if over else None,
        "par_line": deal.par_line if over else None,
        "seconds_left": clock.seconds_left(deal.date),
    }


def daily_overview(*, user: User | AnonymousUser | None, day: date) -> list[dict[str, Any]]:
    """Every variant's daily of a day, with the player's ranked game and result if any."""
    deals = [daily_get(key, day) for key in VARIANTS]
    mine: dict[int, Game] = {}
    if user is not None and user.is_authenticated:
        games = Game.objects.filter(player=user, deal__in=deals, ranked=True)
        mine = {g.deal_id: g for g in games.select_related("result")}
    out = []
    for deal in deals:
        game = mine.get(deal.pk)
        result = getattr(game, "result", None) if game is not None else None
        out.append(
            {
                **deal_public(deal),
                "name": get_variant(deal.variant).name,
                "my_game": None
                if game is None
                else {
                    "id": game.pk,
                    "status": game.status,
                    "score": game.score,
                    "ply": game.ply,
                    "rank": None
                    if result is None or result.disqualified
                    else rank_of(deal.pk, result.sort_key),
                },
            }
        )
    return out


def result_replay(*, deal: Deal, result_id: int, step: int | None) -> dict[str, Any]:
    """A finished day's result: its log, and the position after ``step`` log entries."""
    assert deal.date is not None, "a daily has its day"
    if not clock.day_over(deal.date):
        raise NotFound("replays are public once the day is over")
    try:
        result = Result.objects.select_related("game", "player").get(pk=result_id, deal=deal)
    except Result.DoesNotExist:
        raise NotFound(f"no result {result_id} on this board") from None
    log = game_log(result.game)
    data: dict[str, Any] = {
        "result_id": result.pk,
        "player": result.player.get_username(),
        "won": result.won,
        "cards_home": result.cards_home,
        "moves": log,
        "steps": len(log),
        "deal": {"seed": str(deal.seed), "deck": deck_order(deal.variant, int(deal.seed))},
        "step": None,
        "position": None,
    }
    if step is not None:
        if not 0 <= step <= len(log):
            raise InvalidInput(f"step must be between 0 and {len(log)}")
        pos = game_position_after(result.game, step)
        data["step"] = step
        data["position"] = {**pos.to_json(), "status": pos.status.value, "score": pos.score}
    return data
