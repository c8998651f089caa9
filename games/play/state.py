"""What a player may see of a game, as a frozen value built here, in the domain.

This is the one auditable place for hidden information of a game:

- **stock secrecy**: a position is the engine's public form (``public_json``), the
  stock only counted;
- **race start**: a race's game shows no card before the race starts (the countdown):
  its position is None and it has no legal moves, so every player sees the deal at the
  same moment;
- **reveal timing**: a game's deal (seed and deck order) once the game has ended, and
  for a daily's game once its day is over too (others are still playing it), for a
  race's game once the race has finished;
- **race counts**: a racer's progress is counts and times only, never a card.

A ``GameState`` is what a move's answer, its event and every read show; ``as_json`` is
its JSON form, which ``api.shapes`` documents (OpenAPI) and the doors send as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from core import clock
from games.engine import GameLog, Position, Status, deck_order, finish_line, get_variant, safe_moves
from games.models import EXPIRED, Deal, Game, Race
from games.selectors.games import elapsed_ms, game_current_log
from games.selectors.races import race_time_ms


@dataclass(frozen=True)
class DealShown:
    """A deal's seed and deck order, once they may be shown."""

    seed: str
    deck: tuple[str, ...]


def revealed_deal(game: Game) -> DealShown | None:
    """The game's deal if its seed and deck may be shown, else None.

    A daily deal stays hidden until its day is over, even after one game of it ended:
    others are still playing it; a race's deal likewise until the race has finished.
    """
    deal = game.deal
    if game.status == Status.PLAYING or (deal.date is not None and not clock.day_over(deal.date)):
        return None
    if (
        deal.kind == Deal.Kind.RACE
        and not Race.objects.filter(deal=deal, status=Race.Status.FINISHED).exists()
    ):
        return None
    return deal_shown(deal)


def deal_shown(deal: Deal) -> DealShown:
    """A deal's seed and deck order, for a caller that decided they may be shown (a
    replay: its day or race is over)."""
    return DealShown(str(deal.seed), tuple(deck_order(deal.variant, int(deal.seed))))


@dataclass(frozen=True)
class GameState:
    """A game as its player sees it at its ply (``api.shapes.GameStateSerializer`` documents
    every field). ``position`` is the engine's public form, or None before a race's start."""

    id: int
    variant: str
    kind: str
    date: date | None
    status: str
    score: int
    max_score: int
    ply: int
    moves_on_board: int
    ranked: bool
    assisted: bool
    started_at: datetime
    finished_at: datetime | None
    elapsed_ms: int
    position: dict[str, Any] | None
    legal_moves: tuple[str, ...]
    safe_moves: tuple[str, ...]
    finish: tuple[str, ...]
    can_undo: bool
    deal: DealShown | None

    def as_json(self) -> dict[str, Any]:
        """The JSON form every door sends (REST, sockets, events, pages)."""
        deal = self.deal
        return {
            "id": self.id,
            "variant": self.variant,
            "kind": self.kind,
            "date": None if self.date is None else self.date.isoformat(),
            "status": self.status,
            "score": self.score,
            "max_score": self.max_score,
            "ply": self.ply,
            "moves_on_board": self.moves_on_board,
            "ranked": self.ranked,
            "assisted": self.assisted,
            "started_at": clock.iso(self.started_at),
            "finished_at": clock.iso(self.finished_at),
            "elapsed_ms": self.elapsed_ms,
            "position": None
            if self.position is None
            else {"piles": self.position["piles"], "stock": self.position["stock"]},
            "legal_moves": list(self.legal_moves),
            "safe_moves": list(self.safe_moves),
            "finish": list(self.finish),
            "can_undo": self.can_undo,
            "deal": None if deal is None else {"seed": deal.seed, "deck": list(deal.deck)},
        }


def _before_start(game: Game) -> bool:
    """A race's game before the race starts on the shared clock (a race's game is timed
    from the start and takes no move before it, so only one at ply 0 asks)."""
    return (
        game.deal.kind == Deal.Kind.RACE and game.ply == 0 and clock.shared_now() < game.started_at
    )


def game_state(game: Game, position: Position | None = None) -> GameState:
    """The state of ``game`` as stored (``position``: its current one, when already read)."""
    log: GameLog = game_current_log(game, position)
    pos = log.position
    hidden = _before_start(game)
    live = game.status == Status.PLAYING and not hidden
    return GameState(
        id=game.pk,
        variant=game.deal.variant,
        kind=game.deal.kind,
        date=game.deal.date,
        status=game.status,
        score=game.score,
        max_score=get_variant(game.deal.variant).card_count,
        ply=log.entries,
        moves_on_board=log.moves_on_board,
        ranked=game.ranked,
        assisted=game.assisted,
        started_at=game.started_at,
        finished_at=game.finished_at,
        elapsed_ms=elapsed_ms(game),
        position=None if hidden else pos.public_json(),
        legal_moves=tuple(str(m) for m in pos.legal_moves) if live else (),
        safe_moves=tuple(str(m) for m in safe_moves(pos)) if live else (),
        finish=tuple(str(m) for m in finish_line(pos)) if live else (),
        can_undo=game.status == Status.PLAYING and log.can_undo(game.ranked),
        deal=revealed_deal(game),
    )


# -- a racer's progress ---------------------------------------------------------------------

#: A racer's status: ``waiting`` before the start, ``expired`` still playing at the limit.
PROGRESS_STATUSES = ("waiting", "playing", "won", "lost", "resigned", "expired")


@dataclass(frozen=True)
class Progress:
    """A racer's progress: counts and times of their game, never a card of it."""

    username: str
    status: str
    cards_home: int
    moves: int
    finished_at: datetime | None
    time_ms: int | None

    def as_json(self) -> dict[str, Any]:
        """The JSON form (``api.shapes.ProgressSerializer`` documents it)."""
        return {
            "username": self.username,
            "status": self.status,
            "cards_home": self.cards_home,
            "moves": self.moves,
            "finished_at": clock.iso(self.finished_at),
            "time_ms": self.time_ms,
        }


def progress(player: AbstractBaseUser, game: Game | None) -> Progress:
    """A racer's progress; ``game`` None before the start (``waiting``)."""
    if game is None:
        return Progress(player.get_username(), "waiting", 0, 0, None, None)
    status = str(game.status)
    if status not in (Status.PLAYING, Status.WON, Status.RESIGNED, EXPIRED):
        status = Status.LOST.value  # lost, or ended by the move limit
    return Progress(
        player.get_username(), status, game.score, game.ply, game.finished_at, race_time_ms(game)
    )
