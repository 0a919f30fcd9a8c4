from django.contrib import admin

from .models import Invite, Match, MatchEvent


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "status", "player0", "player1", "guest_name", "winner_seat",
                    "end_reason", "created_at", "finished_at")
    list_filter = ("kind", "status", "end_reason", "flagged_for_void")
    search_fields = ("player0__username", "player1__username", "guest_name")
    raw_id_fields = ("player0", "player1")
    # The state holds both hands and the talon: shown read-only, to staff only.
    readonly_fields = ("state", "version", "ready", "ready_deadline_ms", "created_at",
                       "started_at", "finished_at")


@admin.register(MatchEvent)
class MatchEventAdmin(admin.ModelAdmin):
    list_display = ("id", "match", "kind", "at_ms", "version")
    list_filter = ("kind",)
    raw_id_fields = ("match",)


@admin.register(Invite)
class InviteAdmin(admin.ModelAdmin):
    list_display = ("code", "creator", "status", "accepted_by", "created_at", "expires_at")
    list_filter = ("status",)
    raw_id_fields = ("creator", "accepted_by", "match")
