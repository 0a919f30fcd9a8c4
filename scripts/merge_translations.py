"""Fill untranslated entries of locale/ja/LC_MESSAGES/django.po from TRANSLATIONS_*ja*.txt.

Whoever adds UI text can hand its Japanese over in a ``TRANSLATIONS_*ja*.txt``
file next to the code (``msgid<TAB>msgstr`` a line, ``#`` starts a comment).
``make messages`` runs this between ``makemessages`` and ``compilemessages``:
every entry of the ja catalogue whose ``msgstr`` is empty or marked fuzzy, and
whose msgid (or plural msgid) is listed, gets the listed translation. Entries
already translated are never changed: once in the catalogue, the ``.po`` is
the text to edit. Entries with a ``msgctxt`` are left to the ``.po``.

Prints what is still untranslated. Standard library only (no polib).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PO = ROOT / "locale" / "ja" / "LC_MESSAGES" / "django.po"
KEYWORD = re.compile(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?) "(.*)"$')
SKIP_DIRS = {".venv", ".git", "node_modules", "staticfiles"}


def unquote(parts: list[str]) -> str:
    text = "".join(parts)
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), text)


def quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def read_lists() -> dict[str, str]:
    table: dict[str, str] = {}
    for path in sorted(ROOT.rglob("TRANSLATIONS_*ja*.txt")):
        if SKIP_DIRS & set(path.relative_to(ROOT).parts):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#") and "\t" in line:
                msgid, msgstr = line.split("\t", 1)
                table[msgid] = msgstr
    return table


def split_entries(lines: list[str]) -> list[list[str]]:
    """The catalogue's entries, each a list of lines (blank lines separate them)."""
    entries: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            entries[-1].append(line)
        elif entries[-1]:
            entries.append([])
    return [e for e in entries if e]


def fields(entry: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    key = None
    for line in entry:
        if line.startswith("#"):
            continue
        match = KEYWORD.match(line)
        if match:
            key = match[1]
            out.setdefault(key, []).append(match[2])
        elif key and line.startswith('"'):
            out[key].append(line[1:-1])
    return out


def fill(entry: list[str], msgstr: str) -> list[str]:
    keep = []
    for line in entry:
        if line.startswith("#|"):
            continue  # the previous msgid of a fuzzy guess
        if line.startswith("#,"):
            flags = [f.strip() for f in line[2:].split(",") if f.strip() != "fuzzy"]
            if not flags:
                continue
            line = "#, " + ", ".join(flags)
        if line.startswith("msgstr"):
            keep.append(line.split(" ", 1)[0] + f' "{quote(msgstr)}"')
            continue
        if keep and keep[-1].startswith("msgstr") and line.startswith('"'):
            continue  # the old msgstr's continuation lines
        keep.append(line)
    return keep


def main(po: Path = PO) -> int:
    table = read_lists()
    entries = split_entries(po.read_text(encoding="utf-8").splitlines())
    filled, missing = 0, []
    for i, entry in enumerate(entries):
        f = fields(entry)
        msgid = unquote(f.get("msgid", []))
        if not msgid:
            continue  # the header
        strs = [unquote(v) for k, v in f.items() if k.startswith("msgstr")]
        fuzzy = any(line.startswith("#,") and "fuzzy" in line for line in entry)
        if all(strs) and not fuzzy:
            continue
        plural = unquote(f.get("msgid_plural", []))
        found = None if "msgctxt" in f else table.get(msgid) or table.get(plural)
        if found:
            entries[i] = fill(entry, found)
            filled += 1
        else:
            missing.append(msgid)
    po.write_text("\n\n".join("\n".join(e) for e in entries) + "\n", encoding="utf-8")
    print(f"merge_translations: filled {filled} entries from TRANSLATIONS_*ja*.txt")
    for msgid in missing:
        print(f"  still untranslated (edit {po.name} by hand): {msgid!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else PO))
