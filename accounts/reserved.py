"""Names nobody may sign up with, and the site's own computer accounts.

**Reserved names.** A name that could pass for the site, its staff or its
programs (``computer-3``, ``admin``, ``運営``, ``公式`` …) would let anyone speak
with the site's voice at the table and on the leaderboard, so sign-up refuses
it. The comparison is made on a folded form of the name (:func:`folded`):
NFKC (full-width ``ＡＤＭＩＮ`` and half-width ``ｺﾝﾋﾟｭｰﾀｰ`` are their usual
forms), case-folded, hiragana as katakana (``こんぴゅーたー`` is ``コンピューター``),
with digits and the symbols ``. _ @ + -`` left out (``Admin_2``, ``bot-01``).
A folded name is refused when it

- begins or ends with one of :data:`RESERVED_AFFIXES` (``computer-9``,
  ``siteadmin``, ``運営者``; but not ``badminton``), or
- is one of :data:`RESERVED_WORDS` (short words that are also parts of
  ordinary names: ``bot`` and ``staff`` are refused, ``staffordshire`` is not).

**Mixed scripts.** ``аdmin`` with a Cyrillic ``а`` looks like ``admin`` but is
another name. A username may use letters of one script, or the script
combinations that one language writes together (Unicode TR39's "highly
restrictive" level): Japanese mixes Han, hiragana, katakana and Latin
(``山田たろう``, ``タロウ3``, ``山田taro``), Korean Han, Hangul and Latin, Chinese
Han, Bopomofo and Latin. Digits and symbols belong to every script. The script
of each character comes from ``confusable_homoglyphs`` (Unicode's Scripts data).

**The computer accounts** (``bots`` levels 1–3) are made by a data migration
(accounts/migrations/0005) with the BOT flag and an unusable password, and are
found by ``User.computer_level`` (unique), never by username: a name is
something a person can take, a level is not. :func:`computer_account` makes one
again if it is missing (a test database emptied between tests).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from confusable_homoglyphs import categories
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext_lazy as _

# Refused at the start or the end of a folded name.
RESERVED_AFFIXES = (
    "computer",
    "admin",
    "administrator",
    "moderator",
    "official",
    "spectacular",
    "sysop",
    "webmaster",
    "superuser",
    "コンピュータ",  # コンピューター too (a prefix of it)
    "管理者",
    "管理人",
    "運営",
    "公式",
    "モデレータ",
    "スペクタキュラ",
)
# Refused as the whole folded name.
RESERVED_WORDS = frozenset(
    {
        "bot",
        "bots",
        "robot",
        "cpu",
        "staff",
        "system",
        "support",
        "root",
        "mod",
        "mods",
        "operator",
        "security",
        "help",
        "info",
        "ボット",
        "ロボット",
        "システム",
        "スタッフ",
        "サポート",
        "ヘルプ",
        "管理",
        "事務局",
        "オペレータ",
        "オペレーター",
    }
)
_LEFT_OUT = frozenset("._@+-")

# Scripts that one language writes side by side (TR39 "highly restrictive").
_TOGETHER = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
)
_ANY_SCRIPT = frozenset({"COMMON", "INHERITED"})

_SCRIPT_NAMES = {
    "LATIN": _("Latin"),
    "CYRILLIC": _("Cyrillic"),
    "GREEK": _("Greek"),
    "HAN": _("kanji"),
    "HIRAGANA": _("hiragana"),
    "KATAKANA": _("katakana"),
}


def folded(name: str) -> str:
    """``name`` as the reserved-name rule compares it (see the module docstring)."""
    out = []
    for ch in unicodedata.normalize("NFKC", name).casefold():
        if ch in _LEFT_OUT or ch.isspace() or unicodedata.category(ch) == "Nd":
            continue
        if "\u3041" <= ch <= "\u3096":  # hiragana -> the katakana of the same sound
            ch = chr(ord(ch) + 0x60)
        out.append(ch)
    return "".join(out)


def is_reserved(name: str) -> bool:
    f = folded(name)
    if not f:  # digits and symbols only ("123"): nothing to pass for
        return False
    return f in RESERVED_WORDS or any(f.startswith(a) or f.endswith(a) for a in RESERVED_AFFIXES)


def _script(ch: str) -> str:
    return str(categories.alias(ch) or "COMMON")


def check_scripts(name: str) -> None:
    """Refuse a username that mixes scripts no language writes together (``аdmin``)."""
    scripts: dict[str, list[str]] = {}
    for ch in unicodedata.normalize("NFKC", name):
        s = _script(ch)
        if s not in _ANY_SCRIPT:
            scripts.setdefault(s, []).append(ch)
    if len(scripts) <= 1 or any(set(scripts) <= ok for ok in _TOGETHER):
        return
    # Name the characters of the less used scripts: those are the odd ones out.
    main = max(scripts, key=lambda s: len(scripts[s]))
    odd = "".join(dict.fromkeys(ch for s, chs in scripts.items() if s != main for ch in chs))
    names = ", ".join(str(_SCRIPT_NAMES.get(s, s.title())) for s in scripts)
    raise ValidationError(
        _(
            "A username cannot mix these alphabets (%(scripts)s): “%(chars)s” can look "
            "like a letter of another alphabet. Use the letters of one."
        ),
        code="mixed_script",
        params={"scripts": names, "chars": odd},
    )


def validate_signup_name(name: str) -> None:
    """What sign-up checks beyond :func:`accounts.names.validate_username`."""
    check_scripts(name)
    if is_reserved(name):
        raise ValidationError(
            _(
                "“%(name)s” is reserved: it could be mistaken for the site, its staff or "
                "its computer players. Choose another name."
            ),
            code="reserved",
            params={"name": name},
        )


# --- the computer accounts ------------------------------------------------------------


def computer_username(level: int) -> str:
    return f"computer-{level}"


def make_computer_account(user_model: Any, level: int) -> Any:
    """Create the level's computer account (the migration's and :func:`computer_account`'s).

    Its name is ``computer-<level>``, or, should a person already hold that name
    (signed up before names were reserved), ``computer-<level>.2`` and so on:
    the account is found by its level, so the name only has to be free.
    """
    from django.contrib.auth.hashers import make_password

    base = computer_username(level)
    name, n = base, 1
    while user_model.objects.filter(username=name).exists():
        n += 1
        name = f"{base}.{n}"
    return user_model.objects.create(
        username=name,
        is_bot=True,
        computer_level=level,
        password=make_password(None),  # unusable: nobody logs in as the computer
    )


def computer_account(level: int) -> Any:
    """The account the computer plays with at ``level``, found by its level."""
    from .models import User

    user = User.objects.filter(computer_level=level).first()
    if user is not None:
        return user
    try:
        with transaction.atomic():
            return make_computer_account(User, level)
    except IntegrityError:  # made at the same moment elsewhere (unique level)
        return User.objects.get(computer_level=level)
