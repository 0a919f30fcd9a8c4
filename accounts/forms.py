from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from .models import User


class SignUpForm(UserCreationForm):
    """Username and password twice; Django's validators decide what is acceptable.

    The e-mail address is optional and not saved here: a link is mailed to it,
    and it is kept once followed (accounts/email.py).
    """

    email = forms.EmailField(
        label=_("E-mail address (optional)"),
        required=False,
        help_text=_("Only to reset a forgotten password. We send a link to confirm it."),
    )

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username",)


class EmailForm(forms.Form):
    email = forms.EmailField(label=_("E-mail address"), max_length=254)
