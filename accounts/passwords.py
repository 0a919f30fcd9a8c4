"""The password-length rule in plain words: 「8文字以上にしてください。」.

Django's own Japanese (「パスワードは最低 8 文字以上必要です。」) doubles up 最低 and 以上;
the rule is Django's, only its two messages are ours.
"""

from __future__ import annotations

from django.contrib.auth.password_validation import MinimumLengthValidator
from django.utils.translation import ngettext


class PlainMinimumLengthValidator(MinimumLengthValidator):
    def get_error_message(self) -> str:
        return ngettext(
            "Too short: use at least %(n)d character.",
            "Too short: use at least %(n)d characters.",
            self.min_length,
        ) % {"n": self.min_length}

    def get_help_text(self) -> str:
        return ngettext(
            "Use at least %(n)d character.",
            "Use at least %(n)d characters.",
            self.min_length,
        ) % {"n": self.min_length}
