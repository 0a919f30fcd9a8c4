"""The Japanese catalogue (locale/ja/LC_MESSAGES/django.po) is complete and compiled.

After ``make messages`` every ja entry must be translated and checked: no empty
``msgstr``, no ``#, fuzzy`` guess left behind, the same ``%(name)s`` placeholders
as the English, and the committed ``django.mo`` saying the same as the ``.po``.
The strings listed in the TRANSLATIONS_*.txt files are all in the catalogue.

polib is not a dependency, so a small parser reads the ``.po`` here.
"""

from __future__ import annotations

import ast
import gettext
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "locale" / "ja" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
LISTS = (
    ROOT / "templates" / "matches" / "TRANSLATIONS_ja.txt",
    ROOT / "history" / "TRANSLATIONS_ja.txt",
    ROOT / "matches" / "TRANSLATIONS_queue_ja.txt",
    ROOT / "accounts" / "TRANSLATIONS_safety_ja.txt",
    ROOT / "accounts" / "TRANSLATIONS_botacct_ja.txt",
    ROOT / "rules" / "TRANSLATIONS_rules_ja.txt",
    ROOT / "templates" / "TRANSLATIONS_ui_ja.txt",
    ROOT / "templates" / "matches" / "TRANSLATIONS_matchui_ja.txt",
)


@dataclass
class Entry:
    line: int
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False
    msgctxt: str | None = None
    msgid: str = ""
    msgid_plural: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        ctx = f"[{self.msgctxt}] " if self.msgctxt is not None else ""
        return f"line {self.line}: {ctx}{self.msgid!r}"


KEYWORD = re.compile(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*")$')


def parse_po(path: Path) -> list[Entry]:
    """The entries of a .po file (the header is the entry with msgid "")."""
    entries: list[Entry] = []
    cur: Entry | None = None
    target: tuple[str, int] | None = None
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines() + [""], start=1):
        line = raw.strip()
        if not line:
            if cur is not None:
                entries.append(cur)
            cur, target = None, None
            continue
        if cur is None:
            cur = Entry(line=n)
        if line.startswith("#~"):
            cur.obsolete = True
            continue
        if line.startswith("#,"):
            cur.flags |= {f.strip() for f in line[2:].split(",")}
            continue
        if line.startswith("#"):
            continue
        m = KEYWORD.match(line)
        if m:
            kw, index, value = m.group(1), m.group(2), ast.literal_eval(m.group(3))
            if kw.startswith("msgstr"):
                target = ("msgstr", int(index or 0))
                cur.msgstr[target[1]] = value
            else:
                target = (kw, 0)
                setattr(cur, kw, value)
        elif line.startswith('"') and target is not None:
            value = ast.literal_eval(line)
            if target[0] == "msgstr":
                cur.msgstr[target[1]] += value
            else:
                setattr(cur, target[0], getattr(cur, target[0]) + value)
        else:
            raise AssertionError(f"{path}:{n}: cannot read {raw!r}")
    return entries


@pytest.fixture(scope="module")
def entries() -> list[Entry]:
    found = [e for e in parse_po(PO) if not e.obsolete and e.msgid != ""]
    assert len(found) > 300  # the parser really read the catalogue
    return found


def test_no_untranslated_entries(entries: list[Entry]) -> None:
    empty = [e.name for e in entries if not e.msgstr or any(not s for s in e.msgstr.values())]
    assert empty == []


def test_no_fuzzy_entries(entries: list[Entry]) -> None:
    assert [e.name for e in entries if "fuzzy" in e.flags] == []


def test_the_header_is_japanese_and_not_fuzzy() -> None:
    (header,) = [e for e in parse_po(PO) if e.msgid == "" and not e.obsolete]
    assert "fuzzy" not in header.flags
    assert "Language: ja" in header.msgstr[0]
    assert "Plural-Forms: nplurals=1; plural=0;" in header.msgstr[0]


PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


def test_translations_keep_the_placeholders(entries: list[Entry]) -> None:
    wrong = []
    for e in entries:
        want = set(PLACEHOLDER.findall(e.msgid + (e.msgid_plural or "")))
        for s in e.msgstr.values():
            if set(PLACEHOLDER.findall(s)) != want:
                wrong.append(f"{e.name} → {s!r}")
    assert wrong == []


def test_the_compiled_catalogue_matches_the_po(entries: list[Entry]) -> None:
    """``make messages`` was run to the end: the committed .mo says what the .po says."""
    with MO.open("rb") as f:
        mo = gettext.GNUTranslations(f)
    stale = []
    for e in entries:
        if e.msgid_plural is not None and e.msgctxt is not None:
            got = mo.npgettext(e.msgctxt, e.msgid, e.msgid_plural, 1)
        elif e.msgid_plural is not None:
            got = mo.ngettext(e.msgid, e.msgid_plural, 1)
        else:
            got = mo.pgettext(e.msgctxt, e.msgid) if e.msgctxt else mo.gettext(e.msgid)
        if got != e.msgstr[0]:
            stale.append(e.name)
    assert stale == []


@pytest.mark.parametrize("source", LISTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_listed_strings_are_in_the_catalogue(entries: list[Entry], source: Path) -> None:
    known = {e.msgid for e in entries if e.msgctxt is None} | {
        e.msgid_plural for e in entries if e.msgid_plural
    }
    listed = [
        line.split("\t")[0]
        for line in source.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert listed and [m for m in listed if m not in known] == []
