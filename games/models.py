"""Database models: deals, games with their move logs, results and players' records.

The models hold data and constraints only; every workflow lives in
``games.services`` (writes) and ``games.selectors`` (reads). The move log is the
truth about a game: ``Game.log`` packs it a few bytes an entry
(``games.engine.record``), and ``Game.position`` is a cached snapshot that always
equals the replay of the log (``games.engine.GameLog``,
``games.selectors.games.game_replay``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Cast, Concat, LPad

from games.engine import UNDO as UNDO  # the log's undo entry (games.engine.log), re-exported
from games.engine import VARIANTS, Status

VARIANT_CHOICES = [(v.key, v.name) for v in VARIANTS.values()]
#: Ends the server sets, beside the engine's statuses: the log reached ``GAME_MAX_LOG``
#: entries; a ranked daily left unfinished when its day ended.
MOVE_LIMIT = "move_limit"
EXPIRED = "expired"
#: Statuses a server sets; every other status is the engine's verdict on the position.
SERVER_ENDS = frozenset({Status.RESIGNED.value, MOVE_LIMIT, EXPIRED})
STATUS_CHOICES = [(s.value, s.value.capitalize()) for s in Status] + [
    (MOVE_LIMIT, "Move limit reached"),
    (EXPIRED, "Day ended unfinished"),
]


class SeedField(models.DecimalField):
    """A deal's seed, 0 <= seed < 2**64, exact on every database (a ``Decimal`` in Python).

    PostgreSQL keeps it as numeric(20, 0). SQLite keeps only 15 significant
    digits of a decimal, which changes most seeds, so there it is stored as text
    padded with zeros to 20 digits: text order is number order, so the range
    check and the unique constraints hold as they do on PostgreSQL.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["max_digits"], kwargs["decimal_places"] = 20, 0
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        del kwargs["max_digits"], kwargs["decimal_places"]
        return name, path, args, kwargs

    def get_internal_type(self) -> str:
        # Not "DecimalField": SQLite's converter for those rounds to 15 digits.
        return "SeedField"

    def db_type(self, connection: Any) -> str:
        if connection.vendor == "sqlite":
            return "varchar(20)"
        return connection.data_types["DecimalField"] % self.db_type_parameters(connection)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        value = super().get_db_prep_value(value, connection, prepared)
        if connection.vendor == "sqlite" and value is not None and not hasattr(value, "as_sql"):
            # Longer numbers (all out of range) become 20 nines, so the check refuses them.
            return f"{min(int(value), 10**20 - 1):020d}"
        return value

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Decimal | None:
        return None if value is None else Decimal(value)


class Deal(models.Model):
    """A dealt deck: a variant and a seed; a daily deal also has its UTC date."""

    class Kind(models.TextChoices):
        DAILY = "daily", "Daily challenge"
        PRACTICE = "practice", "Practice"
        RACE = "race", "Race"

    variant = models.CharField(max_length=32, choices=VARIANT_CHOICES)
    # Seeds span 0 <= seed < 2**64, beyond a signed 64-bit integer column.
    seed = SeedField()
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.PRACTICE)
    date = models.DateField(null=True, blank=True)
    # Daily deals: which candidate of the HMAC seed sequence was chosen, and the
    # published SHA-256 commitment to the seed (see games.daily).
    seed_index = models.PositiveIntegerField(default=0)
    commitment = models.CharField(max_length=64, blank=True)
    # A winning line found by the solver for a certified daily (the par is its
    # length); published with the seed once the day is over.
    par_line = models.JSONField(null=True, blank=True)
    solver_nodes = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["variant", "date"],
                condition=Q(kind="daily"),
                name="one_daily_per_variant_and_date",
            ),
            models.UniqueConstraint(
                fields=["variant", "seed"],
                condition=Q(kind="practice"),
                name="one_practice_deal_per_seed",
            ),
            models.CheckConstraint(
                condition=Q(kind__in=["practice", "race"], date__isnull=True)
                | Q(kind="daily", date__isnull=False),
                name="daily_deals_have_a_date",
            ),
            models.CheckConstraint(
                condition=Q(seed__gte=0) & Q(seed__lt=2**64), name="seed_in_range"
            ),
        ]

    def __str__(self) -> str:
        if self.kind == self.Kind.DAILY:
            return f"{self.variant} daily {self.date}"
        return f"{self.variant} #{self.seed}"

    @property
    def par(self) -> int | None:
        """Moves in the solver's winning line, if the deal was certified."""
        return None if self.par_line is None else len(self.par_line)


