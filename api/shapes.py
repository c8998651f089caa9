"""Every JSON shape a player may see, defined once: the one place to audit what leaves.

The shapes live at the edge: the domain (``games``) returns values and renders
nothing. Each shape is a DRF serializer that really renders: REST views, WebSocket
consumers, the events' wire forms (``api.events``) and the web pages call the
functions below, and the OpenAPI schema (drf-spectacular) is generated from the
same classes, so the documented and the served shapes are one. Selectors and
services hand over model instances and plain values; the views below
(``GameView``, ``DailyView``) hold the rules of what a player may see of them:

- **stock secrecy**: a position is the engine's public form (``public_json``),
  the stock only counted; a replay step shows a full position only once its
  day is over (``games.selectors.dailies.result_replay`` refuses earlier);
- **race start**: a race's game shows no card before the race starts (the
  countdown): its position is null and it has no legal moves, so every player
  sees the deal at the same moment;
- **reveal timing**: a game's deal (seed and deck order) once the game has ended,
  and for a daily's game once its day is over too (others are still playing
  it); a daily's seed, deck and par once its day is over;
- **race counts**: a race (``RaceView``) shows each player's progress and standing
  as counts and times only, never a card of anyone's game, so one view goes to
  every player and spectator while the race runs; a race game's deal and a race
  replay only once the race has finished (``games.selectors.races.race_replay``
  refuses earlier).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, Protocol

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from games import clock
from games.engine import (
    GameLog,
    Position,
    Status,
    deck_order,
    finish_line,
    get_variant,
    safe_moves,
)
from games.models import EXPIRED, Deal, Game, PlayerStats, Race, RaceEntry, RaceRating
from games.selectors import races as race_selectors
from games.selectors.boards import current_streak
from games.selectors.dailies import ResultReplay
from games.selectors.games import elapsed_ms, game_current_log

if TYPE_CHECKING:
    from games.services.games import Hint, MoveOutcome

GAME_STATUSES = ["playing", "won", "lost", "resigned", "expired", "move_limit"]


def _cards(**kwargs: Any) -> serializers.ListField:
    """A list of card codes or move notations."""
    return serializers.ListField(child=serializers.CharField(), **kwargs)


def _instant(**kwargs: Any) -> serializers.DateTimeField:
    """A moment in time, always in UTC (`Z`), whatever the server's time zone."""
    return serializers.DateTimeField(default_timezone=UTC, **kwargs)


@cache
def _renderer(shape: type[serializers.Serializer], many: bool) -> serializers.BaseSerializer:
    """The one serializer that renders every value of a shape.

    A new serializer copies its declared fields, which costs several times the
    rendering itself (three quarters of a game state's); ``to_representation``
    keeps no state, so one instance serves every call and thread.
    """
    return shape(many=many)


def _render(shape: type[serializers.Serializer], value: Any, *, many: bool = False) -> Any:
    """``value`` (a list of values if ``many``) rendered as the JSON data of ``shape``."""
    return _renderer(shape, many).to_representation(value)


# -- a game -------------------------------------------------------------------------------


def revealed_deal(game: Game) -> Deal | None:
    """The game's deal if its seed and deck may be shown, else None.

    A daily deal stays hidden until its day is over, even after one game of it
    ended: others are still playing it; a race's deal likewise until the race has finished.
    """
    deal = game.deal
    if game.status == Status.PLAYING or (deal.date is not None and not clock.day_over(deal.date)):
        return None
    if (
        deal.kind == Deal.Kind.RACE
        and not Race.objects.filter(deal=deal, status=Race.Status.FINISHED).exists()
    ):
        return None
    return deal


class DealRevealSerializer(serializers.Serializer):
    seed = serializers.CharField()
    deck = serializers.SerializerMethodField()

    @extend_schema_field(_cards())
    def get_deck(self, deal: Deal) -> list[str]:
        return deck_order(deal.variant, int(deal.seed))


class PositionSerializer(serializers.Serializer):
    """A position as its player sees it: the stock is only counted."""

    piles = serializers.DictField(
        child=_cards(),
        help_text="Every pile but the stock, by the spec's pile ids, cards bottom to top.",
    )
    stock = serializers.IntegerField(help_text="Cards left in the stock (never their faces).")


