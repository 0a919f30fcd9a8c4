"""The web app's manifest (/manifest.webmanifest) and service worker (/sw.js).

The worker's source is ``static/js/sw.js``; it is served from the site's root, not
from /static/, so that its scope is the whole site (``Service-Worker-Allowed: /``),
and with ``no-cache`` so that a new deploy's worker is picked up at once. The view
puts the shell's hashed URLs in front of the source: when a CSS or JS file changes,
its hash and so the worker's bytes change, and browsers install the new worker,
which drops the old cache.
"""

from __future__ import annotations

import hashlib
import json

from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

# What every page loads, kept by the worker so a repeat visit needs only the HTML.
SHELL = ("css/base.css", "css/bots.css", "js/shell.js", "favicon.svg", "icons/icon-192.png")


@require_GET
@cache_control(max_age=3600)
def manifest(request: HttpRequest) -> JsonResponse:
    icon = static("icons/icon-512.png")
    data = {
        "name": _("Spectacular Bid"),
        "short_name": _("Spectacular Bid"),
        "description": _("Two-player Fives dominoes with an auction and a chess clock."),
        "lang": request.LANGUAGE_CODE,
        "start_url": reverse("matches:lobby"),
        "scope": "/",
        "display": "standalone",
        "background_color": "#123a30",
        "theme_color": "#123a30",
        "icons": [
            {"src": static("icons/icon-192.png"), "sizes": "192x192", "type": "image/png"},
            {"src": icon, "sizes": "512x512", "type": "image/png"},
            {
                "src": static("icons/icon-512-maskable.png"),
                "sizes": "512x512",
                "type": "image/png",
                "purpose": "maskable",
            },
        ],
    }
    return JsonResponse(data, content_type="application/manifest+json")


@require_GET
@cache_control(no_cache=True)
def service_worker(request: HttpRequest) -> HttpResponse:
    path = finders.find("js/sw.js")
    assert isinstance(path, str), "static/js/sw.js is missing"
    with open(path, encoding="utf-8") as f:
        source = f.read()
    shell = [static(name) for name in SHELL] + [reverse("offline")]
    version = hashlib.sha256(json.dumps(shell).encode() + source.encode()).hexdigest()[:12]
    head = f"const SHELL = {json.dumps(shell)};\nconst VERSION = {json.dumps(version)};\n"
    response = HttpResponse(head + source, content_type="text/javascript; charset=utf-8")
    response["Service-Worker-Allowed"] = "/"
    return response


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers ask for on pages naming no icon (the admin's).

    The icon's URL is looked up per request: with the manifest storage it carries
    a hash only once ``collectstatic`` has run, which may be after this module loads.
    """
    return HttpResponsePermanentRedirect(static("favicon.svg"))
