"""Admin of personal API tokens: listed and searchable, never edited by hand."""

from __future__ import annotations

from django.contrib import admin

from accounts.models import ApiToken, Guest


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    readonly_fields = ("user", "prefix", "key_hash", "created_at", "last_used_at")


@admin.register(Guest)
class GuestAdmin(admin.ModelAdmin):
    """Guests (a visitor's practice account): listed, never edited; ``guests_purge`` deletes
    the stale ones."""

    list_display = ("user", "created_at")
    readonly_fields = ("user", "address", "created_at")
    ordering = ("-created_at",)
