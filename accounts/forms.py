from django.contrib.auth.forms import UserCreationForm

from .models import User


class SignUpForm(UserCreationForm):
    """Username and password twice; Django's validators decide what is acceptable."""

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username",)
