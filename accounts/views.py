from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from .forms import SignUpForm
from .models import User
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
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect(safe_next(request))
    return render(request, "accounts/signup.html", {"form": form, "next": safe_next(request)})


def profile(request: HttpRequest, username: str) -> HttpResponse:
    """A player's public page: matches played, won and lost."""
    player = get_object_or_404(User, username=username, is_active=True)
    from history.profile import extras  # rating, rating chart, recent matches

    return render(
        request,
        "accounts/profile.html",
        {
            "player": player,
            "record": record_for(player),
            "profile_extras": extras(player, request.user),
        },
    )