@dataclass(frozen=True)
class GameView:
    """A game with its current log: the values its public state shows."""

    game: Game
    log: GameLog

    @property
    def playing(self) -> bool:
        return self.game.status == Status.PLAYING

    @cached_property
    def before_start(self) -> bool:
        """A race's game before the race starts on the shared clock (a race's game is
        timed from the start, and takes no move before it, so only one at ply 0 asks)."""
        game = self.game
        return (
            game.deal.kind == Deal.Kind.RACE
            and game.ply == 0
            and clock.shared_now() < game.started_at
        )

    @property
    def max_score(self) -> int:
        return get_variant(self.game.deal.variant).card_count

    @property
    def position(self) -> dict[str, Any] | None:
        return None if self.before_start else self.log.position.public_json()

    @property
    def legal_moves(self) -> list[str]:
        if not self.playing or self.before_start:
            return []
        return [str(m) for m in self.log.position.legal_moves]

    @property
    def safe_moves(self) -> list[str]:
        if not self.playing or self.before_start:
            return []
        return [str(m) for m in safe_moves(self.log.position)]

    @property
    def finish(self) -> list[str]:
        if not self.playing or self.before_start:
            return []
        return [str(m) for m in finish_line(self.log.position)]

    @property
    def can_undo(self) -> bool:
        return self.playing and self.log.can_undo(self.game.ranked)

    @property
    def elapsed_ms(self) -> int:
        return elapsed_ms(self.game)

    @property
    def deal(self) -> Deal | None:
        return revealed_deal(self.game)


class GameStateSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="game.pk")
    variant = serializers.CharField(source="game.deal.variant")
    kind = serializers.ChoiceField(choices=Deal.Kind.choices, source="game.deal.kind")
    date = serializers.DateField(allow_null=True, source="game.deal.date")
    status = serializers.ChoiceField(choices=GAME_STATUSES, source="game.status")
    score = serializers.IntegerField(help_text="Cards home.", source="game.score")
    max_score = serializers.IntegerField()
    ply = serializers.IntegerField(
        help_text="Log entries so far (moves and undos).", source="log.entries"
    )
    moves_on_board = serializers.IntegerField(
        help_text="Moves not undone.", source="log.moves_on_board"
    )
    ranked = serializers.BooleanField(source="game.ranked")
    assisted = serializers.BooleanField(source="game.assisted")
    started_at = _instant(source="game.started_at")
    finished_at = _instant(allow_null=True, source="game.finished_at")
    elapsed_ms = serializers.IntegerField(help_text="Measured on the server.")
    position = PositionSerializer(
        allow_null=True,
        help_text="Null for a race's game until the race starts: no card of the deal is "
        "shown before then (ask again at `starts_at`).",
    )
    legal_moves = _cards(help_text="Empty before a race's start.")
    safe_moves = _cards(
        help_text="The legal moves home that give nothing up (an Ace; in Bristol a card "
        "whose rank below is all home): a page may play them for its player."
    )
    finish = _cards(
        help_text="When the game is won out (stock empty, only moves home left): the "
        "moves that win it, in order, else empty. Each is an ordinary move."
    )
    can_undo = serializers.BooleanField()
    deal = DealRevealSerializer(
        allow_null=True,
        help_text="Seed and deck order once the game has ended; for a daily's game, once its "
        "day is over as well (others are still playing it), so null until then.",
    )


class MoveResultSerializer(GameStateSerializer):
    """A game's state after a move or undo (``move_result``), and whether it was a retry."""

    duplicate = serializers.BooleanField(
        help_text="True when this exact move was already applied at that ply (a safe retry)."
    )


def game_state(game: Game, position: Position | None = None) -> dict[str, Any]:
    """The public state of a game (``position``: its snapshot's, when already read)."""
    return _render(GameStateSerializer, GameView(game, game_current_log(game, position)))


def game_states(games: Iterable[Game]) -> list[dict[str, Any]]:
    """The public states of several games (a page of a list)."""
    views = [GameView(g, game_current_log(g)) for g in games]
    return _render(GameStateSerializer, views, many=True)


