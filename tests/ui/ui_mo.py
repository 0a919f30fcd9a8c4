"""Compile templates/matches/TRANSLATIONS_ja.txt into a gettext catalog (for tests only)."""

from __future__ import annotations

import struct
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "templates" / "matches" / "TRANSLATIONS_ja.txt"
PLURALS = {"%(n)s tile": "%(n)s tiles"}


def read_translations(path: Path = SOURCE) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        msgid, msgstr = line.split("\t")
        out[msgid] = msgstr
    return out


def write_mo(target: Path) -> None:
    """A minimal .mo file (GNU format) with a Japanese header and our messages."""
    messages = {
        "": "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=1; plural=0;\n"
    }
    for msgid, msgstr in read_translations().items():
        key = msgid + "\0" + PLURALS[msgid] if msgid in PLURALS else msgid
        messages[key] = msgstr
    keys = sorted(messages)
    ids = b"".join(k.encode() + b"\0" for k in keys)
    strs = b"".join(messages[k].encode() + b"\0" for k in keys)
    n = len(keys)
    header = 7 * 4
    ids_start = header + 16 * n
    strs_start = ids_start + len(ids)
    table_o, table_t = [], []
    off = 0
    for k in keys:
        table_o += [len(k.encode()), ids_start + off]
        off += len(k.encode()) + 1
    off = 0
    for k in keys:
        table_t += [len(messages[k].encode()), strs_start + off]
        off += len(messages[k].encode()) + 1
    data = struct.pack("Iiiiiii", 0x950412DE, 0, n, header, header + 8 * n, 0, 0)
    data += struct.pack(f"{2 * n}i", *table_o) + struct.pack(f"{2 * n}i", *table_t) + ids + strs
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
