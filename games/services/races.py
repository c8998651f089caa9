"""Writes of races: joining, starting, the players' moves, the end, standings and ratings.

A race is 2 to 8 players on one deal of one variant, certified winnable by the
solver. Its deal comes from a pool of unused race deals per variant that the job
``manage.py races`` keeps filled (``race_pool_fill``): the solver never runs on a
request. Every time of a race (countdown, start, time limit) is on the shared
clock (``games.clock.shared_now``), the same for every server process.

Each player plays a normal ranked game of the deal (no hints, no undo across a
stock reveal), created when the countdown begins and timed from the start; its
moves go through ``games.services.games.game_apply_move`` like every other move,
which calls ``games.selectors.races.race_game_check`` for a race's game before the
engine judges a move: that refuses a move before the start or after the time limit.
Once a game has moved after the start, the process holds the race's fixed times with
it (``RaceClock``), and the next moves check them in their guarded ``UPDATE`` on the
shared clock; any miss falls back to the locked path and ``race_game_check``. Each
move emits one ``GameMoved`` with the player's progress, to the race's group, which
the race's sockets (the progress) and the game's sockets (the state) both read; this
module subscribes to it (``race_game_moved``): the last game to end finishes the race.

The start and the time limit need no job to be seen: the race's and its games'
sockets wake at ``starts_at`` and ``ends_at`` themselves (``api.consumers``), and a
read of the race shows it running from the start (``race_status``) and finishes it
once overdue (``race_settle``). ``races_tick`` (the job) still stores both.

A race finishes (``race_finish``, idempotent) when every game has ended or at its
time limit: the last game to end finishes it, and so does the job (and any read
of the race) once it is overdue. Quick races with two players or more then update
the players' openskill ratings (Plackett-Luce) of the variant family.
"""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet
from openskill.models import PlackettLuce

from games import clock, events, jobs
from games.engine import SEED_LIMIT, VARIANTS, Status, get_variant, new_position
from games.engine.solver import Verdict, solve
from games.errors import (
    AlreadyRacing,
    NoCertifiedDeal,
    NotFound,
    NotRaceCreator,
    RaceFull,
    RaceLimit,
    RaceNotFinished,
    RacePoolEmpty,
    RaceStarted,
    TooFewPlayers,
)
from games.event_types import GameMoved
from games.models import EXPIRED, Deal, Game, Race, RaceEntry, RaceRating
from games.selectors import races as race_selectors
from games.selectors.races import (
    COUNTDOWN_SECONDS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    QUICK_START_SECONDS,
)
from games.services import games as game_services
from games.services.caps import cap_take

logger = logging.getLogger(__name__)

_MODEL = PlackettLuce()


# -- the pool of certified deals ----------------------------------------------------------


def _pool(variant: str) -> QuerySet[Deal]:
    return race_selectors.race_pool(variant)


def _certified_seed(variant: str) -> tuple[int, list[str] | None, int | None]:
    """A random seed the solver proves winnable within ``RACE_SOLVER_NODES`` nodes."""
    limit = settings.RACE_SOLVER_NODES
    for _ in range(settings.DAILY_MAX_CANDIDATES):
        seed = secrets.randbelow(SEED_LIMIT)
        if not limit:
            return seed, None, None
        result = solve(new_position(variant, seed=seed), max_nodes=limit)
        if result.verdict is Verdict.WON:
            return seed, list(result.line), result.nodes
    raise NoCertifiedDeal(f"no winnable {variant} deal found for the race pool")


#: Namespace of this service's PostgreSQL advisory locks (the first of their two keys).
LOCK_SPACE = 3232
#: The second key of the lock that lets one process of the cluster fill the pool.
POOL_FILL_LOCK = 0


def _lock_key(variant: str) -> int:
    """The second advisory-lock key of a variant's quick joins (a positive int4)."""
    return zlib.crc32(variant.encode()) & 0x7FFFFFFF