class Game(models.Model):
    """One player's play of one deal."""

    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="games"
    )
    deal = models.ForeignKey(Deal, on_delete=models.PROTECT, related_name="games")
    status = models.CharField(max_length=16, choices=STATUS_CHOICES, default=Status.PLAYING.value)
    # Entries in the move log (moves and undos): the client's concurrency counter.
    ply = models.PositiveIntegerField(default=0)
    score = models.PositiveIntegerField(default=0)
    ranked = models.BooleanField(default=False)
    assisted = models.BooleanField(default=False)
    # Moves on the board when the stock last revealed a card: a ranked game's
    # undo never goes below it (a cached fact of the log, like ``position``).
    undo_floor = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    # The current position, stock included (``games.engine.record.position_bytes``):
    # never sent to players.
    position = models.BinaryField()
    # The move log, packed (``games.engine.record.pack``): each entry's move and time.
    log = models.BinaryField(default=b"")
    # When the last log entry was made (the guests' purge asks who played lately).
    moved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # A player's games newest first (games.selectors.games.GAMES_ORDER), paged.
        indexes = [models.Index(fields=["player", "-id"], name="games_of_player")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status="playing", finished_at__isnull=True)
                | (~Q(status="playing") & Q(finished_at__isnull=False)),
                name="finished_games_have_finish_time",
            ),
            models.UniqueConstraint(
                fields=["player", "deal"],
                condition=Q(ranked=True),
                name="one_ranked_game_per_player_and_deal",
            ),
        ]

    def __str__(self) -> str:
        return f"game {self.pk} of {self.player} ({self.deal})"


class Result(models.Model):
    """The outcome of a ranked daily game, computed from its validated log only.

    ``sort_key`` orders a day's board with one ascending string: won first, then
    more cards home, fewer moves, less time, the earlier finish, and the game id
    as the last tie-break, so keys are unique and keyset paging is exact.
    """

    class Review(models.TextChoices):
        PENDING = "pending", "Pending review"
        CLEARED = "cleared", "Cleared"
        DISQUALIFIED = "disqualified", "Disqualified"

    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="result")
    deal = models.ForeignKey(Deal, on_delete=models.PROTECT, related_name="results")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="results"
    )
    won = models.BooleanField()
    cards_home = models.PositiveIntegerField()
    moves = models.PositiveIntegerField()
    time_ms = models.PositiveBigIntegerField()
    finished_at = models.DateTimeField()
    sort_key = models.CharField(max_length=64, unique=True)
    disqualified = models.BooleanField(default=False)
    # A fair-play review (``games.services.fairplay``): pending while it has flags nobody
    # has looked at; the board shows the result meanwhile (the flag is for admins only).
    review = models.CharField(max_length=16, blank=True, choices=Review.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["deal", "player"], name="one_result_per_player_and_deal"
            )
        ]
        indexes = [
            models.Index(
                fields=["deal", "sort_key"],
                condition=Q(disqualified=False),
                name="board_order",
            ),
            models.Index(fields=["review"], condition=Q(review="pending"), name="review_queue"),
        ]

    def __str__(self) -> str:
        return f"{self.player} on {self.deal}: {'won' if self.won else self.cards_home}"


class ReviewQueue(Result):
    """The results waiting for a fair-play review (the admin's queue)."""

    class Meta:
        proxy = True
        verbose_name = "result to review"
        verbose_name_plural = "review queue"


class ResultFlag(models.Model):
    """Why a result needs a fair-play review: a stable reason code and what was seen
    (``games.services.fairplay``)."""

    class Reason(models.TextChoices):
        PAR_LINE = "par_line", "Played the solver's line"
        LINKED_ACCOUNT = "linked_account", "Another account on the same network played it first"
        FAST_MOVES = "fast_moves", "Moves faster than a person plays"
        NEW_ACCOUNT = "new_account", "A win from an account less than a day old"

    result = models.ForeignKey(Result, on_delete=models.CASCADE, related_name="flags")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    detail = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["result", "reason"], name="one_flag_per_reason")
        ]

    def __str__(self) -> str:
        return f"{self.reason} on {self.result}"


class PlaySignal(models.Model):
    """What a fair-play review may compare of a ranked daily game's client, kept as keyed
    hashes that change with the day: its network (IPv4 /24, IPv6 /64) and its browser
    string. Two games of the same day's daily can be linked; nothing else can be read
    from them (``games.services.fairplay.client_signal``)."""

    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="signal")
    network = models.CharField(max_length=16)
    device = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["network"], name="signal_network")]

    def __str__(self) -> str:
        return f"signal of game {self.game_id}"


