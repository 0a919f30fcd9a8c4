"""The rules page: /rules/."""

from django.urls import path

from . import views

app_name = "rules"

urlpatterns = [
    path("rules/", views.rules, name="rules"),
]
