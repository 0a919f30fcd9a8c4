"""Sign-up at /signup/, Django's auth views at /accounts/..., profiles at /u/<username>/.

Django's own views with their own URL names (``login``, ``logout``,
``password_change``..., ``password_reset``, ``password_reset_done``,
``password_reset_confirm``, ``password_reset_complete``), templates in
templates/registration/; the e-mail address's confirmation link in accounts/email.py.
"""

from django.contrib.auth import views as auth_views
from django.urls import path

from . import language, views
from .mail import mail_is_logged

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
    path(
        "accounts/password_reset/",
        auth_views.PasswordResetView.as_view(
            extra_context={"mail_is_logged": mail_is_logged},
            email_template_name="registration/password_reset_email.txt",
            subject_template_name="registration/password_reset_subject.txt",
        ),
        name="password_reset",
    ),
    path(
        "accounts/password_reset/done/",
        auth_views.PasswordResetDoneView.as_view(extra_context={"mail_is_logged": mail_is_logged}),
        name="password_reset_done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("accounts/email/", views.email_change, name="email_change"),
    path("accounts/email/confirm/<str:token>/", views.email_confirm, name="email_confirm"),
    path("u/<str:username>/", views.profile, name="profile"),
    path("accounts/bot/", views.become_bot, name="become_bot"),
    path("accounts/bot/token/", views.bot_token, name="bot_token"),
]