def moved_state(outcome: MoveOutcome) -> dict[str, Any]:
    """The public state after a move or undo: the one its event carries (rendered once,
    ``api.events``), or for a retry, which emitted none, the current one."""
    if outcome.event is not None:
        return outcome.event.message["state"]
    return game_state(outcome.game, outcome.position)


def move_result(outcome: MoveOutcome) -> dict[str, Any]:
    """A move's REST answer (``MoveResultSerializer``): its state and whether it was a
    safe retry."""
    return {**moved_state(outcome), "duplicate": outcome.duplicate}


class HintSerializer(serializers.Serializer):
    ply = serializers.IntegerField(help_text="The game's ply the hint is for.")
    verdict = serializers.ChoiceField(
        choices=["won", "lost", "unknown"],
        help_text="`won`: still winnable (see `move`); `lost`: no longer winnable; "
        "`unknown`: the solver's limit was reached.",
    )
    move = serializers.CharField(allow_null=True, help_text="Next move of a winning line.")
    nodes = serializers.IntegerField(help_text="Positions the solver generated.")


def hint(given: Hint) -> dict[str, Any]:
    """A hint, as ``POST .../hint/`` and the game socket answer it."""
    return _render(HintSerializer, given)


# -- a daily ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DailyView:
    """A daily deal: its commitment now; its seed, deck and par once its day is over."""

    deal: Deal

    @property
    def day(self) -> date:
        assert self.deal.date is not None, "a daily has its day"
        return self.deal.date

    @cached_property
    def over(self) -> bool:
        """Read once: the shared clock may be a query."""
        return clock.day_over(self.day)

    @property
    def seed(self) -> Decimal | None:
        return self.deal.seed if self.over else None

    @property
    def deck(self) -> list[str] | None:
        return deck_order(self.deal.variant, int(self.deal.seed)) if self.over else None

    @property
    def par(self) -> int | None:
        return self.deal.par if self.over else None

    @property
    def par_line(self) -> list[str] | None:
        return self.deal.par_line if self.over else None

    @property
    def seconds_left(self) -> int:
        return clock.seconds_left(self.day)


class DailySerializer(serializers.Serializer):
    variant = serializers.CharField(source="deal.variant")
    date = serializers.DateField(source="deal.date")
    commitment = serializers.CharField(
        source="deal.commitment", help_text="SHA-256 of the seed's decimal text."
    )
    seed = serializers.CharField(allow_null=True, help_text="Published once the day is over.")
    deck = _cards(allow_null=True, help_text="Published once the day is over.")
    par = serializers.IntegerField(
        allow_null=True,
        help_text="Moves in the solver's winning line; published once the day is over "
        "(null for a deal that was not certified).",
    )
    par_line = _cards(
        allow_null=True,
        help_text="The solver's winning line in the spec's notation, published with `par`.",
    )
    seconds_left = serializers.IntegerField(help_text="Until the day ends (UTC).")


class MyDailyGameSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="game.pk")
    status = serializers.CharField(source="game.status")
    score = serializers.IntegerField(source="game.score")
    ply = serializers.IntegerField(source="game.ply")
    rank = serializers.IntegerField(allow_null=True)


@dataclass(frozen=True)
class MyDailyGame:
    """A player's ranked game of a daily, with its rank on the day's board (None if none)."""

    game: Game
    rank: int | None


@dataclass(frozen=True)
class DailyOverviewView(DailyView):
    """A daily with its variant's name and the player's ranked game of it."""

    my_game: MyDailyGame | None = None

    @property
    def name(self) -> str:
        return get_variant(self.deal.variant).name


class DailyOverviewSerializer(DailySerializer):
    name = serializers.CharField()
    my_game = MyDailyGameSerializer(allow_null=True)


def daily(deal: Deal) -> dict[str, Any]:
    """What anyone may know of a daily (see ``DailyView``)."""
    return _render(DailySerializer, DailyView(deal))


def daily_overview(dailies: list[tuple[Deal, Game | None, int | None]]) -> list[dict[str, Any]]:
    """The dailies of a day, each with the player's ranked game and its rank (or None)."""
    views = [
        DailyOverviewView(deal, None if game is None else MyDailyGame(game, rank))
        for deal, game, rank in dailies
    ]
    return _render(DailyOverviewSerializer, views, many=True)


