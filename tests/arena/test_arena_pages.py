"""The arena pages as served: the list, an arena, the match bar, the profile, the rules."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from tests.arena.conftest import current, make_arena, players, win
from tests.support import Tables
from tournaments import services

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_the_list_shows_upcoming_running_and_finished_arenas_in_japanese() -> None:
    running = make_arena()
    upcoming = services.create_arena("Later", 60, timezone.now() + timedelta(hours=1), False)
    over = make_arena(started_ago_s=2 * 3600)
    services.finish_arena(over.pk)
    html = Client().get("/tournaments/").content.decode()
    assert "アリーナ" in html and "開催中" in html
    for key, a in (("running", running), ("upcoming", upcoming), ("finished", over)):
        section = html.split(f'data-testid="arenas-{key}"')[1].split("</ul>")[0]
        assert f'data-arena="{a.pk}"' in section


def test_the_arena_page_has_a_countdown_join_standings_and_the_rules() -> None:
    arena = make_arena()
    a, b = players(2)
    services.join(arena.pk, a)
    html = logged_in(b).get(f"/tournaments/{arena.pk}/").content.decode()
    assert 'data-testid="arena-countdown"' in html and 'data-testid="arena-join"' in html
    assert 'data-player="p0"' in html
    assert "バーサーク" in html and "連勝" in html  # the rules, in Japanese
    # Joining through the page's form: back to the page, now in the table.
    r = logged_in(b).post(f"/tournaments/{arena.pk}/join/")
    assert r.status_code == 302
    html = logged_in(b).get(f"/tournaments/{arena.pk}/").content.decode()
    assert 'data-player="p1"' in html and 'data-state="waiting"' in html


def test_an_arena_match_page_links_back_and_offers_berserk_before_start() -> None:
    arena = make_arena()
    a, b = players(2)
    services.join(arena.pk, a)
    services.join(arena.pk, b)
    services.pair_arena(arena.pk)
    m = current(arena, a)
    html = logged_in(a).get(f"/matches/{m.pk}/").content.decode()
    assert 'data-testid="arena-back"' in html and f"/tournaments/{arena.pk}/" in html
    assert 'data-testid="arena-berserk"' in html
    assert "/js/arena" in html  # its script, which only an arena match's page loads
    r = logged_in(a).post(f"/api/tournaments/matches/{m.pk}/berserk/")
    assert r.status_code == 200
    m = Tables().start(m)
    html = logged_in(a).get(f"/matches/{m.pk}/").content.decode()
    assert 'data-testid="arena-berserk"' not in html  # too late once it runs
    # A match no arena made has no bar.
    other = Tables().ranked(*players(2, "q"))
    html = logged_in(other.player0).get(f"/matches/{other.pk}/").content.decode()
    assert 'data-testid="arena-bar"' not in html and "/js/arena" not in html


def test_the_podium_the_final_table_and_the_profiles_best_rank(clock: Any) -> None:
    arena = make_arena(started_ago_s=59 * 60 - 10)  # 70 s left
    a, b = players(2)
    for u in (a, b):
        services.join(arena.pk, u)
    services.pair_arena(arena.pk)
    win(Tables(), current(arena, a), a)
    clock.shift(120)
    services.pairing_pass()
    html = Client().get(f"/tournaments/{arena.pk}/").content.decode()
    assert 'data-testid="arena-podium"' in html
    first = html.split('data-testid="podium-1"')[1].split("</li>")[0]
    assert "p0" in first
    profile = Client().get("/u/p0/").content.decode()
    assert 'data-testid="profile-arenas"' in profile
    assert profile.split('data-testid="best-rank">')[1].startswith("1<")


def test_the_rules_page_explains_arenas() -> None:
    html = Client().get("/rules/").content.decode()
    assert 'data-testid="arena-rules"' in html and "バーサーク" in html


def test_the_arena_rules_in_english_have_no_japanese_words() -> None:
    """In English the rules name the Start button, not its Japanese label 開始."""
    c = Client()
    c.cookies["django_language"] = "en"
    html = c.get("/rules/").content.decode()
    rules = html.split('data-testid="arena-rules"')[1].split("</section>")[0]
    assert "Berserk" in rules and "開始" not in rules
    assert "before you press Start" in rules and "because Start was not pressed" in rules
