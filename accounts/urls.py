"""Sign-up at /signup/, Django's auth views at /accounts/..., profiles at /u/<username>/.

Only the auth views that work without e-mail are routed (log in, log out,
password change); the URL names are Django's own (``login``, ``logout``,
``password_change``, ``password_change_done``), templates in templates/registration/.
"""

from django.contrib.auth import views as auth_views
from django.urls import path

from . import language, views

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("lang/", language.switch_language, name="switch_language"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password_change/",
        auth_views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password_change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("u/<str:username>/", views.profile, name="profile"),
    path("accounts/bot/", views.become_bot, name="become_bot"),
    path("accounts/bot/token/", views.bot_token, name="bot_token"),
]
