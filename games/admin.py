"""Admin: every model with useful columns, filters and search; logs read-only."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.errors import ServiceError
from games.models import (
    Deal,
    Game,
    PlayerStats,
    Race,
    RaceEntry,
    RaceRating,
    Result,
    ResultFlag,
    ReviewQueue,
)
from games.selectors.games import game_entries, game_position, game_verify
from games.services.dailies import daily_replace_start
from games.services.race_ratings import race_rating_void
from games.services.results import result_disqualify, result_review, results_remove_for_player


class ReadOnlyInline(admin.TabularInline):
    """Rows shown beside their parent that nobody adds or deletes by hand."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Deal)
class DealAdmin(admin.ModelAdmin):
    list_display = ("id", "variant", "kind", "date", "seed", "seed_index", "par", "created_at")
    list_filter = ("kind", "variant", "date")
    search_fields = ("seed",)
    date_hierarchy = "created_at"
    readonly_fields = (
        "seed",
        "seed_index",
        "commitment",
        "par",
        "par_line",
        "solver_nodes",
        "created_at",
    )
    actions = ["replace_daily"]

    @admin.action(description="Replace selected future dailies nobody has played")
    def replace_daily(self, request: HttpRequest, queryset: QuerySet[Deal]) -> None:
        for deal in queryset:
            try:
                daily_replace_start(deal)
            except ServiceError as exc:
                self.message_user(request, f"{deal}: {exc}", messages.ERROR)
            else:
                self.message_user(
                    request, f"{deal}: being replaced with the next seed (create_dailies job)"
                )


@admin.register(Game)
class GameAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "player",
        "deal",
        "status",
        "score",
        "ply",
        "ranked",
        "assisted",
        "started_at",
        "finished_at",
    )
    list_filter = ("status", "ranked", "assisted", "deal__kind", "deal__variant")
    search_fields = ("player__username", "id")
    date_hierarchy = "started_at"
    list_select_related = ("player", "deal")
    readonly_fields = (
        "player",
        "deal",
        "status",
        "ply",
        "score",
        "started_at",
        "finished_at",
        "moves",
        "board",
    )
    exclude = ("position", "log")
    actions = ["verify_games"]

    @admin.display(description="move log")
    def moves(self, game: Game) -> str:
        """The log, one entry a line: the log is the truth and is never edited by hand."""
        return "\n".join(
            f"{e.ply}: {e.notation} at {e.created_at:%Y-%m-%d %H:%M:%S.%f}"[:-3]
            for e in game_entries(game)
        )

    @admin.display(description="position")
    def board(self, game: Game) -> str:
        """The current position, the stock included (admins only)."""
        pos = game_position(game)
        return f"{pos}\n  stock: {' '.join(pos.pile('s'))}"

    @admin.action(description="Re-verify selected games by replaying their move logs")
    def verify_games(self, request: HttpRequest, queryset: QuerySet[Game]) -> None:
        bad = []
        games = queryset.select_related("deal")
        for game in games:
            problem = game_verify(game)
            if problem:
                bad.append(f"game {game.pk}: {problem}")
        if bad:
            self.message_user(
                request,
                f"{len(bad)} of {len(games)} game(s) do not match their logs: " + "; ".join(bad),
                messages.ERROR,
            )
        else:
            self.message_user(request, f"all {len(games)} game(s) match their logs")


class ResultFlagInline(ReadOnlyInline):
    """A result's fair-play flags (``games.services.fairplay``), read-only."""

    model = ResultFlag
    fields = ("reason", "detail", "created_at")
    readonly_fields = fields


def flag_reasons(result: Result) -> str:
    """The result's flag codes, for the lists (admins only: the board never shows them)."""
    return ", ".join(f.reason for f in result.flags.all()) or "-"


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    """A day's results per variant, in board order; disqualify or remove them."""

    list_display = (
        "deal",
        "player",
        "won",
        "cards_home",
        "moves",
        "time_ms",
        "finished_at",
        "disqualified",
        "review",
        "flags",
    )
    list_filter = ("deal__variant", "deal__date", "won", "disqualified", "review")
    inlines = [ResultFlagInline]
    search_fields = ("player__username",)
    ordering = ("deal", "sort_key")
    list_select_related = ("deal", "player")
    readonly_fields = (
        "game",
        "deal",
        "player",
        "won",
        "cards_home",
        "moves",
        "time_ms",
        "finished_at",
        "sort_key",
        "disqualified",
    )
    actions = ["disqualify", "requalify", "remove_players_results"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Result]:
        return super().get_queryset(request).prefetch_related("flags")

    @admin.display(description="flags")
    def flags(self, result: Result) -> str:
        return flag_reasons(result)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Disqualify selected results (they leave the board)")
    def disqualify(self, request: HttpRequest, queryset: QuerySet[Result]) -> None:
        for result in queryset:
            result_disqualify(result_id=result.pk, disqualified=True)
        self.message_user(request, f"{queryset.count()} result(s) disqualified")

    @admin.action(description="Restore selected disqualified results")
    def requalify(self, request: HttpRequest, queryset: QuerySet[Result]) -> None:
        for result in queryset:
            result_disqualify(result_id=result.pk, disqualified=False)
        self.message_user(request, f"{queryset.count()} result(s) restored")

    @admin.action(description="Remove ALL results of the selected results' players")
    def remove_players_results(self, request: HttpRequest, queryset: QuerySet[Result]) -> None:
        players = {r.player for r in queryset.select_related("player")}
        removed = sum(results_remove_for_player(player=p) for p in players)
        self.message_user(request, f"{removed} result(s) of {len(players)} player(s) removed")


