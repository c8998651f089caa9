"""Reads of races: a race and its entries, its status on the shared clock, standings
order, replays, the lobby and the rating boards.

They return models and plain values; ``api.shapes`` renders them (and holds the
rule that a race shows counts only, never a card).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from django.contrib.auth.models import User
from django.db.models import Count, F, Q, QuerySet

from core import clock
from core.errors import InvalidInput, NotFound, RaceNotFinished, RaceNotStarted, RaceOver
from games import standings
from games.engine import VARIANTS, Position, Status, get_variant
from games.models import Deal, Game, Race, RaceEntry, RaceRating
from games.selectors.games import game_log, game_position_after, game_reach

MIN_PLAYERS = 2
MAX_PLAYERS = 8
#: A quick race starts this long after its second player joined (sooner once full).
QUICK_START_SECONDS = 20
#: The countdown of a private race started by its creator, and of a quick race once full.
COUNTDOWN_SECONDS = 5
#: Time limit of a race per variant family, from the start.
TIME_LIMIT_SECONDS = {"bristol": 300, "gallery": 600}
#: Races not finished: a player is in at most one of them.
LIVE = (Race.Status.OPEN, Race.Status.COUNTDOWN, Race.Status.RUNNING)


def race_pool(variant: str) -> QuerySet[Deal]:
    """The unused certified deals of a variant's race pool."""
    return Deal.objects.filter(kind=Deal.Kind.RACE, variant=variant, race__isnull=True)


def race_pool_sizes() -> dict[str, int]:
    """Unused race deals of every variant (0 for an empty pool), in one query."""
    pools = Deal.objects.filter(kind=Deal.Kind.RACE, race__isnull=True)
    counted = dict(pools.values_list("variant").annotate(n=Count("pk")).order_by())
    return {key: counted.get(key, 0) for key in VARIANTS}


def time_limit(variant: str) -> int:
    """Seconds a race of ``variant`` lasts from its start."""
    return TIME_LIMIT_SECONDS[get_variant(variant).family.value]


def race_by_code(code: str) -> Race:
    """The race named ``code``; ``not_found`` if none (or if ``code`` could not be one)."""
    if len(code) != Race.CODE_LENGTH or not set(code) <= set(Race.CODE_ALPHABET):
        raise NotFound(f"no race {code!r}")
    try:
        return Race.objects.select_related("creator", "rematch").get(code=code)
    except Race.DoesNotExist:
        raise NotFound(f"no race {code}") from None


def race_status(race: Race, now: datetime) -> str:
    """The race's status at ``now``: a countdown that has run out is running."""
    started = race.starts_at is not None and now >= race.starts_at
    if race.status == Race.Status.COUNTDOWN and started:
        return Race.Status.RUNNING
    return race.status


def race_overdue(race: Race, now: datetime) -> bool:
    """True when the race has reached its time limit but is not finished yet."""
    return race.status != Race.Status.FINISHED and race.ends_at is not None and now >= race.ends_at


