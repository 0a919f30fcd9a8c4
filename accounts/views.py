import math
from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from . import bot_accounts, email, signup_limit, tokens
from .forms import SignUpForm
from .mail import mail_is_logged
from .models import BotToken, User
from .stats import record_for


def safe_next(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or "/"
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return "/"


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and log straight in."""
    if request.user.is_authenticated:
        return redirect(safe_next(request))
    if request.method == "POST":
        # Over this address's sign-ups: refused before the form is even read.
        wait = signup_limit.seconds_left(request)
        if wait is not None:
            return _signup_refused(request, SignUpForm(request.POST), wait)
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        wait = signup_limit.take(request)
        if wait is not None:  # the last sign-up allowed went through meanwhile
            return _signup_refused(request, form, wait)
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        if form.cleaned_data.get("email"):
            email.send_confirmation(request, user, form.cleaned_data["email"])
            messages.info(request, _confirm_sent(form.cleaned_data["email"]))
        return redirect(safe_next(request))
    return render(request, "accounts/signup.html", {"form": form, "next": safe_next(request)})


def _confirm_sent(address: str) -> str:
    text = _("We sent a link to %(address)s: follow it to confirm the address.") % {
        "address": address
    }
    if mail_is_logged():
        text += " " + _("(This server sends no mail: it is written to the server's log.)")
    return text


@login_required
@require_POST
def email_change(request: HttpRequest) -> HttpResponse:
    """The settings page's address: a confirmation link goes to it."""
    from .forms import EmailForm

    form = EmailForm(request.POST)
    if form.is_valid():
        email.send_confirmation(request, request.user, form.cleaned_data["email"])
        messages.info(request, _confirm_sent(form.cleaned_data["email"]))
    else:
        messages.error(request, _("Enter a valid e-mail address."))
    return redirect(safe_next(request))


@require_http_methods(["GET"])
def email_confirm(request: HttpRequest, token: str) -> HttpResponse:
    try:
        user, address = email.confirm(token)
    except ValueError:
        messages.error(request, _("This link is not valid, or too old: ask for a new one."))
        return redirect("/")
    messages.success(
        request, _("Your e-mail address %(address)s is confirmed.") % {"address": address}
    )
    return redirect("social:settings" if request.user == user else "login")


def _signup_refused(request: HttpRequest, form: SignUpForm, wait_s: int) -> HttpResponse:
    """The sign-up page again, 429, saying that this address made enough accounts for now."""
    minutes = max(1, math.ceil(wait_s / 60))
    response = render(
        request,
        "accounts/signup.html",
        {"form": form, "next": safe_next(request), "limited": {"minutes": minutes}},
        status=429,
    )
    response["Retry-After"] = str(wait_s)
    return response


def profile(request: HttpRequest, username: str) -> HttpResponse:
    """A player's public page: matches played, won and lost."""
    # No name holds a NUL (accounts/names.py) and PostgreSQL text cannot: not found, not a 500.
    if "\x00" in username:
        raise Http404
    player = get_object_or_404(User, username=username, is_active=True)
    return _profile(request, player)


def _profile(request: HttpRequest, player: Any, *, status: int = 200, **bot: Any) -> HttpResponse:
    from history.profile import extras  # rating, rating chart, recent matches

    ctx = {
        "player": player,
        "record": record_for(player),
        "profile_extras": extras(player, request.user),
    }
    if request.user == player:
        # The owner's bot-account card: can it become one, its token (``bot``: a
        # token just made, to show once).
        ctx["bot"] = {
            "fresh": not player.is_bot and bot_accounts.is_fresh(player),
            "token": BotToken.objects.filter(user_id=player.pk).first(),
            **bot,
        }
    return render(request, "accounts/profile.html", ctx, status=status)


# --- the owner's bot account (accounts/bot_accounts.py) ----------------------------


@login_required
@require_POST
def become_bot(request: HttpRequest) -> HttpResponse:
    """Turn the logged-in (fresh) account into a bot account, once confirmed."""
    if request.POST.get("confirm") != "yes":
        messages.error(request, _("Confirm first: this cannot be undone."))
    else:
        try:
            bot_accounts.become_bot(request.user)
            messages.success(request, _("This is a bot account now. Create its API token below."))
        except bot_accounts.BotAccountError as e:
            messages.error(request, e.message)
    return redirect("profile", username=request.user.get_username())


def _issue_key(group: str, request: HttpRequest) -> str:
    return str(request.user.pk)


@never_cache
@login_required
@require_POST
def bot_token(request: HttpRequest) -> HttpResponse:
    """``op``: ``create`` or ``rotate`` (the page shows the new token once), ``revoke``."""
    user = request.user
    op = request.POST.get("op", "")
    if op == "revoke":
        if bot_accounts.revoke_token(user):
            messages.success(request, _("The API token is revoked: it no longer works."))
        return redirect("profile", username=user.get_username())
    if op not in ("create", "rotate"):
        messages.error(request, _("Unknown operation."))
        return redirect("profile", username=user.get_username())
    if tokens.over_limit(request, "bot-token-issue", _issue_key, tokens.issue_rate()):
        messages.error(request, _("Too many new tokens: wait a while before making another."))
        return _profile(request, user, status=429)
    try:
        token = bot_accounts.issue_token(user)
    except bot_accounts.BotAccountError as e:
        messages.error(request, e.message)
        return redirect("profile", username=user.get_username())
    # Rendered, not redirected: the token is in this one answer and nowhere else.
    return _profile(request, user, new_token=token)
