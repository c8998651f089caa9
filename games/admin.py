"""Admin: every model with useful columns, filters and search; logs read-only."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from games.models import ApiToken, Deal, Game, Move
from games.selectors import game_verify


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
    list_display = ("id", "variant", "kind", "date", "seed", "created_at")
    list_filter = ("kind", "variant", "date")
    search_fields = ("seed",)
    date_hierarchy = "created_at"


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


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    readonly_fields = ("user", "prefix", "key_hash", "created_at", "last_used_at")