# -- boards -------------------------------------------------------------------------------


class BoardEntrySerializer(serializers.Serializer):
    """A line of a day's board, as REST, the board socket and its `board.result` events
    send it."""

    rank = serializers.IntegerField()
    result_id = serializers.IntegerField()
    player = serializers.CharField(source="player_name")
    won = serializers.BooleanField()
    cards_home = serializers.IntegerField()
    moves = serializers.IntegerField()
    time_ms = serializers.IntegerField()
    finished_at = _instant()


class BoardSerializer(serializers.Serializer):
    """A page of a day's board (`next`, `previous`, `results`, as every list pages), with
    the board's size, my line and my neighbours whichever page it is."""

    next = serializers.URLField(allow_null=True, help_text="The next page, if any.")
    previous = serializers.URLField(allow_null=True, help_text="The previous page, if any.")
    results = BoardEntrySerializer(many=True)
    total = serializers.IntegerField(help_text="Lines on the board.")
    me = BoardEntrySerializer(allow_null=True, help_text="My line, if I have one.")
    around = BoardEntrySerializer(
        many=True, help_text="My line and my neighbours each side (`around`), in rank order."
    )


def board_line(line: dict[str, Any]) -> dict[str, Any]:
    """A board line (a row of ``games.selectors.boards``, with its rank)."""
    return _render(BoardEntrySerializer, line)


def day_board(board: dict[str, Any]) -> dict[str, Any]:
    """A page of a day's board: a page of ``games.selectors.boards.ranked`` lines with its
    links, and what ``games.selectors.boards.day_board_me`` reads."""
    return _render(BoardSerializer, board)


@dataclass(frozen=True)
class StatsView:
    """A player's record in one variant, with its rank on an all-time board if any."""

    stats: PlayerStats
    rank: int | None = None

    @property
    def player(self) -> str:
        return self.stats.player.get_username()

    @property
    def win_rate(self) -> float:
        return round(self.stats.won / self.stats.played, 4) if self.stats.played else 0.0

    @property
    def current_streak(self) -> int:
        return current_streak(self.stats)


class AlltimeEntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    days_won = serializers.IntegerField(source="stats.won")
    played = serializers.IntegerField(source="stats.played")
    best_streak = serializers.IntegerField(source="stats.best_streak")
    current_streak = serializers.IntegerField()


def alltime_lines(ranked: list[tuple[PlayerStats, int]]) -> list[dict[str, Any]]:
    """A page of an all-time board (``games.selectors.boards.alltime_ranked``)."""
    return _render(
        AlltimeEntrySerializer, [StatsView(s, rank=rank) for s, rank in ranked], many=True
    )


class BestSerializer(serializers.Serializer):
    date = serializers.DateField(source="deal.date")
    won = serializers.BooleanField()
    cards_home = serializers.IntegerField()
    moves = serializers.IntegerField()
    time_ms = serializers.IntegerField()


class VariantRecordSerializer(serializers.Serializer):
    variant = serializers.CharField(source="stats.variant")
    played = serializers.IntegerField(source="stats.played")
    won = serializers.IntegerField(source="stats.won")
    win_rate = serializers.FloatField()
    best_streak = serializers.IntegerField(source="stats.best_streak")
    current_streak = serializers.IntegerField()
    best = BestSerializer(allow_null=True, source="stats.best_result")


@dataclass(frozen=True)
class RecordView:
    """A player's daily record: totals over the variants, and each variant's."""

    user: AbstractBaseUser
    stats: list[PlayerStats]
    ratings: Iterable[RaceRating]

    @property
    def player(self) -> str:
        return self.user.get_username()

    @property
    def played(self) -> int:
        return sum(s.played for s in self.stats)

    @property
    def won(self) -> int:
        return sum(s.won for s in self.stats)

    @property
    def win_rate(self) -> float:
        return round(self.won / self.played, 4) if self.played else 0.0

    @property
    def variants(self) -> list[StatsView]:
        return [StatsView(s) for s in sorted(self.stats, key=lambda s: s.variant)]

    @property
    def race_ratings(self) -> list[RatingView]:
        return [RatingView(r) for r in self.ratings]


