"""The user model.

A custom model from the first migration, so that fields can be added later
without Django's painful mid-project switch of ``AUTH_USER_MODEL``. For now it
is exactly Django's ``AbstractUser``: the username is the name shown at the table.
"""

from django.contrib.auth.models import AbstractUser


class User(AbstractUser):
    class Meta(AbstractUser.Meta):
        swappable = "AUTH_USER_MODEL"
