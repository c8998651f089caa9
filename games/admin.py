"""Admin: every model with useful columns, filters and search; logs read-only."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from games.errors import ServiceError
from games.models import Deal, Game, Move, PlayerStats, Result
from games.selectors.games import game_verify
from games.services.dailies import daily_replace_start
from games.services.results import result_disqualify, results_remove_for_player


class MoveInline(admin.TabularInline):
    """The move log, read-only: the log is the truth and is never edited by hand."""

    model = Move
    fields = ("ply", "notation", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("ply",)

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
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
        "position",
    )
    inlines = [MoveInline]
    actions = ["verify_games"]

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


@admin.register(Move)
class MoveAdmin(admin.ModelAdmin):
    list_display = ("game", "ply", "notation", "created_at")
    search_fields = ("game__id", "notation", "game__player__username")
    list_select_related = ("game",)
    readonly_fields = ("game", "ply", "notation", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


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
    )
    list_filter = ("deal__variant", "deal__date", "won", "disqualified")
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