@dataclass(frozen=True)
class RatingView:
    """A quick-race rating, rounded as boards and player pages show it."""

    line: RaceRating

    @property
    def rating(self) -> float:
        return round(self.line.rating, 2)

    @property
    def mu(self) -> float:
        return round(self.line.mu, 4)

    @property
    def sigma(self) -> float:
        return round(self.line.sigma, 4)


class RaceRatingSerializer(serializers.Serializer):
    family = serializers.CharField(source="line.family")
    rating = serializers.FloatField(help_text="mu - 3 sigma (openskill's ordinal).")
    mu = serializers.FloatField()
    sigma = serializers.FloatField()
    races = serializers.IntegerField(source="line.races")


class PlayerRecordSerializer(serializers.Serializer):
    player = serializers.CharField()
    played = serializers.IntegerField()
    won = serializers.IntegerField()
    win_rate = serializers.FloatField()
    variants = VariantRecordSerializer(many=True)
    race_ratings = RaceRatingSerializer(many=True, help_text="Quick-race ratings per family.")


def player_record(
    user: AbstractBaseUser, stats: list[PlayerStats], *, race_ratings: Iterable[RaceRating]
) -> dict[str, Any]:
    """A player's record: daily totals from their ``PlayerStats`` rows, and their quick-race
    ratings (one page and one API answer show both)."""
    return _render(PlayerRecordSerializer, RecordView(user, stats, race_ratings))


# -- a replay -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayStep:
    """A full position of a replay, the stock included: shown once the day is over."""

    position: Position

    @property
    def variant(self) -> str:
        return self.position.variant.key

    @property
    def ply(self) -> int:
        return self.position.ply

    @property
    def piles(self) -> dict[str, list[str]]:
        return self.position.to_json()["piles"]

    @property
    def status(self) -> str:
        return self.position.status.value

    @property
    def score(self) -> int:
        return self.position.score


class ReplayPositionSerializer(serializers.Serializer):
    variant = serializers.CharField()
    ply = serializers.IntegerField()
    piles = serializers.DictField(
        child=_cards(), help_text="Every pile, the stock (`s`) included, cards bottom to top."
    )
    status = serializers.CharField()
    score = serializers.IntegerField()


class _Logged(Protocol):
    """A replay as a selector reads it: the log's moves and the position at a step."""

    @property
    def moves(self) -> list[str]: ...

    @property
    def position(self) -> Position | None: ...


class _ReplaySteps:
    """The steps of a replay's log, and the full position at the asked-for step."""

    replay: _Logged

    @property
    def steps(self) -> int:
        return len(self.replay.moves)

    @property
    def position(self) -> ReplayStep | None:
        pos = self.replay.position
        return None if pos is None else ReplayStep(pos)


@dataclass(frozen=True)
class ReplayView(_ReplaySteps):
    """A finished day's result with its log, and a step of it if asked for."""

    replay: ResultReplay


class ReplaySerializer(serializers.Serializer):
    result_id = serializers.IntegerField(source="replay.result.pk")
    game_id = serializers.IntegerField(
        source="replay.result.game_id", help_text="The game (its analysis: `.../analysis/`)."
    )
    player = serializers.CharField(source="replay.result.player.get_username")
    won = serializers.BooleanField(source="replay.result.won")
    cards_home = serializers.IntegerField(source="replay.result.cards_home")
    moves = _cards(source="replay.moves")
    steps = serializers.IntegerField()
    deal = DealRevealSerializer(source="replay.result.deal")
    step = serializers.IntegerField(allow_null=True, source="replay.step")
    position = ReplayPositionSerializer(
        allow_null=True, help_text="Full position (stock included) after `step` log entries."
    )


def replay(replay: ResultReplay) -> dict[str, Any]:
    """A finished day's result, as ``games.selectors.dailies.result_replay`` reads it."""
    return _render(ReplaySerializer, ReplayView(replay))


# -- a race -------------------------------------------------------------------------------

