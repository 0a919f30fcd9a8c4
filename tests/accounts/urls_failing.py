"""The site's URLs plus one view that fails, for the 500 page tests."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.urls import urlpatterns as site


def fails(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a fault naming DATABASES and REDIS_URL")


urlpatterns = [path("fails/", fails), *site]
