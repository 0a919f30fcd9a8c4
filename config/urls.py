"""URLs: the lobby and matches at the root, accounts, the rules, the admin, and set_language."""

from django.contrib import admin
from django.urls import include, path
from django.views.generic.base import TemplateView

from config import pwa
from matches.clock import metrics
from matches.health import HealthView  # noqa: E402

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin's).
    path("favicon.ico", pwa.favicon, name="favicon"),
    path("i18n/", include("django.conf.urls.i18n")),
    # The web app: its manifest, its service worker and the page the worker shows offline.
    path("manifest.webmanifest", pwa.manifest, name="manifest"),
    path("sw.js", pwa.service_worker, name="service_worker"),
    path("offline/", TemplateView.as_view(template_name="offline.html"), name="offline"),
    # Database, Redis, the Celery worker and the deadline sweeper (matches/health.py).
    path("healthz", HealthView.as_view(), name="healthz"),
    # Prometheus metrics of this web process, staff only (matches/clock/metrics.py).
    path("metrics", metrics.view, name="metrics"),
    path("", include("accounts.urls")),
    path("", include("matches.urls")),
    path("", include("history.urls")),
    path("", include("rules.urls")),
    path("", include("social.urls")),
    path("", include("tournaments.urls")),
]