PROGRESS_STATUSES = ["waiting", "playing", "won", "lost", "resigned", "expired"]


@dataclass(frozen=True)
class ProgressView:
    """A racer's progress: counts and times of their game, never a card of it.

    ``game`` is None before the start (the player is ``waiting``).
    """

    player: AbstractBaseUser
    game: Game | None

    @property
    def username(self) -> str:
        return self.player.get_username()

    @property
    def status(self) -> str:
        if self.game is None:
            return "waiting"
        status = self.game.status
        if status not in (Status.PLAYING, Status.WON, Status.RESIGNED, EXPIRED):
            return Status.LOST.value  # lost, or ended by the move limit
        return str(status)

    @property
    def cards_home(self) -> int:
        return 0 if self.game is None else self.game.score

    @property
    def moves(self) -> int:
        return 0 if self.game is None else self.game.ply

    @property
    def finished_at(self) -> datetime | None:
        return None if self.game is None else self.game.finished_at

    @property
    def time_ms(self) -> int | None:
        return None if self.game is None else race_selectors.race_time_ms(self.game)


class ProgressSerializer(serializers.Serializer):
    username = serializers.CharField()
    status = serializers.ChoiceField(
        choices=PROGRESS_STATUSES,
        help_text="`waiting` before the start; `expired`: still playing at the time limit.",
    )
    cards_home = serializers.IntegerField()
    moves = serializers.IntegerField(help_text="Log entries (moves and undos).")
    finished_at = _instant(allow_null=True)
    time_ms = serializers.IntegerField(allow_null=True, help_text="From the start to the end.")


@dataclass(frozen=True)
class StandingView(ProgressView):
    """A racer's place in a finished race, with their rating change (quick races)."""

    entry: RaceEntry

    @property
    def place(self) -> int | None:
        return self.entry.place

    @property
    def rating(self) -> dict[str, float] | None:
        if self.entry.rating_after is None:
            return None
        return {
            "before": round(self.entry.rating_before or 0.0, 2),
            "after": round(self.entry.rating_after, 2),
        }


class RatingChangeSerializer(serializers.Serializer):
    before = serializers.FloatField()
    after = serializers.FloatField()


class StandingSerializer(ProgressSerializer):
    place = serializers.IntegerField()
    rating = RatingChangeSerializer(allow_null=True, help_text="Quick races only.")


class YouSerializer(serializers.Serializer):
    game = serializers.IntegerField(
        allow_null=True, help_text="Your game of the race (from the countdown on)."
    )


@dataclass(frozen=True)
class RaceView:
    """A race as every client sees it, at ``server_time`` on the shared clock.

    Progress and standings are counts only, so the one view goes to every player
    and spectator while the race runs; ``you`` names the viewer's own game.
    """

    race: Race
    entries: list[RaceEntry]
    viewer_id: int | None
    server_time: datetime
    max_players = race_selectors.MAX_PLAYERS
    min_players = race_selectors.MIN_PLAYERS

    @property
    def status(self) -> str:
        return race_selectors.race_status(self.race, self.server_time)

    @property
    def time_limit_seconds(self) -> int:
        return race_selectors.time_limit(self.race.variant)

    @property
    def rematch(self) -> str | None:
        return None if self.race.rematch is None else self.race.rematch.code

    @property
    def players(self) -> list[ProgressView]:
        started = self.status in (Race.Status.RUNNING, Race.Status.FINISHED)
        return [ProgressView(e.player, e.game if started else None) for e in self.entries]

    @property
    def you(self) -> dict[str, int | None] | None:
        for e in self.entries:
            if self.viewer_id is not None and e.player_id == self.viewer_id:
                return {"game": e.game_id}
        return None

    @property
    def unrated(self) -> str | None:
        if self.race.status != Race.Status.FINISHED or self.race.rated:
            return None
        return self.race.unrated or None

    @property
    def standings(self) -> list[StandingView] | None:
        if self.race.status != Race.Status.FINISHED:
            return None
        ranked = sorted(self.entries, key=lambda e: e.place or 0)
        return [StandingView(e.player, e.game, e) for e in ranked]


