"""Writes of races: joining, starting, the players' moves and the end, standings.

A race is 2 to 8 players on one deal of one variant, certified winnable by the solver,
taken from the pool of unused race deals (``games.services.race_pool``). Every time of
a race (countdown, start, time limit) is on the shared clock (``core.clock.shared_now``),
the same for every server process.

Each player plays a normal ranked game of the deal (no hints, no undo across a stock
reveal), created when the countdown begins and timed from the start; its moves go
through ``games.play.move.apply_move`` like every other move, which refuses a move
before the start or after the time limit (``games.selectors.races.race_game_check``,
then the bounds of its guarded write). Each move emits one ``GameMoved`` with the
player's progress to the race's group; the race follows it (``race_game_moved``): the
last game to end finishes the race.

A race finishes (``race_finish``, idempotent) when every game has ended or at its time
limit: the last game to end finishes it, and so do the race's sockets at its limit and
the job (``races_tick``). A read never does: it shows an overdue race finished
(``games.selectors.race_state``). Quick races then update the players' ratings
(``games.services.race_ratings``).
"""

from __future__ import annotations

import logging
import secrets
import zlib
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction

from core import clock
from core.errors import (
    AlreadyRacing,
    NotFound,
    NotRaceCreator,
    RaceFull,
    RaceLimit,
    RaceNotFinished,
    RaceStarted,
    TooFewPlayers,
)
from games import events
from games.engine import Status, get_variant
from games.event_types import GameMoved
from games.models import Game, Race, RaceEntry
from games.play import finish
from games.selectors import races as race_selectors
from games.selectors.races import (
    COUNTDOWN_SECONDS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    QUICK_START_SECONDS,
)
from games.services import games as game_services
from games.services import race_pool, race_ratings
from games.services.caps import cap_take

logger = logging.getLogger(__name__)

# -- joining and starting -----------------------------------------------------------------


def _new_code() -> str:
    return "".join(secrets.choice(Race.CODE_ALPHABET) for _ in range(Race.CODE_LENGTH))


def _not_racing(user: User) -> None:
    if RaceEntry.objects.filter(player=user, live=True).exists():
        raise AlreadyRacing("you are in another race that has not finished")


def _entry_add(race: Race, user: User, now: datetime) -> RaceEntry:
    _not_racing(user)
    try:
        with transaction.atomic():
            return RaceEntry.objects.create(race=race, player=user, joined_at=now)
    except IntegrityError:  # a concurrent join of this player won
        raise AlreadyRacing("you are in another race that has not finished") from None


#: Private races (rematches included) an account may open in an hour.
PRIVATE_RACES_PER_HOUR = 12


def _private_allowed(user: User) -> None:
    """Refuse a private race beyond ``PRIVATE_RACES_PER_HOUR`` an hour (``race_limit``).

    Why: each takes a certified deal from the pool until it starts or is left; one account
    opening and leaving them by the dozen made everyone wait for the solver. Its deal goes
    back to the pool when nobody raced it (``race_leave``); this bounds the churn left.
    The count holds under bursts (``games.services.caps``).
    """
    key, hour = f"private-races:{user.pk}", timedelta(hours=1)
    wait = cap_take(key=key, limit=PRIVATE_RACES_PER_HOUR, window=hour)
    if wait is not None:
        raise RaceLimit(
            f"you opened {PRIVATE_RACES_PER_HOUR} private races within the hour: join one, or wait",
            details={"retry_after": max(1, int(wait) + 1)},
        )


def _race_new(*, user: User, variant: str, kind: str, now: datetime) -> Race:
    _not_racing(user)
    if kind == Race.Kind.PRIVATE:
        _private_allowed(user)
    race = Race.objects.create(
        code=_new_code(),
        variant=variant,
        deal=race_pool.race_pool_deal(variant),
        kind=kind,
        creator=user,
        opener=user,
        created_at=now,
    )
    _entry_add(race, user, now)
    return race


def _games_deal(race: Race) -> None:
    """Give every player of a race in countdown their game of the deal, timed from the
    start (also after the start moved nearer)."""
    starts_at, deal = race.starts_at, race.deal
    assert starts_at is not None and deal is not None, "a race in countdown has its start"
    Game.objects.filter(race_entry__race=race).update(started_at=starts_at)
    for entry in race.entries.filter(game__isnull=True).select_related("player"):
        game = game_services.game_create(user=entry.player, deal=deal, ranked=True)
        game.started_at = starts_at
        game.save(update_fields=["started_at"])
        entry.game = game
        entry.save(update_fields=["game"])


def _countdown(race: Race, starts_at: datetime) -> None:
    race.status = Race.Status.COUNTDOWN
    race.starts_at = starts_at
    race.ends_at = starts_at + timedelta(seconds=race_selectors.time_limit(race.variant))
    race.save(update_fields=["status", "starts_at", "ends_at"])
    _games_deal(race)


