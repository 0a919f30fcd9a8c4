"""``/settings/``: language, sound, vibration, notifications, e-mail; export; delete.

Language is Django's own ``set_language`` (a cookie, as the header's switch);
sound and vibration are kept in :class:`~social.models.Preferences` and given
to the match page's turn alert (its ``localStorage`` switch) by the page;
Web Push is opted into by the browser (``static/js/settings.js``), which posts
its subscription to ``/api/push/``.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.mail import mail_is_logged
from matches.play.errors import ServiceError

from . import account, webpush
from .models import Preferences, PushSubscription


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def settings_page(request: HttpRequest) -> HttpResponse:
    prefs, _created = Preferences.objects.get_or_create(user=request.user)
    if request.method == "POST":
        prefs.sound = request.POST.get("sound") == "on"
        prefs.vibration = request.POST.get("vibration") == "on"
        prefs.push = request.POST.get("push") == "on"
        prefs.save()
        if not prefs.push:
            PushSubscription.objects.filter(user=request.user).delete()
        messages.success(request, _("Settings saved."))
        return redirect("social:settings")
    return render(
        request,
        "social/settings.html",
        {
            "prefs": prefs,
            "mail_is_logged": mail_is_logged(),
            "push_key": webpush.application_server_key(),
            "push_subscribed": PushSubscription.objects.filter(user=request.user).exists(),
        },
    )


@never_cache
@login_required
@require_GET
def export_view(request: HttpRequest) -> HttpResponse:
    data = account.export(request.user)
    response = HttpResponse(
        json.dumps(data, ensure_ascii=False, indent=1), content_type="application/json"
    )
    response["Content-Disposition"] = (
        f'attachment; filename="spectacular-bid-{request.user.pk}.json"'
    )
    return response


@login_required
@require_POST
def delete_view(request: HttpRequest) -> HttpResponse:
    user = request.user
    if not user.check_password(request.POST.get("password", "")):
        messages.error(request, _("That is not your password: nothing was deleted."))
        return redirect("social:settings")
    if request.POST.get("confirm") != "yes":
        messages.error(request, _("Tick the box to confirm: nothing was deleted."))
        return redirect("social:settings")
    try:
        account.delete_account(user)
    except ServiceError as e:
        messages.error(request, e.message)
        return redirect("social:settings")
    logout(request)
    messages.success(
        request,
        _(
            "Your account is deleted. Your matches stay in your opponents' histories"
            " under an anonymous name."
        ),
    )
    return redirect("/")
