"""What everyone sees of a race, as a frozen value built in the domain (``race_state``).

A race shows each player's progress and standing as counts and times only, never a card
of anyone's game, so one value goes to every player and spectator while the race runs;
only ``you`` (the viewer's own game) differs, and the doors add it (``as_json``). A race
past its time limit that nobody has stored as finished yet shows finished, its games
still playing as expired and its standings in the order ``race_finish`` will store:
derived, since a read never writes (the race's sockets and the job store it).
``RaceChanged`` carries this value, so a race's sockets need not read it again.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core import clock
from games.engine import Status
from games.models import EXPIRED, Game, Race, RaceEntry
from games.play.state import Progress, progress
from games.selectors import races as race_selectors


def viewer_game(
    games: Iterable[Sequence[int | None]], viewer_id: int | None
) -> dict[str, int | None] | None:
    """``you`` of a race's JSON: the viewer's own game among the race's (player, game)
    pairs (``RaceState.games``, or a ``race.changed`` message's), None if not in it."""
    if viewer_id is None:
        return None
    return next(({"game": game} for player, game in games if player == viewer_id), None)


@dataclass(frozen=True)
class Standing:
    """A racer's place in a finished race, with their rating change (quick races)."""

    progress: Progress
    place: int | None
    rating: tuple[float, float] | None  # (before, after)

    def as_json(self) -> dict[str, Any]:
        rating = self.rating
        return {
            **self.progress.as_json(),
            "place": self.place,
            "rating": None if rating is None else {"before": rating[0], "after": rating[1]},
        }


@dataclass(frozen=True)
class RaceState:
    """A race at ``server_time`` on the shared clock; ``games`` maps each player's id to
    their game's (the doors' ``you``), never shown itself."""

    code: str
    variant: str
    kind: str
    status: str
    creator: str
    max_players: int
    min_players: int
    time_limit_seconds: int
    starts_at: datetime | None
    ends_at: datetime | None
    server_time: datetime
    rematch: str | None
    players: tuple[Progress, ...]
    standings: tuple[Standing, ...] | None
    unrated: str | None
    games: tuple[tuple[int, int | None], ...]

    def you(self, viewer_id: int | None) -> dict[str, int | None] | None:
        """The viewer's own game, if the viewer is in the race."""
        return viewer_game(self.games, viewer_id)

    def as_json(self, viewer_id: int | None = None) -> dict[str, Any]:
        """The JSON form every door sends, as ``viewer_id`` sees it (``api.shapes``
        documents it)."""
        return {
            "code": self.code,
            "variant": self.variant,
            "kind": self.kind,
            "status": self.status,
            "creator": self.creator,
            "max_players": self.max_players,
            "min_players": self.min_players,
            "time_limit_seconds": self.time_limit_seconds,
            "starts_at": clock.iso(self.starts_at),
            "ends_at": clock.iso(self.ends_at),
            "server_time": clock.iso(self.server_time),
            "rematch": self.rematch,
            "players": [p.as_json() for p in self.players],
            "you": self.you(viewer_id),
            "standings": None if self.standings is None else [s.as_json() for s in self.standings],
            "unrated": self.unrated,
        }


def _shown_game(entry: RaceEntry, race: Race, overdue: bool) -> Game | None:
    """A racer's game as shown: one still playing past the limit ends there, expired."""
    game = entry.game
    if game is None or not overdue or game.status != Status.PLAYING:
        return game
    shown = copy.copy(game)
    shown.status, shown.finished_at = EXPIRED, race.ends_at
    return shown


def _standing(entry: RaceEntry, game: Game | None, place: int | None) -> Standing:
    rating = None
    if entry.rating_after is not None:
        rating = (round(entry.rating_before or 0.0, 2), round(entry.rating_after, 2))
    return Standing(progress(entry.player, game), place, rating)


def _standings(race: Race, entries: list[RaceEntry], overdue: bool) -> tuple[Standing, ...] | None:
    if overdue:  # the places the race will store (``race_finish``), no rating yet
        shown = []
        for entry in entries:
            entry = copy.copy(entry)
            entry.game = _shown_game(entry, race, overdue)
            shown.append(entry)
        ranked = sorted(shown, key=race_selectors.standing_key)
        return tuple(_standing(e, e.game, place) for place, e in enumerate(ranked, start=1))
    if race.status != Race.Status.FINISHED:
        return None
    ranked = sorted(entries, key=lambda e: e.place or 0)
    return tuple(_standing(e, e.game, e.place) for e in ranked)


def race_state(race: Race, now: datetime | None = None) -> RaceState:
    """What everyone sees of ``race`` now on the shared clock (one read of its entries)."""
    now = clock.shared_now() if now is None else now
    entries = race_selectors.race_entries(race)
    overdue = race_selectors.race_overdue(race, now)
    status = Race.Status.FINISHED if overdue else race_selectors.race_status(race, now)
    started = status in (Race.Status.RUNNING, Race.Status.FINISHED)
    finished = race.status == Race.Status.FINISHED
    return RaceState(
        code=race.code,
        variant=race.variant,
        kind=race.kind,
        status=str(status),
        creator=race.creator.get_username(),
        max_players=race_selectors.MAX_PLAYERS,
        min_players=race_selectors.MIN_PLAYERS,
        time_limit_seconds=race_selectors.time_limit(race.variant),
        starts_at=race.starts_at,
        ends_at=race.ends_at,
        server_time=now,
        rematch=None if race.rematch is None else race.rematch.code,
        players=tuple(
            progress(e.player, _shown_game(e, race, overdue) if started else None) for e in entries
        ),
        standings=_standings(race, entries, overdue),
        unrated=(race.unrated or None) if finished and not race.rated else None,
        games=tuple((e.player_id, e.game_id) for e in entries),
    )
