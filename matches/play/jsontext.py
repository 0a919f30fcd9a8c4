"""The JSON text of what is pushed on every move: orjson, not the standard library.

A state frame is encoded for each audience of every change (and, in version 2,
again per socket for its delta); with ``json.dumps`` that was the largest single
cost of a move after the HTML fragments (12 % of a web process's CPU at 200 live
matches, py-spy). orjson writes the same JSON about 9× faster, compact, and
non-ASCII text as UTF-8 rather than ``\\uXXXX`` escapes (a Japanese name is 3
bytes a letter instead of 6). Keys that are not strings (a seat number) become
strings, as ``json.dumps`` makes them.

Client frames are not read here: ``realtime.base.parse_json`` keeps its own checks
of hostile input.
"""

from __future__ import annotations

from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps(value: Any) -> str:
    """``value`` as compact JSON text (``json.dumps(value, separators=(",", ":"))``)."""
    return orjson.dumps(value, option=_OPTIONS).decode()


def loads(text: str | bytes) -> Any:
    """JSON text (that this server wrote) back to values."""
    return orjson.loads(text)