def _joined(race: Race, now: datetime) -> None:
    """After a player joined: a quick race counts down once two are in (and shortens the
    countdown once full); a race counting down deals the newcomer's game."""
    players = race.entries.count()
    if race.kind == Race.Kind.QUICK and race.status == Race.Status.OPEN and players >= MIN_PLAYERS:
        _countdown(race, now + timedelta(seconds=QUICK_START_SECONDS))
    if race.status == Race.Status.COUNTDOWN and race.starts_at is not None:
        soon = now + timedelta(seconds=COUNTDOWN_SECONDS)
        if players >= MAX_PLAYERS and race.starts_at > soon:
            _countdown(race, soon)
        else:
            _games_deal(race)
    events.race_changed(code=race.code)


def _locked(code: str) -> Race:
    try:
        return Race.objects.select_for_update(of=("self",)).select_related("deal").get(code=code)
    except Race.DoesNotExist:
        raise NotFound(f"no race {code}") from None


def _joinable(race: Race, now: datetime) -> bool:
    return race.status in (Race.Status.OPEN, Race.Status.COUNTDOWN) and (
        race.starts_at is None or now < race.starts_at
    )


def _lock_key(variant: str) -> int:
    """The second advisory-lock key of a variant's quick joins (a positive int4)."""
    return zlib.crc32(variant.encode()) & 0x7FFFFFFF


def _quick_joins_one_at_a_time(variant: str) -> None:
    """Serialize the quick joins of a variant until the caller's transaction ends.

    Why: joins that arrive together each saw no open race (none had committed its new
    one) and each opened a race, so a burst of 17 players got 7 races. Under this lock
    each join sees the ones before it and fills the soonest race up to ``MAX_PLAYERS``.
    It is a PostgreSQL transaction advisory lock (a join holds it for milliseconds);
    SQLite serializes every write already.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            lock = [race_pool.LOCK_SPACE, _lock_key(variant)]
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", lock)


@transaction.atomic
def race_quick_join(*, user: User, variant: str) -> tuple[Race, bool]:
    """Join the open public race of a variant that starts soonest, or open one; returns
    ``(race, created)``."""
    key = get_variant(variant).key
    _not_racing(user)
    _quick_joins_one_at_a_time(key)
    now = clock.shared_now()
    candidates = race_selectors.races_open(variant=key).values_list("code", flat=True)[:20]
    for code in list(candidates):
        race = _locked(code)  # then check again: another join may have filled or started it
        if _joinable(race, now) and race.entries.count() < MAX_PLAYERS:
            _entry_add(race, user, now)
            _joined(race, now)
            return race, False
    race = _race_new(user=user, variant=key, kind=Race.Kind.QUICK, now=now)
    events.race_changed(code=race.code)
    return race, True


@transaction.atomic
def race_create(*, user: User, variant: str) -> Race:
    """Create a private race of a variant with its creator in it; others join by its link."""
    key = get_variant(variant).key
    return _race_new(user=user, variant=key, kind=Race.Kind.PRIVATE, now=clock.shared_now())


@transaction.atomic
def race_join(*, user: User, code: str) -> Race:
    """Join a race before its start (joining again changes nothing)."""
    race = _locked(code)
    if race.entries.filter(player=user).exists():
        return race
    now = clock.shared_now()
    if not _joinable(race, now):
        raise RaceStarted(f"race {code} has started: nobody joins it any more")
    if race.entries.count() >= MAX_PLAYERS:
        raise RaceFull(f"race {code} has {MAX_PLAYERS} players already")
    _entry_add(race, user, now)
    _joined(race, now)
    return race


@transaction.atomic
def race_leave(*, user: User, code: str) -> Race:
    """Leave a race before its start. A quick race left with one player waits for another;
    a private race's creator hands it on; a race left by everyone is over."""
    race = _locked(code)
    entry = race.entries.filter(player=user).select_related("game").first()
    if entry is None:
        raise NotFound(f"you are not in race {code}")
    now = clock.shared_now()
    if not _joinable(race, now):
        raise RaceStarted(f"race {code} has started: play it out or resign your game")
    if entry.game is not None:
        entry.game.delete()
    entry.delete()
    left = list(race.entries.order_by("joined_at", "pk"))
    if not left:
        # Nobody raced it and no game of it is left: its deal goes back to the pool.
        race.status, race.finished_at, race.deal = Race.Status.FINISHED, now, None
    elif race.status == Race.Status.COUNTDOWN and len(left) < MIN_PLAYERS:
        Game.objects.filter(race_entry__race=race).delete()
        race.status, race.starts_at, race.ends_at = Race.Status.OPEN, None, None
    if left and race.creator_id == user.pk:
        race.creator_id = left[0].player_id
    race.save(update_fields=["status", "starts_at", "ends_at", "finished_at", "creator", "deal"])
    events.race_changed(code=race.code)
    return race


