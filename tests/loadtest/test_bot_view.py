"""A bot on an HTML socket sees what a bot on a JSON socket sees.

The harness's HTML bots read the fragments the way the browser page does
(loadtest/view.py); if the fragments change so that they no longer can, these
tests say so before a load run quietly stops playing.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from django.utils import translation

from loadtest.bots import choose
from loadtest.view import Fragments, Seen, read_json, read_page, toast_code
from matches.play import timing
from matches.play.act import act
from matches.play.audience import state_frame
from matches.play.store import current_view
from matches.ui.fragments import render_changed, render_error
from tests.support import Tables

pytestmark = pytest.mark.django_db

MOST_STEPS = 300  # far more than the seeded deals need to show an auction and a hand's end
WANTED_PHASES = {"auction", "play", "hand_over"}


def as_json(view: dict[str, Any]) -> Seen:
    frame = {"type": "state", "version": view["match"]["version"], "view": view}
    seen, error = read_json(json.dumps(frame))
    assert seen is not None and error is None
    return seen


def as_html(view: dict[str, Any]) -> Seen:
    page = Fragments()
    with translation.override("ja"):
        page.merge(render_changed(view, {}))
    seen = read_page(page)
    assert seen is not None
    return seen


def comparable(seen: Seen) -> Seen:
    # The page lists the playable tiles in hand order; the JSON view in its own.
    seen.playable = sorted(seen.playable, key=lambda p: p[0])
    return seen


def test_both_formats_show_the_same_decisions_from_start_to_resignation(
    alice: Any, bob: Any, settings: Any
) -> None:
    settings.DEAL_SEED = 3  # predictable deals: the auction comes in the second hand
    tables = Tables()
    m = tables.casual(alice, bob)
    rng = random.Random(7)
    phases = set()
    for _ in range(MOST_STEPS):
        seen_by_seat = []
        for user in (alice, bob):
            _, view = current_view(m.pk, user)
            seen = as_json(view)
            assert comparable(as_html(view)) == comparable(seen), view["phase"]
            seen_by_seat.append((user, seen))
        phases |= {s.phase for _, s in seen_by_seat}
        if phases >= WANTED_PHASES and seen_by_seat[0][1].phase == "play":
            break
        # Whoever has something to do does it, as the bots would.
        for user, seen in seen_by_seat:
            frame = {"op": "start"} if seen.can_start else choose(seen, rng)
            if frame is not None:
                frame["version"] = seen.version
                act(m.pk, user, frame, timing.now_ms())
                break
        else:
            pytest.fail(f"nobody can act: {seen_by_seat}")
    assert phases >= WANTED_PHASES
    tables.resign(m, bob)
    for user in (alice, bob):
        _, view = current_view(m.pk, user)
        assert as_json(view).over and comparable(as_html(view)) == comparable(as_json(view))


def test_a_bot_sees_the_start_button_until_it_presses_it(alice: Any, bob: Any) -> None:
    tables = Tables()
    m = tables.casual(alice, bob)
    _, view = current_view(m.pk, alice)
    assert as_html(view).can_start and as_json(view).can_start
    tables.act(m, alice, "start")
    _, view = current_view(m.pk, alice)
    assert not as_html(view).can_start and not as_json(view).can_start
    _, view = current_view(m.pk, bob)
    assert as_html(view).can_start


def test_fragments_not_sent_again_keep_their_last_value(alice: Any, bob: Any) -> None:
    tables = Tables()
    m = tables.start(tables.casual(alice, bob))
    _, view = current_view(m.pk, alice)
    page = Fragments()
    page.merge(render_changed(view, {}))
    before = read_page(page)
    assert before is not None and before.main is not None
    # A later frame that brings only the status (say, nothing else changed).
    status = render_changed(view, {}).split("</div>", 1)[0] + "</div>"
    assert page.merge(status.replace(f'data-version="{m.version}"', 'data-version="999"')) == {
        "sb-status"
    }
    after = read_page(page)
    assert after is not None and after.version == 999
    assert after.main == before.main and after.playable == before.playable


def test_an_error_toast_gives_its_code() -> None:
    page = Fragments()
    assert page.merge(render_error("stale", "もう一度")) == {"sb-toast"}
    assert toast_code(page) == "stale"


def test_a_version_2_bot_sees_from_its_deltas_what_a_version_1_bot_sees(
    alice: Any, bob: Any, settings: Any
) -> None:
    from loadtest.view import Delta
    from matches.realtime.protocol_v2 import DeltaEncoder

    settings.DEAL_SEED = 3
    tables = Tables()
    m = tables.casual(alice, bob)
    rng = random.Random(5)
    encoders = {u.pk: DeltaEncoder() for u in (alice, bob)}
    deltas = {u.pk: Delta() for u in (alice, bob)}
    for user in (alice, bob):  # the whole view on connect
        _, view = current_view(m.pk, user)
        v2 = encoders[user.pk].frame(view, whole=True)
        assert read_json(v2, deltas[user.pk]) == read_json(state_frame(view))
    deltas_seen = 0
    for _ in range(80):
        acted = None
        for user in (alice, bob):
            _, view = current_view(m.pk, user)
            seen = as_json(view)
            frame = {"op": "start"} if seen.can_start else choose(seen, rng)
            if frame is not None:
                frame["version"] = seen.version
                acted = act(m.pk, user, frame, timing.now_ms())
                break
        assert acted is not None and acted.change is not None
        for audience, user in (("seat0", alice), ("seat1", bob)):
            pushed = acted.change.view(audience)
            v2 = encoders[user.pk].frame(pushed)
            deltas_seen += '"layout_delta"' in v2
            assert read_json(v2, deltas[user.pk]) == read_json(acted.change.frame(audience))
    assert deltas_seen > 50
    with pytest.raises(ValueError):
        Delta().whole({"type": "state", "view": {"layout_delta": {"keep": 0, "add": []}}})