@admin.register(PlayerStats)
class PlayerStatsAdmin(admin.ModelAdmin):
    list_display = ("player", "variant", "played", "won", "best_streak", "streak", "last_won")
    list_filter = ("variant",)
    search_fields = ("player__username",)
    list_select_related = ("player",)
    readonly_fields = (
        "player",
        "variant",
        "played",
        "won",
        "best_streak",
        "streak",
        "last_won",
        "best_result",
    )


@admin.register(ReviewQueue)
class ReviewQueueAdmin(admin.ModelAdmin):
    """Flagged results nobody has reviewed yet, oldest first: clear or disqualify them."""

    list_display = ("deal", "player", "won", "cards_home", "moves", "time_ms", "reasons")
    list_filter = ("deal__variant", "deal__date", "flags__reason")
    search_fields = ("player__username",)
    ordering = ("finished_at", "pk")
    list_select_related = ("deal", "player")
    readonly_fields = ResultAdmin.readonly_fields + ("review",)
    inlines = [ResultFlagInline]
    actions = ["clear", "disqualify"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ReviewQueue]:
        queryset = super().get_queryset(request).prefetch_related("flags")
        return queryset.filter(review=Result.Review.PENDING)

    @admin.display(description="flags")
    def reasons(self, result: Result) -> str:
        return flag_reasons(result)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def _review(self, request: HttpRequest, queryset: QuerySet[ReviewQueue], verdict: str) -> None:
        ids = list(queryset.values_list("pk", flat=True))
        for result_id in ids:
            result_review(result_id=result_id, verdict=verdict)
        self.message_user(request, f"{len(ids)} result(s) {verdict}")

    @admin.action(description="Clear selected results (they stay on the board)")
    def clear(self, request: HttpRequest, queryset: QuerySet[ReviewQueue]) -> None:
        self._review(request, queryset, Result.Review.CLEARED)

    @admin.action(description="Disqualify selected results (off the board and the record)")
    def disqualify(self, request: HttpRequest, queryset: QuerySet[ReviewQueue]) -> None:
        self._review(request, queryset, Result.Review.DISQUALIFIED)


class RaceEntryInline(ReadOnlyInline):
    """A race's players, places and rating changes, read-only."""

    model = RaceEntry
    fields = ("player", "game", "joined_at", "place", "contested", "rating_before", "rating_after")
    readonly_fields = fields


@admin.register(Race)
class RaceAdmin(admin.ModelAdmin):
    """Races with their entries; void a race's rating."""

    list_display = (
        "code",
        "variant",
        "kind",
        "status",
        "opener",
        "created_at",
        "starts_at",
        "rated",
        "unrated",
    )
    list_filter = ("kind", "status", "variant", "rated", "unrated")
    search_fields = ("code", "entries__player__username")
    date_hierarchy = "created_at"
    list_select_related = ("opener",)
    readonly_fields = tuple(
        f.name for f in Race._meta.get_fields() if f.concrete and not f.auto_created
    )
    inlines = [RaceEntryInline]
    actions = ["void_rating"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Void the ratings of selected races")
    def void_rating(self, request: HttpRequest, queryset: QuerySet[Race]) -> None:
        voided = [race_rating_void(race_id=pk).code for pk in queryset.values_list("pk", flat=True)]
        self.message_user(request, f"{len(voided)} race(s) voided: " + ", ".join(voided))


@admin.register(RaceEntry)
class RaceEntryAdmin(admin.ModelAdmin):
    list_display = ("race", "player", "place", "contested", "rating_before", "rating_after")
    list_filter = ("race__kind", "contested", "race__rated")
    search_fields = ("player__username", "race__code")
    list_select_related = ("race", "player")
    readonly_fields = tuple(
        f.name for f in RaceEntry._meta.get_fields() if f.concrete and not f.auto_created
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(RaceRating)
class RaceRatingAdmin(admin.ModelAdmin):
    list_display = ("player", "family", "rating", "mu", "sigma", "races", "contested")
    list_filter = ("family",)
    search_fields = ("player__username",)
    ordering = ("family", "-rating")
    list_select_related = ("player",)
    readonly_fields = ("player", "family", "mu", "sigma", "rating", "races", "contested")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
