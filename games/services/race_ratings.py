"""Race ratings: only a real race between established accounts moves them.

Quick races with two players or more update the players' openskill ratings
(Plackett-Luce) of the variant family when the race finishes (``ratings_update``);
an admin may void a rated race (``race_rating_void``). docs/fair-play.md says what
counts as having raced, when an account is established, and what repeated meetings
weigh.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from openskill.models import PlackettLuce

from core import clock
from games import events
from games.engine import Status, get_variant
from games.models import Race, RaceEntry, RaceRating
from games.selectors.games import game_position
from games.selectors.races import (
    MIN_PLAYERS,
)

_MODEL = PlackettLuce()


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
    return game_position(game).ply >= CONTESTED_MIN_MOVES and played >= timedelta(
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


def ratings_update(race: Race, entries: list[RaceEntry]) -> None:
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
        _ratings_move(rated, quitters, ratings, last=len(entries) + 1)
    noted = ["contested", "rating_before", "rating_after", "mu_change", "sigma_change"]
    for entry in entries:
        entry.save(update_fields=noted)
    for rating in ratings.values():
        rating.save(update_fields=["mu", "sigma", "rating", "races", "contested"])
    race.save(update_fields=["rated", "unrated"])


def _ratings_move(
    rated: list[RaceEntry], quitters: list[RaceEntry], ratings: dict[int, RaceRating], last: int
) -> None:
    """Move the ratings of a rated race's field by their places, and each quitter's as if
    placed ``last`` alone against the field; repeated pairings weigh less."""
    since = clock.shared_now() - REPEAT_WINDOW
    ids = [e.player_id for e in rated]
    weights = {p: _repeat_weight(p, [o for o in ids if o != p], since) for p in ids}
    for q in quitters:
        weights[q.player_id] = _repeat_weight(q.player_id, ids, since)
    field = [ratings[p] for p in ids]
    places = [e.place or 0 for e in rated]
    new = dict(zip(ids, _rate(field, places), strict=True))
    for q in quitters:  # each alone against the field, placed last
        new[q.player_id] = _rate([*field, ratings[q.player_id]], [*places, last])[-1]
    for entry in rated + quitters:
        p = entry.player_id
        _rating_apply(entry, ratings[p], new[p], weights[p])


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
    events.race_changed(code=race.code)
    return race