@transaction.atomic
def race_start(*, user: User, code: str) -> Race:
    """The creator starts a private race: a countdown of ``COUNTDOWN_SECONDS``."""
    race = _locked(code)
    if race.kind != Race.Kind.PRIVATE:
        raise NotRaceCreator("a quick race starts by itself once two players are in")
    if race.creator_id != user.pk:
        raise NotRaceCreator("only the race's creator starts it")
    if race.status != Race.Status.OPEN:
        raise RaceStarted(f"race {code} is {race.status} already")
    if race.entries.count() < MIN_PLAYERS:
        raise TooFewPlayers(f"a race starts with at least {MIN_PLAYERS} players")
    _countdown(race, clock.shared_now() + timedelta(seconds=COUNTDOWN_SECONDS))
    events.race_changed(code=race.code)
    return race


@transaction.atomic
def race_rematch(*, user: User, code: str) -> tuple[Race, bool]:
    """Offer a finished race's players a new private race on a new deal; returns
    ``(race, created)``. The first to ask creates it (and is its creator), the others
    asking join it."""
    race = _locked(code)
    if not race.entries.filter(player=user).exists():
        raise NotFound(f"you were not in race {code}")
    if race.status != Race.Status.FINISHED:
        raise RaceNotFinished(f"race {code} has not finished")
    if race.rematch is not None:
        return race_join(user=user, code=race.rematch.code), False
    rematch = _race_new(
        user=user, variant=race.variant, kind=Race.Kind.PRIVATE, now=clock.shared_now()
    )
    race.rematch = rematch
    race.save(update_fields=["rematch"])
    events.race_rematch(code=race.code, rematch=rematch.code)
    return rematch, True


# -- the players' moves and the end ---------------------------------------------------------


def race_game_moved(event: GameMoved) -> None:
    """Follows ``GameMoved`` (``games.apps``; inside the change's transaction): the last
    game of a race to end finishes the race, after commit."""
    race_id = event.race_id
    if race_id is None or event.state.status == Status.PLAYING:
        return
    # robust: the move stands whatever happens here; the race's sockets or the job finish it.
    transaction.on_commit(lambda: race_finish(race_id=race_id), robust=True)


@transaction.atomic
def race_finish(*, race_id: int) -> Race:
    """Finish a race whose games have all ended, or that reached its time limit (the
    games still playing end as expired); else change nothing. Idempotent.

    Stores the places (``standing_key``), frees the players for their next race and,
    for a quick race, updates their ratings.
    """
    race = Race.objects.select_for_update(of=("self",)).get(pk=race_id)
    if race.status == Race.Status.FINISHED or race.starts_at is None:
        return race
    now = clock.shared_now()
    if race_selectors.race_overdue(race, now):
        finish.race_games_expire(race)
    elif Game.objects.filter(race_entry__race=race, status=Status.PLAYING).exists():
        return race
    entries = sorted(race_selectors.race_entries(race), key=race_selectors.standing_key)
    for place, entry in enumerate(entries, start=1):
        entry.place, entry.live = place, False
        entry.save(update_fields=["place", "live"])
    race.status, race.finished_at = Race.Status.FINISHED, now
    race.save(update_fields=["status", "finished_at"])
    if race.kind == Race.Kind.QUICK and len(entries) >= MIN_PLAYERS:
        race_ratings.ratings_update(race, entries)
    else:
        private = race.kind == Race.Kind.PRIVATE
        race.unrated = Race.Unrated.PRIVATE if private else Race.Unrated.UNCONTESTED
        race.save(update_fields=["unrated"])
    events.race_changed(code=race.code)
    return race


def races_tick() -> tuple[int, int]:
    """The job's beat: mark races whose countdown ran out as running and finish overdue
    ones; returns ``(started, finished)``."""
    now = clock.shared_now()
    started = 0
    counted_down = Race.objects.filter(status=Race.Status.COUNTDOWN, starts_at__lte=now)
    for code in counted_down.values_list("code", flat=True):
        with transaction.atomic():
            started += Race.objects.filter(code=code, status=Race.Status.COUNTDOWN).update(
                status=Race.Status.RUNNING
            )
            events.race_changed(code=code)
    finished = 0
    due = Race.objects.filter(
        status__in=(Race.Status.COUNTDOWN, Race.Status.RUNNING), ends_at__lte=now
    ).values_list("pk", flat=True)
    for race_id in list(due):
        finished += race_finish(race_id=race_id).status == Race.Status.FINISHED
    return started, finished
