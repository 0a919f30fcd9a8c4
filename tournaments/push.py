"""Pushes to arena pages (after commits): standings at most ~1/s, and each player's own news.

Groups:

- ``arena.<id>``: every socket on the arena's page (and on its matches' pages).
  Gets ``{"type": "arena.standings", ...}`` from :func:`push_standings`, which the
  periodic job runs every second: an arena whose ``standings_version`` moved
  since its last push gets one message, however many results came in — so a
  socket receives at most one standings frame a second whatever the size. The
  compare-and-set on ``pushed_version`` makes two workers push a version once.
- ``arena.<id>.user.<uid>``: one player's sockets. ``arena.you`` when their own
  state changed (join, pause, a match ended), ``arena.paired`` with the new
  match's URL, which the page follows at once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.db.models import F
from django.urls import reverse

log = logging.getLogger(__name__)

TOP_ROWS = 50  # rows a socket is sent (plus its own): the page's table


def arena_group(arena_id: int) -> str:
    return f"arena.{arena_id}"


def user_group(arena_id: int, user_id: int) -> str:
    return f"arena.{arena_id}.user.{user_id}"


def send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, message)
    except Exception:  # a push is a courtesy: the database is the truth
        log.exception("arena push to %s failed", group)


def you_after_commit(arena_id: int, user_id: int) -> None:
    def go() -> None:
        from .standings import you

        send(user_group(arena_id, user_id), {"type": "arena.you", "you": you(arena_id, user_id)})

    transaction.on_commit(go)


def paired_after_commit(arena_id: int, matches: Sequence[tuple[int, Sequence[int]]]) -> None:
    """After the commit, tell each player of each new ``(match_id, user_ids)`` where to go
    (all of a pairing pass's messages in one trip to the channel layer)."""

    def go() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        messages = [
            (
                user_group(arena_id, uid),
                {"type": "arena.paired", "match_id": match_id, "url": url},
            )
            for match_id, user_ids in matches
            for url in [reverse("matches:match", args=[match_id])]
            for uid in user_ids
        ]

        async def send_all() -> None:
            for group, message in messages:
                try:
                    await layer.group_send(group, message)
                except Exception:  # a push is a courtesy: the database is the truth
                    log.exception("arena push to %s failed", group)

        async_to_sync(send_all)()

    transaction.on_commit(go)


def push_standings() -> list[int]:
    """Push the standings of every arena that changed since its last push; the ids pushed."""
    from .models import Arena
    from .standings import table

    done = []
    rows = Arena.objects.filter(standings_version__gt=0).exclude(
        pushed_version=F("standings_version")
    )
    for arena_id, version in rows.values_list("pk", "standings_version"):
        # Compare-and-set: only one process pushes a version.
        if (
            not Arena.objects.filter(pk=arena_id, standings_version=version)
            .exclude(pushed_version=version)
            .update(pushed_version=version)
        ):
            continue
        # The version lets each process encode the push once for all its sockets.
        message = {"type": "arena.standings", "version": version, **table(arena_id)}
        send(arena_group(arena_id), message)
        done.append(arena_id)
    return done
