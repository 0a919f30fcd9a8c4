from typing import Any

from django.contrib import admin, messages
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from .models import Invite, Match, MatchEvent


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "kind",
        "status",
        "player0",
        "player1",
        "guest_name",
        "winner_seat",
        "end_reason",
        "created_at",
        "finished_at",
    )
    list_filter = ("kind", "status", "end_reason")
    search_fields = ("player0__username", "player1__username", "guest_name")
    raw_id_fields = ("player0", "player1")
    # The state holds both hands and the talon: shown read-only, to staff only.
    readonly_fields = (
        "state",
        "version",
        "ready",
        "ready_deadline_ms",
        "wake_at_ms",
        "created_at",
        "started_at",
        "finished_at",
    )


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


@admin.action(description=gettext_lazy("Void after a service fault"))
def void_after_fault(modeladmin: admin.ModelAdmin, request: Any, queryset: Any) -> None:
    """Staff: void the selected live matches after a service fault (RULES §8).

    A reason typed into a match's void_reason beforehand is kept; otherwise the
    standard one is shown to the players.
    """
    from matches.clock.voiding import VOID_STAFF, void

    ids = list(queryset.values_list("pk", flat=True))
    done = void(ids, VOID_STAFF)
    if done:
        modeladmin.message_user(request, _("Voided: %(ids)s") % {"ids": ", ".join(map(str, done))})
    skipped = len(ids) - len(done)
    if skipped:
        modeladmin.message_user(
            request,
            _("%(n)d not voided: only live matches can be.") % {"n": skipped},
            level=messages.WARNING,
        )


MatchAdmin.actions = (*(MatchAdmin.actions or ()), void_after_fault)
