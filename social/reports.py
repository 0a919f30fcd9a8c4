"""Reports: a player reported from their profile, or a decision of a finished match
that the reporter thinks the rules were applied to wrongly.

A match report names the replay step (from 1) and says what was expected; staff
read it in the admin (``social.admin``) beside the match's whole event log, and
mark it handled. Only the match's players may report its decisions (they are the
ones who may see its replay), and only once it is over.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import Report

MAX_TEXT = 2000


class PlayerReportForm(forms.Form):
    reason = forms.CharField(
        label=_("What happened?"), widget=forms.Textarea(attrs={"rows": 4}), max_length=MAX_TEXT
    )


class MatchReportForm(forms.Form):
    step = forms.IntegerField(label=_("The decision (replay step)"), min_value=1)
    reason = forms.CharField(
        label=_("What was applied wrongly?"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=MAX_TEXT,
    )
    expected = forms.CharField(
        label=_("What did you expect the rules to do?"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=MAX_TEXT,
    )

    def __init__(self, *args: Any, steps: list[tuple[int, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["step"] = forms.TypedChoiceField(
            label=_("The decision (replay step)"), choices=steps, coerce=int
        )


def report_player(reporter: Any, reported: Any, reason: str) -> Report:
    return Report.objects.create(reporter=reporter, reported=reported, reason=reason)


def report_match(reporter: Any, match: Any, step: int, reason: str, expected: str) -> Report:
    seats = match.seats_of(reporter.pk)
    others = [u for u in (match.player0, match.player1) if u is not None and u.pk != reporter.pk]
    return Report.objects.create(
        reporter=reporter,
        reported=others[0] if others and seats else None,
        match=match,
        step=step,
        reason=reason,
        expected=expected,
    )