#: Digits of each number in an all-time board key (a PositiveIntegerField has 10 at most).
_KEY_DIGITS = 10
#: Player ids count down from this in a key, so that the lower id comes first.
_KEY_PLAYER_TOP = 10**18


def alltime_key(first: str, second: str) -> Concat:
    """One string that orders an all-time board from its top, descending: ``first``, then
    ``second``, then the lower player id, each a fixed-width number.

    Unique (the player id is in it), so a cursor pages it alone, and the same expression
    is indexed (``PlayerStats.Meta``), so a page is an index range scan.
    """

    def digits(value: Any, width: int) -> LPad:
        return LPad(Cast(value, models.CharField()), width, Value("0"))

    return Concat(
        digits(F(first), _KEY_DIGITS),
        digits(F(second), _KEY_DIGITS),
        digits(Value(_KEY_PLAYER_TOP, output_field=models.BigIntegerField()) - F("player_id"), 18),
        output_field=models.CharField(),
    )


#: Each all-time board: what it counts, its key (``alltime_key``), which rows are on it.
ALLTIME_KEYS = {
    "days_won": alltime_key("won", "best_streak"),
    "best_streak": alltime_key("best_streak", "won"),
    "streak": alltime_key("streak", "won"),
}


class PlayerStats(models.Model):
    """A player's daily-challenge record in one variant, kept in step with the results."""

    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="stats"
    )
    variant = models.CharField(max_length=32, choices=VARIANT_CHOICES)
    played = models.PositiveIntegerField(default=0)
    won = models.PositiveIntegerField(default=0, help_text="Days won.")
    best_streak = models.PositiveIntegerField(default=0)
    streak = models.PositiveIntegerField(default=0, help_text="Run of days won up to last_won.")
    last_won = models.DateField(null=True, blank=True)
    best_result = models.ForeignKey(
        Result, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "variant"], name="one_stats_per_variant")
        ]
        # On each all-time board's key (games.selectors.boards.alltime_board), so a page
        # is an index scan from its cursor that stops after it, never a sort of every
        # player's record.
        indexes = [
            models.Index(F("variant"), ALLTIME_KEYS["days_won"], name="alltime_days_won"),
            models.Index(F("variant"), ALLTIME_KEYS["best_streak"], name="alltime_best_streak"),
            models.Index(
                F("variant"),
                ALLTIME_KEYS["streak"],
                condition=Q(streak__gt=0),
                name="alltime_streak",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.player} in {self.variant}: {self.won}/{self.played}"


class Race(models.Model):
    """Players racing on one certified deal (``games.services.races``); ``code`` names it in
    every URL. The race's deal comes from the pool of unused race deals."""

    class Kind(models.TextChoices):
        QUICK = "quick", "Quick race"
        PRIVATE = "private", "Private race"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        COUNTDOWN = "countdown", "Countdown"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"

    class Unrated(models.TextChoices):
        """Why a finished race changed no rating (``games.services.races``)."""

        PRIVATE = "private", "Private race"
        UNCONTESTED = "uncontested", "Fewer than two players played it"
        PROVISIONAL = "provisional", "Fewer than two established players played it"
        VOIDED = "voided", "Voided by an admin"

    #: A race's code: ``CODE_LENGTH`` characters of ``CODE_ALPHABET``, random.
    CODE_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
    CODE_LENGTH = 10

    code = models.CharField(max_length=CODE_LENGTH, unique=True)
    variant = models.CharField(max_length=32, choices=VARIANT_CHOICES)
    # Null once a race that never started gave its deal back to the pool.
    deal = models.OneToOneField(
        Deal, null=True, blank=True, on_delete=models.PROTECT, related_name="race"
    )
    kind = models.CharField(max_length=8, choices=Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="races_created"
    )
    created_at = models.DateTimeField()
    # Who opened it (``creator`` moves on when they leave), for the admin.
    opener = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="races_opened",
    )
    starts_at = models.DateTimeField(null=True, blank=True)
    ends_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    rematch = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="rematch_of"
    )
    # Whether the race changed ratings, and if not, why (``Unrated``: stable codes).
    rated = models.BooleanField(default=False)
    unrated = models.CharField(max_length=16, blank=True, choices=Unrated.choices)

    class Meta:
        indexes = [
            models.Index(fields=["kind", "variant", "status"], name="race_lobby"),
            models.Index(fields=["status", "ends_at"], name="race_due"),
            models.Index(fields=["opener", "kind", "created_at"], name="race_opened_by"),
        ]

    def __str__(self) -> str:
        return f"race {self.code} ({self.variant}, {self.status})"


