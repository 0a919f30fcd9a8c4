"""The pages around the match at phone and desktop width, in a real Chromium.

At 360×740 (touch) and 1280×800, in Japanese (and in English on a phone, where its
longer words are the ones that push), every interactive element of the rules page,
lobby, invite page, history, profile, leaderboard and replay is a full touch
target (44×44 px), nothing scrolls sideways, and no request fails (the favicon
included). A screenshot of each page at each width is kept in tests/e2e/artifacts/.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from ui_pages import FITS, browsing, built_site, fit_problems

from matches.lobby.invites import accept_invite, create_invite
from tests.support import PASSWORD, Tables, make_user
from tournaments import services as arenas


def _build_site() -> dict[str, Any]:
    """alice and bob with five rated matches each, a finished casual match to replay, an
    open invite and an accepted one."""
    alice, bob = make_user("alice", PASSWORD), make_user("bob_kanazawa", PASSWORD)
    tables = Tables()
    for _ in range(5):  # enough rated matches for the leaderboard
        tables.resign(tables.start(tables.ranked(alice, bob)), bob)
    played = tables.play(tables.start(tables.casual(alice, bob)), 500, all_in=True)
    assert played.is_over
    accepted = create_invite(alice)
    accept_invite(accepted.code, bob)
    arena = arenas.create_arena("毎時アリーナ", 60, timezone.now() + timedelta(hours=1), True)
    arenas.join(arena.pk, alice)
    arenas.join(arena.pk, bob)
    return {
        "alice": alice,
        "bob": bob,
        # The longest name an account may have: the header cuts it, never the screen.
        "long": make_user("スペクタキュラー" * 18 + "_" * 6, PASSWORD),
        "replay": f"/matches/{played.pk}/replay/?step=8",
        "open_invite": f"/invites/{create_invite(alice).code}/",
        "accepted_invite": f"/invites/{accepted.code}/",
        "arena": f"/tournaments/{arena.pk}/",
    }


@pytest.fixture
def site(transactional_db: Any, settings: Any) -> dict[str, Any]:
    # Five quick resigns between the same two, rated anyway for the leaderboard's sake.
    return built_site(settings, _build_site)


@pytest.mark.parametrize(("size", "locale"), FITS)
def test_every_page_fits_and_every_target_is_full_size(
    browser: Any, live_server: Any, site: dict[str, Any], size: str, locale: str
) -> None:
    pages = [
        ("rules", None, "/rules/"),
        ("lobby-visitor", None, "/"),
        ("lobby", site["alice"], "/"),
        ("invite-visitor", None, site["open_invite"]),
        ("invite-accepted", site["bob"], site["accepted_invite"]),
        ("history", site["alice"], "/u/alice/matches/"),
        ("profile", site["alice"], "/u/alice/"),
        ("leaderboard", None, "/leaderboard/"),
        ("replay", site["alice"], site["replay"]),
        # social/: another's profile (challenge, follow, block, report), settings,
        # notifications, the report forms, password reset.
        ("profile-other", site["alice"], "/u/bob_kanazawa/"),
        ("settings", site["alice"], "/settings/"),
        ("notifications", site["alice"], "/notifications/"),
        ("report-player", site["alice"], "/u/bob_kanazawa/report/"),
        ("report-match", site["alice"], site["replay"].replace("replay/", "report/")),
        ("password-reset", None, "/accounts/password_reset/"),
        ("arena", site["alice"], site["arena"]),
        ("signup", None, "/signup/"),
        ("login", None, "/accounts/login/"),
        ("lobby-long-name", site["long"], "/"),
        ("rules-long-name", site["long"], "/rules/"),
        ("profile-long-name", site["long"], f"/u/{site['long'].username}/"),
        ("history-long-name", site["long"], f"/u/{site['long'].username}/matches/"),
    ]
    problems = fit_problems(browser, live_server, size, locale, pages)
    assert problems == [], "\n".join(problems)


# A cell's text on one line: its text's boxes share a top.
one_line = (
    "e => { const r = document.createRange(); r.selectNodeContents(e);"
    " return new Set(Array.from(r.getClientRects()).map((b) => Math.round(b.top))).size <= 1; }"
)


def test_the_pages_hold_what_they_should_at_phone_width(
    browser: Any, live_server: Any, site: dict[str, Any]
) -> None:
    """The measurements above mean something: the pages are the real ones, filled."""
    with browsing(browser, live_server, "phone", site["alice"]) as page:
        page.goto("/u/alice/matches/")
        cards = page.locator("tr.history-row")
        assert cards.count() == 6
        # A row is a card: its cells stack, and the kind label keeps to one line.
        kind = page.locator("tr.history-row[data-kind=casual] td.label-cell").first
        assert kind.inner_text() == "カジュアル"
        lines = kind.evaluate(
            "td => { const r = document.createRange(); r.selectNodeContents(td);"
            " return new Set(Array.from(r.getClientRects()).map((b) => Math.round(b.top))).size; }"
        )
        assert lines == 1
        page.goto("/leaderboard/")
        assert page.locator("tr[data-player]").count() == 2
        page.goto("/")
        nav = page.locator("nav.site-nav a").all_inner_texts()
        assert nav == ["ロビー", "ランキング", "自分の対局", "ルール"]
        # One language button on a phone: the other language, a full target.
        assert page.locator(".lang-switch button:visible").all_inner_texts() == ["English"]
        # A <button> takes its variant's look: the first level filled, the others
        # outlined (a button.button rule outweighed .button--secondary and --danger).
        bg = "(b) => getComputedStyle(b).backgroundColor"
        assert page.locator("[data-testid=computer-1]").evaluate(bg) != "rgba(0, 0, 0, 0)"
        assert page.locator("[data-testid=computer-2]").evaluate(bg) == "rgba(0, 0, 0, 0)"
        page.goto("/u/bob_kanazawa/")
        assert page.locator("[data-testid=block]").evaluate(bg) == "rgb(179, 38, 30)"
        # An arena's standings: each heading and each name on one line (順位表's
        # プレイヤー broke in two, and a 12-letter name into three lines).
        page.goto(site["arena"])
        for cell in page.locator("[data-testid=standings] th, [data-testid=standings] td").all():
            assert cell.evaluate(one_line), cell.inner_text()
