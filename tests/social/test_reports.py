"""Reports: from a profile, from a replay step of a finished match; the staff's queue."""

from __future__ import annotations

from typing import Any

import pytest

from matches.models import Match
from social.models import Report
from tests.support import PASSWORD, Tables, make_user, use_embedded_default


@pytest.fixture
def finished(settings: Any, alice: Any, bob: Any) -> Match:
    use_embedded_default(settings, deal_seed=5)
    t = Tables()
    return t.resign(t.play(t.start(t.casual(alice, bob)), 6), bob)


def test_a_player_is_reported_from_the_profile(api: Any, alice: Any, bob: Any) -> None:
    c = api(alice)
    assert 'href="/u/bob/report/"' in c.get("/u/bob/").content.decode()
    r = c.post("/u/bob/report/", {"reason": "Insults in the name."})
    assert r.status_code == 302
    (rep,) = Report.objects.all()
    assert (rep.reporter, rep.reported, rep.reason, rep.status) == (
        alice,
        bob,
        "Insults in the name.",
        "open",
    )


def test_an_empty_report_is_refused_and_nothing_is_stored(api: Any, alice: Any, bob: Any) -> None:
    r = api(alice).post("/u/bob/report/", {"reason": ""})
    assert r.status_code == 200 and b"errorlist" in r.content
    assert api(alice).post("/u/bob/report/", {"reason": "x" * 2001}).status_code == 200
    assert not Report.objects.exists()


def test_a_decision_of_a_finished_match_is_reported_from_its_replay(
    api: Any, alice: Any, bob: Any, finished: Match
) -> None:
    c = api(alice)
    replay = c.get(f"/matches/{finished.pk}/replay/?step=3").content.decode()
    assert f'href="/matches/{finished.pk}/report/?step=3"' in replay
    form = c.get(f"/matches/{finished.pk}/report/?step=3").content.decode()
    assert '<option value="3" selected>' in form
    body = {"step": "3", "reason": "The draw was not forced.", "expected": "A pass."}
    r = c.post(f"/matches/{finished.pk}/report/", body)
    assert r.status_code == 302
    (rep,) = Report.objects.all()
    assert (rep.match_id, rep.step, rep.reported, rep.expected) == (finished.pk, 3, bob, "A pass.")
    # A step the replay has not is refused.
    c.post(f"/matches/{finished.pk}/report/", {"step": "999", "reason": "x", "expected": "y"})
    assert Report.objects.count() == 1


def test_only_the_players_report_a_match(api: Any, carol: Any, finished: Match) -> None:
    assert api(carol).get(f"/matches/{finished.pk}/report/").status_code == 403


def test_staff_see_the_event_log_and_mark_a_report_handled(
    api: Any, alice: Any, bob: Any, finished: Match
) -> None:
    api(alice).post(f"/matches/{finished.pk}/report/",
                    {"step": "2", "reason": "r", "expected": "e"})  # fmt: skip
    rep = Report.objects.get()
    staff = make_user("referee", PASSWORD, is_staff=True, is_superuser=True)
    admin = api(staff)
    page = admin.get(f"/admin/social/report/{rep.pk}/change/").content.decode()
    assert 'class="report-log"' in page and "&quot;type&quot;: &quot;deal&quot;" in page
    r = admin.post(
        "/admin/social/report/", {"action": "mark_handled", "_selected_action": [rep.pk]}
    )
    assert r.status_code == 302
    rep.refresh_from_db()
    assert rep.status == "handled" and rep.handled_by == staff and rep.handled_at is not None