def race_time_ms(game: Game) -> int | None:
    """A race game's time from the start to its end; None while it runs."""
    if game.finished_at is None:
        return None
    return max(0, (game.finished_at - game.started_at) // timedelta(milliseconds=1))


def standing_key(entry: RaceEntry) -> str:
    """A racer's place in the one order of standings (``games.standings``): winners by time,
    then the order of games not won that the daily board uses too."""
    game = entry.game
    if game is None:  # not dealt a game: after everyone
        return f"2{entry.pk:012d}"
    finished = game.finished_at or entry.race.ends_at or game.started_at
    won = game.status == Status.WON
    return standings.standing_key(
        won=won,
        cards_missing=get_variant(game.deal.variant).card_count - game.score,
        moves=game.ply,
        time_ms=race_time_ms(game) or 0,
        finished_ms=int(finished.timestamp() * 1000),
        game_id=game.pk,
        reach=0 if won else game_reach(game),
        by_time=True,
    )


def race_entries(race: Race) -> list[RaceEntry]:
    """The race's players in joining order, with their games."""
    return list(race.entries.select_related("player", "game__deal", "race"))


def races_open(*, variant: str | None = None) -> QuerySet[Race]:
    """Open public races that have not started, soonest start first (the lobby)."""
    races = Race.objects.filter(
        kind=Race.Kind.QUICK, status__in=(Race.Status.OPEN, Race.Status.COUNTDOWN)
    ).exclude(starts_at__lte=clock.shared_now())
    if variant is not None:
        races = races.filter(variant=get_variant(variant).key)
    return races.select_related("creator", "rematch").order_by(
        F("starts_at").asc(nulls_last=True), "created_at", "pk"
    )


def race_code_of(game: Game) -> str | None:
    """The code of the race a game is played in; None (and no query) for other games."""
    if game.deal.kind != Deal.Kind.RACE:
        return None
    return Race.objects.filter(deal_id=game.deal_id).values_list("code", flat=True).first()


def player_live_entry(user: User) -> RaceEntry | None:
    """The player's entry in a race that has not finished, if any."""
    return RaceEntry.objects.filter(player=user, live=True).select_related("race").first()


def race_replays_check(race: Race) -> None:
    """Raise ``race_not_finished`` unless a race's games may be shown move by move (its
    deal with them): once it has finished. The one rule for replays and analyses."""
    if race.status != Race.Status.FINISHED:
        raise RaceNotFinished("replays are public once the race has finished")


class RaceReplay(NamedTuple):
    """A racer's entry and game of a finished race, its log, and the position after
    ``step`` entries if asked."""

    entry: RaceEntry
    game: Game
    moves: list[str]
    step: int | None
    position: Position | None


def race_replay(*, race: Race, username: str, step: int | None) -> RaceReplay:
    """A player's game of a finished race: its log, and the position after ``step`` log
    entries; ``race_not_finished`` while it runs (the deal is still being played)."""
    race_replays_check(race)
    entry = (
        race.entries.select_related("player", "game__deal")
        .filter(player__username=username, game__isnull=False)
        .first()
    )
    if entry is None:
        raise NotFound(f"no game of {username} in race {race.code}")
    game = entry.game
    assert game is not None, "the query asked for a game"
    log = game_log(game)
    if step is None:
        return RaceReplay(entry, game, log, None, None)
    if not 0 <= step <= len(log):
        raise InvalidInput(f"step must be between 0 and {len(log)}")
    return RaceReplay(entry, game, log, step, game_position_after(game, step))


#: A family's board best first: rating (a float, nearly unique), then player id.
#: Ratings move after each rated race, so a walk over pages may meet a player twice,
#: or miss one, that raced meanwhile.
RACE_BOARD_ORDER = ("-rating", "player_id")


def race_leaderboard(*, family: str) -> QuerySet[RaceRating]:
    """The quick-race ratings of a variant family, best first (``RACE_BOARD_ORDER``): only
    ratings that some rated race changed (an account racing unrated yet has no line).
    Page it, then ``race_board_ranked``."""
    if family not in TIME_LIMIT_SECONDS:
        raise NotFound(f"no variant family {family}")
    return (
        RaceRating.objects.filter(family=family, races__gt=0)
        .select_related("player")
        .order_by(*RACE_BOARD_ORDER)
    )


def race_board_ranked(
    board: QuerySet[RaceRating], page: list[RaceRating], *, first: bool
) -> list[tuple[RaceRating, int]]:
    """A page of ``race_leaderboard`` with ranks (places, ties apart): from 1 on its first
    page, else one more than the lines above the page."""
    if not page:
        return []
    top = 1
    if not first:
        head = page[0]
        above = Q(rating__gt=head.rating) | Q(rating=head.rating, player_id__lt=head.player_id)
        top += board.filter(above).count()
    return [(rating, top + i) for i, rating in enumerate(page)]


def player_race_ratings(*, user: User) -> QuerySet[RaceRating]:
    """A player's quick-race ratings per variant family."""
    return RaceRating.objects.filter(player=user).order_by("family")


# -- the race's time, for the move command ------------------------------------------


@dataclass(frozen=True)
class RaceClock:
    """What a move of a race's game needs of its race once the race has started (fixed
    from then on): the move path holds it with the game, so the next moves check the
    race's time in their one guarded statement instead of reading the race."""

    race_id: int
    code: str
    starts_at: datetime
    ends_at: datetime
    player: User


def race_game_check(game: Game) -> RaceClock | None:
    """Called by the move command (``games.services.games``, inside its transaction)
    before the engine judges a move, undo or resignation: for a race's game, refuse it
    outside the race's time, so that no answer (not even ``illegal_move``) tells anything
    of the deal before the start; returns the race's clock, None for other games."""
    if game.deal.kind != Deal.Kind.RACE:
        return None
    entry = RaceEntry.objects.select_related("race", "player").get(game=game)
    race = entry.race
    now = clock.shared_now()
    if race.starts_at is None or now < race.starts_at:
        raise RaceNotStarted("the race has not started yet", details={"starts_at": race.starts_at})
    if race.status == Race.Status.FINISHED or (race.ends_at is not None and now >= race.ends_at):
        raise RaceOver("the race is over: its time is up")
    assert race.ends_at is not None, "a started race has its time limit"
    return RaceClock(race.pk, race.code, race.starts_at, race.ends_at, entry.player)
