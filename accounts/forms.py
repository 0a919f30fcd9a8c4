from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from .models import User
from .reserved import validate_signup_name


class SignUpForm(UserCreationForm):
    """Username and password twice; Django's validators decide what is acceptable.

    On top of the username rules every account obeys (``accounts.names``), a new
    name may not be reserved or mix alphabets (``accounts.reserved``). Those apply
    here only, so that the staff's admin and every older name stay as they are.

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

    def clean_username(self) -> str | None:
        # Reserved first: "computer-3" is refused as reserved, not as taken.
        username = self.cleaned_data.get("username")
        if username:
            validate_signup_name(username)
        cleaned: str | None = super().clean_username()
        return cleaned


class EmailForm(forms.Form):
    email = forms.EmailField(label=_("E-mail address"), max_length=254)
