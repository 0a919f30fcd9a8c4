"""What a name may be: usernames at sign-up and the guest's name in a same-device match.

Names are shown to other people, at the table and in lists, so no name may hold
a character that hides or rearranges what is shown around it:

- control characters (Unicode Cc, and the line and paragraph separators Zl, Zp):
  line breaks, tabs, escapes;
- invisible format characters (Cf): zero-width spaces and joiners, the soft
  hyphen, and the bidirectional overrides (U+202E turns "abc" into "cba");
- surrogates, private-use and unassigned code points (Cs, Co, Cn): no font
  draws them the same for everyone;
- a combining mark (accent) at the start of a word, which would attach to the
  text or space before it, or more than ``MAX_MARKS_IN_A_ROW`` marks on one letter
  (the stacked "Zalgo" text that spills over the lines around it);
- nothing at all once the spaces around it are trimmed.

Letters of every script are welcome (太郎, たろう, Taro, Ωμέγα).

A **username** is one word: letters (any script, with their accents), digits,
and ``. _ @ + -`` (Django's symbols, so every older username stays valid); no
spaces, no other symbols; at most 150 characters. Full-width letters and digits
are the same as half-width ones (Django folds names with NFKC before this check).

A **guest name** may hold anything else that prints — spaces between words,
symbols, emoji — up to ``GUEST_NAME_MAX`` characters; its spaces are trimmed and
runs of spaces become one.

Each fault has its own message, so a person knows what to change.
"""

from __future__ import annotations

import unicodedata

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

GUEST_NAME_MAX = 40
USERNAME_SYMBOLS = "._@+-"
MAX_MARKS_IN_A_ROW = 4  # enough for any script's stacked vowel signs and tones

USERNAME_HELP = _(
    "Letters of any script (漢字, かな, A–Z…), digits and . _ @ + - only; no spaces. "
    "Up to 150 characters."
)


def _codepoint(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def check_printable(name: str) -> None:
    """Refuse the characters no name may hold (the module docstring lists them)."""
    marks = 0
    for i, ch in enumerate(name):
        category = unicodedata.category(ch)
        if category == "Cc" or category in ("Zl", "Zp"):
            raise ValidationError(
                _(
                    "Names cannot contain control characters such as line breaks or tabs "
                    "(%(code)s)."
                ),
                code="control",
                params={"code": _codepoint(ch)},
            )
        if category == "Cf":
            raise ValidationError(
                _(
                    "Names cannot contain invisible formatting characters such as zero-width "
                    "spaces or text-direction marks (%(code)s)."
                ),
                code="invisible",
                params={"code": _codepoint(ch)},
            )
        if category in ("Cs", "Co", "Cn"):
            raise ValidationError(
                _("Names cannot contain unassigned or private-use characters (%(code)s)."),
                code="unassigned",
                params={"code": _codepoint(ch)},
            )
        marks = marks + 1 if category.startswith("M") else 0
        if marks == 1 and (i == 0 or name[i - 1].isspace()):
            raise ValidationError(
                _("A word in a name cannot begin with an accent or other combining mark."),
                code="leading_mark",
            )
        if marks > MAX_MARKS_IN_A_ROW:
            raise ValidationError(
                _("Too many accents or marks on one letter."), code="stacked_marks"
            )


def validate_username(value: str) -> None:
    """The username field's validator (sign-up, the admin): see the module docstring."""
    check_printable(value)
    if any(unicodedata.category(ch) == "Zs" for ch in value):
        raise ValidationError(_("A username cannot contain spaces."), code="space")
    refused = "".join(
        dict.fromkeys(
            ch
            for ch in value
            if unicodedata.category(ch)[0] not in "LMN" and ch not in USERNAME_SYMBOLS
        )
    )
    if refused:
        raise ValidationError(
            _("A username cannot contain “%(chars)s”: use letters, digits and . _ @ + - only."),
            code="symbol",
            params={"chars": refused},
        )


def clean_guest_name(raw: str) -> str:
    """The guest's name as it will be shown, or ``ValidationError`` with a translated message.

    Folds full-width letters to their usual form (NFKC, as usernames are), trims
    the spaces around the name and makes each run of spaces inside it one space.
    A tab or line break is refused wherever it stands, not trimmed away.
    """
    name = unicodedata.normalize("NFKC", raw or "")
    check_printable(name)
    name = " ".join(name.split())
    if not name:
        raise ValidationError(_("Give the second player a name."), code="empty")
    if len(name) > GUEST_NAME_MAX:
        raise ValidationError(
            _("That name is too long: at most %(max)d characters."),
            code="too_long",
            params={"max": GUEST_NAME_MAX},
        )
    return name