class RaceSerializer(serializers.Serializer):
    code = serializers.CharField(source="race.code")
    variant = serializers.CharField(source="race.variant")
    kind = serializers.ChoiceField(choices=Race.Kind.choices, source="race.kind")
    status = serializers.ChoiceField(choices=Race.Status.choices)
    creator = serializers.CharField(source="race.creator.get_username")
    max_players = serializers.IntegerField()
    min_players = serializers.IntegerField()
    time_limit_seconds = serializers.IntegerField()
    starts_at = _instant(allow_null=True, source="race.starts_at")
    ends_at = _instant(allow_null=True, source="race.ends_at")
    server_time = _instant(help_text="Now, on the clock the race runs on.")
    rematch = serializers.CharField(allow_null=True, help_text="Code of the rematch, if any.")
    players = ProgressSerializer(many=True)
    you = YouSerializer(allow_null=True, help_text="Null unless you are in the race.")
    standings = StandingSerializer(many=True, allow_null=True, help_text="Once finished.")
    unrated = serializers.ChoiceField(
        choices=Race.Unrated.choices,
        allow_null=True,
        help_text="Once finished, why the race changed no rating (docs/fair-play.md): private; "
        "uncontested (fewer than two players raced); provisional (fewer than two raced from "
        "accounts past their first races); voided (by an admin). Null while it runs, or rated.",
    )


def _race_view(race: Race, viewer: AbstractBaseUser | AnonymousUser | None) -> RaceView:
    viewer_id = viewer.pk if viewer is not None and viewer.is_authenticated else None
    entries = race_selectors.race_entries(race)
    return RaceView(race, entries, viewer_id, clock.shared_now())


def race(race: Race, viewer: AbstractBaseUser | AnonymousUser | None) -> dict[str, Any]:
    """A race as ``viewer`` sees it: the same for all, but ``you``."""
    return _render(RaceSerializer, _race_view(race, viewer))


def races(races: Iterable[Race], viewer: AbstractBaseUser | AnonymousUser | None) -> list[Any]:
    """Races (the lobby) as ``viewer`` sees them."""
    return _render(RaceSerializer, [_race_view(r, viewer) for r in races], many=True)


def progress(player: AbstractBaseUser, game: Game) -> dict[str, Any]:
    """A racer's progress after a move of their game (a race socket's message)."""
    return _render(ProgressSerializer, ProgressView(player, game))


@dataclass(frozen=True)
class RaceReplayView(_ReplaySteps):
    """A racer's game of a finished race with its log, and a step of it if asked for."""

    replay: race_selectors.RaceReplay

    @property
    def player(self) -> str:
        return self.replay.entry.player.get_username()

    @property
    def won(self) -> bool:
        return self.replay.game.status == Status.WON


class RaceReplaySerializer(serializers.Serializer):
    player = serializers.CharField()
    game_id = serializers.IntegerField(
        source="replay.game.pk", help_text="The game (its analysis: `.../analysis/`)."
    )
    won = serializers.BooleanField()
    cards_home = serializers.IntegerField(source="replay.game.score")
    moves = _cards(source="replay.moves")
    steps = serializers.IntegerField()
    deal = DealRevealSerializer(source="replay.game.deal")
    step = serializers.IntegerField(allow_null=True, source="replay.step")
    position = ReplayPositionSerializer(
        allow_null=True, help_text="Full position (stock included) after `step` log entries."
    )


def race_replay(replay: race_selectors.RaceReplay) -> dict[str, Any]:
    """A racer's game of a finished race, as ``games.selectors.races.race_replay`` reads it."""
    return _render(RaceReplaySerializer, RaceReplayView(replay))


@dataclass(frozen=True)
class RatingLineView(RatingView):
    """A rating on a family's board, with its rank."""

    rank: int

    @property
    def player(self) -> str:
        return self.line.player.get_username()


class RatingLineSerializer(RaceRatingSerializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()


def race_leaderboard(ranked: Iterable[tuple[RaceRating, int]]) -> list[Any]:
    """A page of a family's quick-race ratings, best first
    (``games.selectors.races.race_board_ranked``)."""
    lines = [RatingLineView(r, rank) for r, rank in ranked]
    return _render(RatingLineSerializer, lines, many=True)
