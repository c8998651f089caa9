"""Reads of races: the public view of a race, its players' progress, standings, replays,
the lobby and the rating boards.

A race view carries counts only (cards home, moves, status, times): never a card of
any player's game, so it may go to every player and spectator while the race runs.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db.models import F, QuerySet

from games import clock
from games.engine import Status, deck_order, get_variant
from games.errors import InvalidInput, NotFound, RaceNotFinished
from games.models import EXPIRED, Game, Race, RaceEntry, RaceRating
from games.selectors.games import game_log, game_position_after

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


def time_limit(variant: str) -> int:
    """Seconds a race of ``variant`` lasts from its start."""
    return TIME_LIMIT_SECONDS[get_variant(variant).family.value]


def race_by_code(code: str) -> Race:
    """The race named ``code``; ``not_found`` if none."""
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


def _time_ms(game: Game) -> int | None:
    if game.finished_at is None:
        return None
    return max(0, (game.finished_at - game.started_at) // timedelta(milliseconds=1))


def progress(*, username: str, game: Game | None, started: bool) -> dict[str, Any]:
    """A player's progress: counts and times of their game, never its cards."""
    if game is None or not started:
        return {
            "username": username,
            "status": "waiting",
            "cards_home": 0,
            "moves": 0,
            "finished_at": None,
            "time_ms": None,
        }
    status = game.status
    if status not in (Status.PLAYING, Status.WON, Status.RESIGNED, EXPIRED):
        status = Status.LOST.value  # lost, or ended by the move limit
    return {
        "username": username,
        "status": str(status),
        "cards_home": game.score,
        "moves": game.ply,
        "finished_at": game.finished_at,
        "time_ms": _time_ms(game),
    }


def standing_key(entry: RaceEntry) -> tuple[Any, ...]:
    """Standings order: winners first by time, then more cards home, fewer moves, the
    earlier finish (and the earlier join, so the order is total)."""
    game = entry.game
    if game is None:
        return (2, 0, 0, 0, entry.joined_at, entry.joined_at, entry.pk)
    won = game.status == Status.WON
    finished = game.finished_at or datetime.max.replace(tzinfo=entry.joined_at.tzinfo)
    return (
        0 if won else 1,
        (_time_ms(game) or 0) if won else 0,
        -game.score,
        game.ply,
        finished,
        entry.joined_at,
        entry.pk,
    )


def race_entries(race: Race) -> list[RaceEntry]:
    """The race's players in joining order, with their games."""
    return list(race.entries.select_related("player", "game"))


def race_view(race: Race, viewer: AbstractBaseUser | AnonymousUser | None) -> dict[str, Any]:
    """A race as every client sees it (``you`` is the viewer's own game, if they race)."""
    now = clock.shared_now()
    status = race_status(race, now)
    started = status in (Race.Status.RUNNING, Race.Status.FINISHED)
    entries = race_entries(race)
    players = [
        progress(username=e.player.get_username(), game=e.game, started=started) for e in entries
    ]
    you = None
    for e in entries:
        if viewer is not None and viewer.is_authenticated and e.player_id == viewer.pk:
            you = {"game": e.game_id}
    standings = None
    if race.status == Race.Status.FINISHED:
        ranked = sorted(zip(entries, players, strict=True), key=lambda pair: pair[0].place or 0)
        standings = [
            {
                **p,
                "place": e.place,
                "rating": None
                if e.rating_after is None
                else {
                    "before": round(e.rating_before or 0.0, 2),
                    "after": round(e.rating_after, 2),
                },
            }
            for e, p in ranked
        ]
    return {
        "code": race.code,
        "variant": race.variant,
        "kind": race.kind,
        "status": status,
        "creator": race.creator.get_username(),
        "max_players": MAX_PLAYERS,
        "min_players": MIN_PLAYERS,
        "time_limit_seconds": time_limit(race.variant),
        "starts_at": race.starts_at,
        "ends_at": race.ends_at,
        "server_time": now,
        "rematch": race.rematch.code if race.rematch is not None else None,
        "players": players,
        "you": you,
        "standings": standings,
    }


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


def player_live_entry(user: User) -> RaceEntry | None:
    """The player's entry in a race that has not finished, if any."""
    return RaceEntry.objects.filter(player=user, live=True).select_related("race").first()


def race_replay(*, race: Race, username: str, step: int | None) -> dict[str, Any]:
    """A player's game of a finished race: its log, the deal, and the position after
    ``step`` log entries."""
    if race.status != Race.Status.FINISHED:
        raise RaceNotFinished("replays are public once the race has finished")
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
    data: dict[str, Any] = {
        "player": entry.player.get_username(),
        "won": game.status == Status.WON,
        "cards_home": game.score,
        "moves": log,
        "steps": len(log),
        "deal": {
            "seed": str(game.deal.seed),
            "deck": deck_order(race.variant, int(game.deal.seed)),
        },
        "step": None,
        "position": None,
    }
    if step is not None:
        if not 0 <= step <= len(log):
            raise InvalidInput(f"step must be between 0 and {len(log)}")
        pos = game_position_after(game, step)
        data["step"] = step
        data["position"] = {**pos.to_json(), "status": pos.status.value, "score": pos.score}
    return data


def rating_line(rating: RaceRating) -> dict[str, Any]:
    """One rating as boards and player pages show it."""
    return {
        "family": rating.family,
        "rating": round(rating.rating, 2),
        "mu": round(rating.mu, 4),
        "sigma": round(rating.sigma, 4),
        "races": rating.races,
    }


def race_leaderboard(*, family: str, limit: int = 100) -> list[dict[str, Any]]:
    """The best quick-race ratings of a variant family, best first."""
    if family not in TIME_LIMIT_SECONDS:
        raise NotFound(f"no variant family {family}")
    rows = (
        RaceRating.objects.filter(family=family)
        .select_related("player")
        .order_by("-rating", "player")[:limit]
    )
    return [
        {"rank": i, "player": r.player.get_username(), **rating_line(r)}
        for i, r in enumerate(rows, start=1)
    ]


def player_race_ratings(*, user: User) -> QuerySet[RaceRating]:
    """A player's quick-race ratings per variant family."""
    return RaceRating.objects.filter(player=user).order_by("family")
