"""Protocol version 2 (``/ws/matches/<id>/?v=2``, JSON sockets): the state frame as a delta.

A version-1 state frame repeats the whole board (``layout``, ~75 bytes per
placed tile) and the ``match`` block (names, ratings…) in every frame; they
were most of its 2.1 KB. A client that opts into version 2 keeps what it was
sent and gets, after the first frame, only what changed (docs/protocol.md):

- ``"layout_delta": {"keep": k, "add": [...]}`` instead of ``layout``: the
  layout is the first ``k`` entries of the one the client holds, then ``add``;
- ``"match_delta": {...}`` instead of ``match``: only the keys whose value
  changed; the others are as last sent.

Every other key is as in version 1. The first frame on a socket and the answer
to ``sync`` are whole (``layout`` and ``match``, exactly version 1's view), so
a client that lost track asks ``sync``. A delta is computed from the same
audience's view that version 1 sends, against what this socket was sent: it
can hold nothing that version 1 would not.
"""

from __future__ import annotations

from typing import Any

from matches.play import jsontext

VERSION = 2


def wants_v2(query: dict[str, list[str]]) -> bool:
    return query.get("v", ["1"])[0] == str(VERSION)


def _kept(old: list[Any], new: list[Any]) -> int:
    n = min(len(old), len(new))
    for i in range(n):
        if old[i] != new[i]:
            return i
    return n


class DeltaEncoder:
    """One socket's version-2 frames: what it was last sent, and the next frame's text."""

    def __init__(self) -> None:
        self.layout: list[Any] | None = None
        self.match: dict[str, Any] | None = None

    def view(self, view: dict[str, Any], *, whole: bool = False) -> dict[str, Any]:
        """The version-2 view for ``view`` (version 1's), and remember it as sent."""
        out = dict(view)
        layout, match = view.get("layout"), view["match"]
        if not whole and self.layout is not None and layout is not None:
            keep = _kept(self.layout, layout)
            del out["layout"]
            out["layout_delta"] = {"keep": keep, "add": layout[keep:]}
        if not whole and self.match is not None and self.match.keys() == match.keys():
            del out["match"]
            out["match_delta"] = {k: v for k, v in match.items() if self.match[k] != v}
        self.layout, self.match = layout, match
        return out

    def frame(self, view: dict[str, Any], *, whole: bool = False) -> str:
        body = self.view(view, whole=whole)
        version = view["match"]["version"]
        return jsontext.dumps({"type": "state", "version": version, "view": body})


def apply(held: dict[str, Any] | None, view: dict[str, Any]) -> dict[str, Any]:
    """A client's side: the whole (version-1) view from the view ``held`` and a version-2 one."""
    out = dict(view)
    if "layout_delta" in out:
        if held is None or held.get("layout") is None:
            raise ValueError("a layout delta without a layout to apply it to: send sync")
        d = out.pop("layout_delta")
        out["layout"] = list(held["layout"][: d["keep"]]) + list(d["add"])
    if "match_delta" in out:
        if held is None or "match" not in held:
            raise ValueError("a match delta without a match block: send sync")
        out["match"] = {**held["match"], **out.pop("match_delta")}
    return out
