"""Every page that shows players' names, with the longest names an account may have.

A name is 150 characters at most (sign-up now allows 30, but older names and the
admin's keep the field's 150) and need not break anywhere (``W`` × 150 has no place
to wrap; a katakana name is as wide as it is long). On a 360×740 phone, in Japanese
and in English, and at 1280×800, each page below is filled with two such players —
the leaderboard, histories, profiles, a replay, a match being played and one over,
an arena's standings, a challenge in the notifications and the lobby's friends card,
an invite — and nothing is wider than the screen, and every target is a full touch
target (44×44 px).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from ui_pages import FITS, built_site, fit_problems

from matches.lobby.invites import create_invite
from social import blocks, challenges
from tests.support import PASSWORD, Tables, make_user
from tournaments import services as arenas

WIDE = "W" * 150
KANA = "スペクタキュラー" * 18 + "_" * 6


def _build() -> dict[str, Any]:
    wide, kana = make_user(WIDE, PASSWORD), make_user(KANA, PASSWORD)
    tables = Tables()
    for _ in range(3):
        tables.resign(tables.start(tables.ranked(wide, kana)), kana)
    played = tables.play(tables.start(tables.casual(wide, kana)), 300, all_in=True)
    assert played.is_over
    arena = arenas.create_arena(
        "長い名前のアリーナ", 60, timezone.now() - timedelta(seconds=30), True
    )
    arenas.join(arena.pk, wide)
    arenas.join(arena.pk, kana)
    blocks.follow(wide, kana)
    challenges.create(kana, WIDE)
    invite = create_invite(kana)
    live = tables.play(tables.start(tables.casual(kana, wide)), 6)  # last: one match at a time
    return {
        "wide": wide,
        "kana": kana,
        "replay": f"/matches/{played.pk}/replay/?step=6",
        "finished": f"/matches/{played.pk}/",
        "live": f"/matches/{live.pk}/",
        "invite": f"/invites/{invite.code}/",
        "arena": f"/tournaments/{arena.pk}/",
    }


@pytest.fixture
def site(transactional_db: Any, settings: Any) -> dict[str, Any]:
    return built_site(settings, _build)


@pytest.mark.parametrize(("size", "locale"), FITS)
def test_the_longest_names_fit_every_page(
    browser: Any, live_server: Any, site: dict[str, Any], size: str, locale: str
) -> None:
    wide = site["wide"]
    pages = [
        ("leaderboard", wide, "/leaderboard/"),
        ("history", wide, f"/u/{WIDE}/matches/"),
        ("profile-own", wide, f"/u/{WIDE}/"),
        ("profile-other", wide, f"/u/{KANA}/"),
        ("replay", wide, site["replay"]),
        ("match-finished", wide, site["finished"]),
        ("match-live", wide, site["live"]),
        ("arena", wide, site["arena"]),
        ("arenas", wide, "/tournaments/"),
        ("notifications", wide, "/notifications/"),
        ("lobby", wide, "/"),
        ("invite", wide, site["invite"]),
        ("report", wide, f"/u/{KANA}/report/"),
        ("settings", wide, "/settings/"),
    ]
    problems = fit_problems(
        browser, live_server, size, locale, [(f"long-names-{n}", u, p) for n, u, p in pages]
    )
    assert problems == [], "\n".join(problems)
