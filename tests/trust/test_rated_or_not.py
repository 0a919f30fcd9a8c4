"""Ratings that mean something (issue 16, "Elo farming").

Two accounts meet in the ranked queue (HTTP), both press 開始 on their match
sockets and one resigns after a few decisions: no rating moves unless each made
3 decisions (or a hand was played out), and the same two players get at most 2
rated matches a day, whether they meet through the queue or a rematch. The JSON
result says why a match was not rated, and the result card says it in words.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from channels.db import database_sync_to_async

from matches.lobby import matchmaking as queue
from matches.lobby import rematch
from matches.models import Match
from matches.play import timing
from matches.play.act import act
from matches.play.store import current_view
from ratings.models import PlayerRating, RatingChange
from tests.support import START, Tables
from tests.trust.client import Browser, login, match_socket, newest, play_decisions, start

pytestmark = pytest.mark.django_db(transaction=True)


def _paired(a: Browser, b: Browser) -> int:
    """Both join the ranked queue over HTTP; the second join pairs them."""
    assert a.http.post("/queue/join/").status_code == 302
    response = b.http.post("/queue/join/")
    assert response.status_code == 302 and response["Location"].startswith("/matches/")
    return int(response["Location"].strip("/").split("/")[-1])


def _ratings() -> dict[int, int]:
    return dict(PlayerRating.objects.values_list("user_id", "rating"))


async def _ranked_match_resigned_after(
    a: Browser, b: Browser, each: int
) -> tuple[dict[str, Any], dict[int, int]]:
    """A ranked match from the queue; both decide ``each`` times, then seat 1 resigns.
    The final view of seat 0, and how many decisions each seat made."""
    match_id = await database_sync_to_async(_paired)(a, b)
    m = await database_sync_to_async(Match.objects.get)(pk=match_id)
    users = {0: a if m.player0_id == a.user.pk else b}
    users[1] = b if users[0] is a else a
    socks = {s: await match_socket(users[s], match_id) for s in (0, 1)}
    try:
        views = await start(socks)
        made, views = await play_decisions(socks, views, each) if each else ({0: 0, 1: 0}, views)
        assert views[0]["hand_no"] == 0 and views[0]["phase"] in ("auction", "play")
        version = views[1]["match"]["version"]
        await socks[1].send({"op": "resign", "version": version})
        final = await newest(socks[0], version)
    finally:
        for sock in socks.values():
            await sock.comm.disconnect()
    assert final["phase"] == "match_over" and final["match"]["result"]["end"] == "resign"
    return final, made


async def test_a_resign_right_after_start_moves_no_rating_and_says_why(
    alice: Any, bob: Any
) -> None:
    a, b = await login(alice), await login(bob)
    final, _ = await _ranked_match_resigned_after(a, b, 0)
    result = final["match"]["result"]
    assert result["rated"] is False and result["unrated_reason"] == "too_short"
    assert final["match"]["rating_delta"] is None
    assert await database_sync_to_async(_ratings)() == {}
    assert not await database_sync_to_async(RatingChange.objects.exists)()


async def test_two_decisions_each_is_too_short_three_each_is_rated(
    alice: Any, bob: Any, carol: Any, dave: Any
) -> None:
    # The edge: the rule's N (3) decisions each.
    a, b = await login(alice), await login(bob)
    final, made = await _ranked_match_resigned_after(a, b, 2)
    assert min(made.values()) == 2
    assert final["match"]["result"]["unrated_reason"] == "too_short"
    assert await database_sync_to_async(_ratings)() == {}

    c, d = await login(carol), await login(dave)
    final, made = await _ranked_match_resigned_after(c, d, 3)
    assert min(made.values()) == 3
    result = final["match"]["result"]
    assert result["rated"] is True and result["unrated_reason"] is None
    ratings = await database_sync_to_async(_ratings)()
    assert sorted(ratings.values()) == [1480, 1520] and set(ratings) == {carol.pk, dave.pk}


def _finish_rated(tables: Tables, a: Any, b: Any) -> Match:
    """A ranked match of ``a`` and ``b`` played for 8 decisions, then resigned by seat 1."""
    m = tables.play(tables.start(tables.ranked(a, b)), 8)
    return tables.resign(m, tables.user_at(m, 1))


def test_the_third_rated_match_of_a_pair_within_24_h_is_casual_and_the_queue_avoids_it(
    alice: Any, bob: Any, carol: Any, dave: Any, settings: Any
) -> None:
    settings.DEAL_SEED = 3
    tables = Tables()
    with time_machine.travel(START, tick=True) as clock:
        first, second = _finish_rated(tables, alice, bob), _finish_rated(tables, bob, alice)
        assert first.rating_delta and second.rating_delta  # the 1st and 2nd (the limit) count
        before = _ratings()
        third = _finish_rated(tables, alice, bob)
        assert third.rating_delta is None and third.unrated_reason == "pair_limit"
        assert _ratings() == before and RatingChange.objects.filter(match=third).count() == 0
        _, view = current_view(third.pk, alice)
        assert view["match"]["result"] == {
            "winner": third.winner_seat,
            "end": "resign",
            "rated": False,
            "unrated_reason": "pair_limit",
        }
        # Another opponent is rated as ever.
        assert _finish_rated(tables, alice, dave).rating_delta
        assert _finish_rated(tables, bob, dave).rating_delta  # nobody's last opponent is alice

        # In the queue, alice and bob are paired only when nobody else fits: bob is
        # the closest rating, carol still inside the window, and she is chosen.
        for who, rating in ((alice, 1500), (bob, 1500), (carol, 1590)):
            PlayerRating.objects.update_or_create(user=who, defaults={"rating": rating})
        for who in (alice, bob, carol):
            queue.join(who, pair=False)
        (made,) = queue.pair_waiting()
        assert {made.player0_id, made.player1_id} != {alice.pk, bob.pk}
        act(made.pk, made.player0, {"op": "resign", "version": 0}, timing.now_ms())

        # A day after the first, the pair's next match is rated again.
        clock.shift(timedelta(hours=24, minutes=1))
        assert _finish_rated(tables, bob, alice).rating_delta


def test_a_ranked_rematch_is_judged_by_the_same_rules(alice: Any, bob: Any, settings: Any) -> None:
    settings.DEAL_SEED = 3
    tables = Tables()
    _finish_rated(tables, alice, bob)
    second = _finish_rated(tables, alice, bob)
    rematch.act_rematch(second.pk, alice, "rematch")
    rematch.act_rematch(second.pk, bob, "rematch_accept")
    new = Match.objects.get(pk=tables.fresh(second).rematch_offer.new_match_id)
    assert new.kind == Match.Kind.RANKED
    before = _ratings()
    ended = tables.resign(tables.play(tables.start(new), 8), tables.user_at(new, 0))
    assert ended.unrated_reason == "pair_limit" and _ratings() == before
    # A ranked rematch resigned at once is too short, like any ranked match.
    rematch.act_rematch(ended.pk, bob, "rematch")
    rematch.act_rematch(ended.pk, alice, "rematch_accept")
    again = Match.objects.get(pk=tables.fresh(ended).rematch_offer.new_match_id)
    short = tables.resign(tables.start(again), alice)
    assert short.unrated_reason == "too_short" and _ratings() == before


def test_the_start_screen_states_the_rule_and_the_result_card_the_reason(
    alice: Any, bob: Any, carol: Any
) -> None:
    tables = Tables()
    m = tables.ranked(alice, bob)
    client = Browser(alice).http
    client.cookies["django_language"] = "en"
    page = client.get(f"/matches/{m.pk}/").content.decode()
    assert 'data-testid="rated-rule"' in page
    assert "Rated when each player makes at least 3 decisions" in page
    # A casual match is never rated: its start screen says nothing of it.
    casual = tables.casual(carol, alice)
    assert 'data-testid="rated-rule"' not in client.get(f"/matches/{casual.pk}/").content.decode()

    ended = tables.resign(tables.start(m), bob)
    page = client.get(f"/matches/{ended.pk}/").content.decode()
    assert 'data-testid="unrated-reason"' in page
    assert "Not rated: the match was too short" in page