class RaceEntry(models.Model):
    """A player in a race: their game (from the start on), place and rating change.

    ``live`` holds while the race is not finished; one live entry per player makes
    "at most one race at a time" a constraint of the database.
    """

    race = models.ForeignKey(Race, on_delete=models.CASCADE, related_name="entries")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="race_entries"
    )
    game = models.OneToOneField(
        Game, null=True, blank=True, on_delete=models.SET_NULL, related_name="race_entry"
    )
    joined_at = models.DateTimeField()
    live = models.BooleanField(default=True)
    place = models.PositiveSmallIntegerField(null=True, blank=True)
    rating_before = models.FloatField(null=True, blank=True)
    rating_after = models.FloatField(null=True, blank=True)
    # Whether the player really raced (``games.services.races._contested``), and what the
    # race changed of their rating: kept so that an admin can void the race later.
    contested = models.BooleanField(null=True, blank=True)
    mu_change = models.FloatField(null=True, blank=True)
    sigma_change = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["joined_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["race", "player"], name="one_entry_per_race"),
            models.UniqueConstraint(
                fields=["player"], condition=Q(live=True), name="one_live_race_per_player"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.player} in {self.race}"


class RaceRating(models.Model):
    """A player's quick-race rating in a variant family (openskill, Plackett-Luce).

    ``rating`` is the shown, conservative value ``mu - 3 * sigma`` (openskill's ordinal).
    ``races`` counts the races that changed it, ``contested`` every quick race the player
    really raced (rated or not): an account is rated only once it has raced enough.
    """

    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="race_ratings"
    )
    family = models.CharField(max_length=16)
    mu = models.FloatField()
    sigma = models.FloatField()
    rating = models.FloatField()
    races = models.PositiveIntegerField(default=0)
    contested = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "family"], name="one_rating_per_family")
        ]
        indexes = [models.Index(fields=["family", "-rating", "player"], name="race_leaderboard")]

    def __str__(self) -> str:
        return f"{self.player} in {self.family} races: {self.rating:.1f}"


class CapCount(models.Model):
    """The uses of one cap (a per-address or per-account limit) in its current window.

    One row per cap and key, changed only by guarded ``UPDATE`` statements
    (``games.services.caps``): parallel requests cannot pass the limit, where counting
    the rows they made could (each counts before any has written).
    """

    key = models.CharField(max_length=100, unique=True)
    window_start = models.DateTimeField()
    used = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.key}: {self.used} since {self.window_start:%Y-%m-%d %H:%M}"


class Analysis(models.Model):
    """A finished game's analysis by the solver (``games.analysis``): a row of the queue
    while ``queued`` or ``running``, the stored report once ``done``. One per game, so an
    analysis is asked for, run and kept once; a row stays in the database across
    restarts, and a ``running`` row whose worker died is claimed again once stale."""

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="analysis")
    state = models.CharField(max_length=8, choices=State.choices, default=State.QUEUED)
    # Lower first: an analysis a player asked for (0) before a finished day's backlog (1).
    priority = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # ``games.analysis.search.Report.to_json`` plus the game's facts (``games.analysis.queue``).
    report = models.JSONField(null=True, blank=True)
    cpu_seconds = models.FloatField(default=0)

    class Meta:
        verbose_name_plural = "analyses"
        indexes = [
            models.Index(
                fields=["priority", "id"],
                condition=Q(state="queued"),
                name="analysis_queue",
            ),
            models.Index(fields=["state", "started_at"], name="analysis_state"),
        ]

    def __str__(self) -> str:
        return f"analysis of game {self.game_id} ({self.state})"


class PositionVerdict(models.Model):
    """A position's decided verdict (won with a winning line, or lost), shared by every
    game's analysis: the players of one daily meet the same positions. Keyed by
    ``games.analysis.search.verdict_key`` within a variant; unknowns are not kept."""

    variant = models.CharField(max_length=32, choices=VARIANT_CHOICES)
    key = models.CharField(max_length=40)
    won = models.BooleanField()
    line = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["variant", "key"], name="one_verdict_per_position")
        ]

    def __str__(self) -> str:
        return f"{self.variant} {self.key[:8]}: {'won' if self.won else 'lost'}"
