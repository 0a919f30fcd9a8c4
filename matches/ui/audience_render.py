"""Spectators' HTML fragments, rendered once per audience, version and language — not per socket.

A match watched by many shows them all the same page: before this, each
spectator's socket rendered every changed fragment itself, so a move cost
one render per spectator. Here the first spectator's socket to need a
version renders all of its fragments once (``fragments.render_changed`` against
nothing sent); every other socket of the same match, version, language and
record of events takes the same text and sends only the fragments that
differ from what it sent before. (A seat's view is its own, with its own
hand: each seat's socket renders as before.)

Only the event loop's thread calls this, so the cache needs no lock; it keeps
the last :data:`KEEP` renders, enough for every watched match's current version.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from matches.ui.fragments import FRAGMENTS, render_changed

KEEP = 512

_cache: OrderedDict[tuple[Any, ...], dict[str, str]] = OrderedDict()
renders = 0  # how many times a whole audience's fragments were rendered (tests, metrics)


def key_of(match_id: int, view: dict[str, Any], language: str) -> tuple[Any, ...]:
    """What makes two spectators' pages the same: the version, the language and the record."""
    seqs = tuple(e.get("seq") for e in view.get("events") or ())
    return (match_id, view["match"]["version"], language, seqs)


def changed(match_id: int, view: dict[str, Any], language: str, sent: dict[str, str]) -> str:
    """The fragments of the audience's ``view`` that this socket has not sent (``sent`` updated).

    Call inside ``translation.override(language)``, as for ``render_changed``.
    """
    global renders
    key = key_of(match_id, view, language)
    full = _cache.get(key)
    if full is None:
        full = {}
        render_changed(view, full)  # every fragment, as to a socket that has sent nothing
        renders += 1
        _cache[key] = full
        while len(_cache) > KEEP:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(key)
    out = []
    for fid, _template in FRAGMENTS:
        html = full.get(fid)
        if html is not None and sent.get(fid) != html:
            sent[fid] = html
            out.append(html)
    return "".join(out)
