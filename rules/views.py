"""/rules/: the rules, with the original page's figures drawn by the live board."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from . import examples


@require_GET
def rules(request: HttpRequest) -> HttpResponse:
    """Public: a newcomer reads it before signing up."""
    return render(request, "rules/rules.html", examples.context())
