"""Staff's queue of reports: open first, each with its match's event log; "mark handled"."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from matches.models import MatchEvent

from .models import Challenge, Report


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ("id", "status", "created_at", "reporter", "reported", "match", "step")
    list_filter = ("status",)
    readonly_fields = (
        "reporter", "reported", "match", "step", "reason", "expected", "created_at",
        "handled_by", "handled_at", "event_log",
    )  # fmt: skip
    fields = readonly_fields + ("status",)
    actions = ["mark_handled"]

    @admin.display(description=_("Event log of the match"))
    def event_log(self, obj: Report) -> Any:
        if obj.match_id is None:
            return "—"
        rows = MatchEvent.objects.filter(match_id=obj.match_id).order_by("id")
        text = "\n".join(json.dumps(e.data, ensure_ascii=False) for e in rows)
        return format_html('<pre class="report-log" style="white-space:pre-wrap">{}</pre>', text)

    @admin.action(description=_("Mark handled"))
    def mark_handled(self, request: HttpRequest, queryset: QuerySet[Report]) -> None:
        queryset.filter(status=Report.Status.OPEN).update(
            status=Report.Status.HANDLED, handled_by=request.user, handled_at=timezone.now()
        )

    def save_model(self, request: HttpRequest, obj: Report, form: Any, change: bool) -> None:
        if obj.status == Report.Status.HANDLED and obj.handled_at is None:
            obj.handled_by, obj.handled_at = request.user, timezone.now()
        super().save_model(request, obj, form, change)


@admin.register(Challenge)
class ChallengeAdmin(admin.ModelAdmin):
    list_display = ("id", "challenger", "challenged", "status", "created_at", "match")
    list_filter = ("status",)