@contextmanager
def _pool_fill_lock() -> Iterator[bool]:
    """Hold the cluster-wide lock of filling the pool, without waiting; yields whether it
    was got. Several server processes start the job when the pool runs low: only one of
    them deals, the others see the lock taken and stop (that is what kept a burst of
    joins from dealing the pool three times over).

    PostgreSQL: a session advisory lock, released at the end (and by PostgreSQL if the
    process dies). SQLite (development, one machine): an exclusive ``flock`` on a file in
    the temporary directory named after the database, which the system releases with the
    process too; it does not span machines, which SQLite does not either. An in-memory
    database (tests) is one process's own, and so is its lock file.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_SPACE, POOL_FILL_LOCK])
            got = bool(cursor.fetchone()[0])
            try:
                yield got
            finally:
                if got:
                    cursor.execute(
                        "SELECT pg_advisory_unlock(%s, %s)", [LOCK_SPACE, POOL_FILL_LOCK]
                    )
        return
    name = str(connection.settings_dict["NAME"])
    if connection.is_in_memory_db():  # type: ignore[attr-defined]  # SQLite's own method
        name += f":{os.getpid()}"  # a database of this process alone (tests)
    path = Path(tempfile.gettempdir()) / f"patience-race-pool-{zlib.crc32(name.encode())}.lock"
    with path.open("a") as file:
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


def race_pool_fill(*, variants: list[str] | None = None, most: int | None = None) -> int:
    """Deal certified race deals until each variant has ``RACE_POOL_SIZE`` unused ones, at
    most ``most`` in all; returns how many were dealt (0 when another process is at it).

    Runs the solver: only the job ``manage.py races`` (and tests) call it, never a request.
    Once per cluster (``_pool_fill_lock``), and it counts the pool again before each deal,
    so it never deals past the target.
    """
    made = 0
    with _pool_fill_lock() as got:
        if not got:
            return 0
        for key in variants or list(VARIANTS):
            while _pool(key).count() < settings.RACE_POOL_SIZE:
                if most is not None and made >= most:
                    return made
                seed, line, nodes = _certified_seed(key)
                Deal.objects.create(
                    kind=Deal.Kind.RACE, variant=key, seed=seed, par_line=line, solver_nodes=nodes
                )
                made += 1
    return made


def _pool_deal(variant: str) -> Deal:
    """Take an unused certified deal of the pool (inside the caller's transaction); start
    the job when the pool runs low, ``race_pool_empty`` when it is empty."""
    deal = _pool(variant).select_for_update(of=("self",), skip_locked=True).order_by("pk").first()
    if deal is None or _pool(variant).count() <= settings.RACE_POOL_SIZE // 2:
        jobs.race_pool_job_start()
    if deal is None:
        raise RacePoolEmpty(
            f"no {variant} race deal is ready: they are being dealt, try again in a moment",
            details={"retry_after": 5},
        )
    return deal


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
        deal=_pool_deal(variant),
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
    events.race_changed(code=race.code, starts_at=race.starts_at, ends_at=race.ends_at)


def _locked(code: str) -> Race:
    try:
        return Race.objects.select_for_update(of=("self",)).select_related("deal").get(code=code)
    except Race.DoesNotExist:
        raise NotFound(f"no race {code}") from None


def _joinable(race: Race, now: datetime) -> bool:
    return race.status in (Race.Status.OPEN, Race.Status.COUNTDOWN) and (
        race.starts_at is None or now < race.starts_at
    )


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
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_SPACE, _lock_key(variant)])


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
    events.race_changed(code=race.code, starts_at=race.starts_at, ends_at=race.ends_at)
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
    events.race_changed(code=race.code, starts_at=race.starts_at, ends_at=race.ends_at)
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
    events.race_changed(code=race.code, starts_at=race.starts_at, ends_at=race.ends_at)
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
    """Subscribed to ``GameMoved`` (``games.apps``; inside the move's transaction): the
    last game of a race to end finishes the race, after commit."""
    if event.race is None or event.game.status == Status.PLAYING:
        return
    race_id = event.race.race_id
    # robust: the move stands whatever happens here; a later read or the job finishes it.
    transaction.on_commit(lambda: race_finish(race_id=race_id), robust=True)


def _expire(race: Race) -> None:
    """End the games still playing at the time limit (expired, with the cards home)."""
    playing = Game.objects.filter(race_entry__race=race, status=Status.PLAYING)
    for game in playing.select_for_update(of=("self",)).select_related("deal"):
        game.status = EXPIRED
        game.finished_at = race.ends_at
        game.save(update_fields=["status", "finished_at"])
        game_services.game_announce(game)


# -- ratings: only a real race between established accounts moves them ----------------------

#: A player raced (``_contested``) with at least this many moves on the board ...
CONTESTED_MIN_MOVES = 10
#: ... over at least this long from the start (a win counts anyway; a lost game does not).
CONTESTED_MIN_SECONDS = 30
#: An account's quick races are unrated until it has raced this many of them (in a family).
RATED_AFTER_RACES = 5
#: Rated races between the same two accounts within this window count less ...
REPEAT_WINDOW = timedelta(hours=24)
#: ... and from this many earlier meetings on, not at all.
REPEAT_LIMIT = 3


def _contested(race: Race, entry: RaceEntry) -> bool:
    """Whether a player really raced: won, or made ``CONTESTED_MIN_MOVES`` moves over
    ``CONTESTED_MIN_SECONDS`` or more, lost (blocked), resigned or still playing.

    Why: a farm of spare accounts that join and resign at once (or sit out the time
    limit) does nothing a rating should measure. Moves alone are cheap for a script, so
    time counts too. A win is play however short; a lost game is not: a player can
    block their own deal on purpose within seconds (deal the stock, then look for a
    dead end among the cards it showed, ``devtools.blocking``).
    """
    game = entry.game
    if game is None:
        return False
    if game.status == Status.WON:
        return True
    finished = game.finished_at or race.ends_at
    assert finished is not None, "a finished race's games have ended"
    played = finished - game.started_at
    return int(game.position.get("ply", 0)) >= CONTESTED_MIN_MOVES and played >= timedelta(
        seconds=CONTESTED_MIN_SECONDS
    )


def _repeat_weight(player_id: int, others: list[int], since: datetime) -> float:
    """How much this race counts for a player: the mean over the rated opponents of
    ``1 - n / REPEAT_LIMIT``, where ``n`` counts the rated races they shared since ``since``.

    Why: one person with a few spare accounts can only meet the same few opponents;
    real players meet many. A repeated pairing counts less each time and, from the
    ``REPEAT_LIMIT``-th meeting in ``REPEAT_WINDOW``, not at all, so farming a rating
    off the same accounts stops paying after a few races a day.
    """
    if not others:
        return 0.0
    mine = RaceEntry.objects.filter(
        player_id=player_id, contested=True, race__rated=True, race__finished_at__gte=since
    ).values("race_id")
    met = RaceEntry.objects.filter(race_id__in=mine, player_id__in=others, contested=True)
    counts: dict[int, int] = {}
    for other in met.values_list("player_id", flat=True):
        counts[other] = counts.get(other, 0) + 1
    return sum(max(0.0, 1 - counts.get(o, 0) / REPEAT_LIMIT) for o in others) / len(others)


def _ratings_of(race: Race, entries: list[RaceEntry]) -> dict[int, RaceRating]:
    family = get_variant(race.variant).family.value
    ratings = {}
    for entry in sorted(entries, key=lambda e: e.player_id):  # lock order: no deadlocks
        rating, _ = RaceRating.objects.select_for_update().get_or_create(
            player_id=entry.player_id,
            family=family,
            defaults={"mu": _MODEL.mu, "sigma": _MODEL.sigma, "rating": 0.0},
        )
        ratings[entry.player_id] = rating
    return ratings


def _rate(ratings: list[RaceRating], places: list[int]) -> list[tuple[float, float]]:
    """openskill Plackett-Luce: each player's new ``(mu, sigma)`` for these places."""
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    rated = _MODEL.rate(teams, ranks=[float(p) for p in places])
    return [(new.mu, new.sigma) for [new] in rated]


def _rating_apply(entry: RaceEntry, rating: RaceRating, new: tuple[float, float], w: float) -> None:
    """Move a rating ``w`` of the way to ``new`` and note the change on the entry."""
    mu_change, sigma_change = w * (new[0] - rating.mu), w * (new[1] - rating.sigma)
    entry.rating_before = rating.rating
    rating.mu += mu_change
    rating.sigma += sigma_change
    rating.rating = _MODEL.rating(mu=rating.mu, sigma=rating.sigma).ordinal()
    rating.races += 1
    entry.rating_after = rating.rating
    entry.mu_change, entry.sigma_change = mu_change, sigma_change


def _ratings_update(race: Race, entries: list[RaceEntry]) -> None:
    """Rate a quick race's players by their places (openskill Plackett-Luce), under the
    fair-play rules (docs/fair-play.md):

    - only players who raced (``_contested``) from accounts past their first
      ``RATED_AFTER_RACES`` raced races are rated against each other: a fresh spare
      account is worth nothing to beat, and a new account cannot farm its way up fast;
    - a race with fewer than two of them is void for everyone (``uncontested`` or
      ``provisional``): all resigning at once is no race;
    - an established player who did not race takes the loss of a last place, but nobody
      gains from them: quitting protects no rating and feeds none;
    - repeated pairings count less (``_repeat_weight``).
    """
    contested = {e.pk: _contested(race, e) for e in entries}
    ratings = _ratings_of(race, entries)
    established = {p: r.contested >= RATED_AFTER_RACES for p, r in ratings.items()}
    for entry in entries:
        entry.contested = contested[entry.pk]
        if entry.contested:
            ratings[entry.player_id].contested += 1
    rated = [e for e in entries if e.contested and established[e.player_id]]
    quitters = [e for e in entries if not e.contested and established[e.player_id]]
    if len(rated) < MIN_PLAYERS:
        race.unrated = (
            Race.Unrated.UNCONTESTED
            if sum(contested.values()) < MIN_PLAYERS
            else Race.Unrated.PROVISIONAL
        )
    else:
        race.rated = True
        since = clock.shared_now() - REPEAT_WINDOW
        ids = [e.player_id for e in rated]
        weights = {p: _repeat_weight(p, [o for o in ids if o != p], since) for p in ids}
        for q in quitters:
            weights[q.player_id] = _repeat_weight(q.player_id, ids, since)
        field = [ratings[p] for p in ids]
        places = [e.place or 0 for e in rated]
        new = dict(zip(ids, _rate(field, places), strict=True))
        for q in quitters:  # each alone against the field, placed last
            last = len(entries) + 1
            new[q.player_id] = _rate([*field, ratings[q.player_id]], [*places, last])[-1]
        for entry in rated + quitters:
            p = entry.player_id
            _rating_apply(entry, ratings[p], new[p], weights[p])
    noted = ["contested", "rating_before", "rating_after", "mu_change", "sigma_change"]
    for entry in entries:
        entry.save(update_fields=noted)
    for rating in ratings.values():
        rating.save(update_fields=["mu", "sigma", "rating", "races", "contested"])
    race.save(update_fields=["rated", "unrated"])


@transaction.atomic
def race_rating_void(*, race_id: int) -> Race:
    """Undo what a rated race changed of its players' ratings (an admin found it unfair):
    each rating moves back by the race's own change, later races' changes stay. Idempotent.
    """
    race = Race.objects.select_for_update(of=("self",)).get(pk=race_id)
    if not race.rated:
        return race
    family = get_variant(race.variant).family.value
    entries = race.entries.filter(mu_change__isnull=False).order_by("player_id")
    for entry in entries:
        rating = RaceRating.objects.select_for_update().get(
            player_id=entry.player_id, family=family
        )
        rating.mu -= entry.mu_change or 0.0
        rating.sigma -= entry.sigma_change or 0.0
        rating.rating = _MODEL.rating(mu=rating.mu, sigma=rating.sigma).ordinal()
        rating.races = max(0, rating.races - 1)
        rating.save(update_fields=["mu", "sigma", "rating", "races"])
    entries.update(mu_change=None, sigma_change=None, rating_before=None, rating_after=None)
    race.rated, race.unrated = False, Race.Unrated.VOIDED
    race.save(update_fields=["rated", "unrated"])
    events.race_changed(code=race.code, starts_at=race.starts_at, ends_at=race.ends_at)
    return race


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
        _expire(race)
    elif Game.objects.filter(race_entry__race=race, status=Status.PLAYING).exists():
        return race
    entries = sorted(race_selectors.race_entries(race), key=race_selectors.standing_key)
    for place, entry in enumerate(entries, start=1):
        entry.place, entry.live = place, False
        entry.save(update_fields=["place", "live"])
    race.status, race.finished_at = Race.Status.FINISHED, now
    race.save(update_fields=["status", "finished_at"])
    if race.kind == Race.Kind.QUICK and len(entries) >= MIN_PLAYERS:
        _ratings_update(race, entries)
    else:
        private = race.kind == Race.Kind.PRIVATE
        race.unrated = Race.Unrated.PRIVATE if private else Race.Unrated.UNCONTESTED
        race.save(update_fields=["unrated"])
    events.race_changed(code=race.code, starts_at=race.starts_at, ends_at=race.ends_at)
    return race


def race_settle(*, code: str) -> Race:
    """A race to show: one past its time limit is finished first."""
    race = race_selectors.race_by_code(code)
    if race_selectors.race_overdue(race, clock.shared_now()):
        race_finish(race_id=race.pk)
        race = race_selectors.race_by_code(code)
    return race


def races_tick() -> tuple[int, int]:
    """The job's beat: mark races whose countdown ran out as running and finish overdue
    ones; returns ``(started, finished)``."""
    now = clock.shared_now()
    started = 0
    counted_down = Race.objects.filter(status=Race.Status.COUNTDOWN, starts_at__lte=now)
    for code, starts_at, ends_at in counted_down.values_list("code", "starts_at", "ends_at"):
        with transaction.atomic():
            started += Race.objects.filter(code=code, status=Race.Status.COUNTDOWN).update(
                status=Race.Status.RUNNING
            )
            events.race_changed(code=code, starts_at=starts_at, ends_at=ends_at)
    finished = 0
    due = Race.objects.filter(
        status__in=(Race.Status.COUNTDOWN, Race.Status.RUNNING), ends_at__lte=now
    ).values_list("pk", flat=True)
    for race_id in list(due):
        finished += race_finish(race_id=race_id).status == Race.Status.FINISHED
    return started, finished
