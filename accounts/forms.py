from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .models import User
from .reserved import validate_signup_name

# A new name's longest: it is shown at the table, in lists and in the header, and a
# name that fills a phone's screen helps nobody (lichess allows 20). Older names, and
# those the staff give in the admin, may be up to the field's 150.
SIGNUP_NAME_MAX = 30


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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["username"]
        field.widget.attrs["maxlength"] = str(SIGNUP_NAME_MAX)
        field.help_text = gettext(
            "Letters of any script (漢字, かな, A–Z…), digits and . _ @ + - only; no spaces. "
            "Up to %(max)d characters."
        ) % {"max": SIGNUP_NAME_MAX}

    def clean_username(self) -> str | None:
        # Reserved first: "computer-3" is refused as reserved, not as taken.
        username = self.cleaned_data.get("username")
        if username and len(username) > SIGNUP_NAME_MAX:
            raise ValidationError(
                _("That name is too long: at most %(max)d characters."),
                code="too_long",
                params={"max": SIGNUP_NAME_MAX},
            )
        if username:
            validate_signup_name(username)
        cleaned: str | None = super().clean_username()
        return cleaned


class EmailForm(forms.Form):
    email = forms.EmailField(label=_("E-mail address"), max_length=254)
