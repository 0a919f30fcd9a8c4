"""URLs: the lobby and matches at the root, accounts, the rules, the admin, and set_language."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("", include("accounts.urls")),
    path("", include("matches.urls")),
    path("", include("history.urls")),
    path("", include("rules.urls")),
]
