"""The bell's toast: a challenge made before the page's socket opened is not missed.

notify.js fetches ``/notifications/toast/?pending=1`` each time its socket opens;
that answers with a challenge to this player only while it can still be accepted.
"""

from __future__ import annotations

import html
from datetime import timedelta
from typing import Any

import time_machine
from django.utils import timezone, translation

from social.models import Challenge


def _pending(api: Any, user: Any) -> Any:
    return api(user).get("/notifications/toast/", {"pending": "1", "next": "/"})


def test_an_open_challenge_is_offered_when_the_socket_opens_and_only_while_open(
    api: Any, alice: Any, bob: Any, carol: Any
) -> None:
    assert _pending(api, bob).status_code == 204  # nothing to offer: no toast at all
    ch = api(alice).post_json("/api/challenges/", {"username": "bob"}).json()
    r = _pending(api, bob)
    assert r.status_code == 200
    html = r.content.decode()
    assert 'data-testid="toast-accept"' in html and "alice" in html
    assert f"/challenges/{ch['id']}/accept/" in html
    # Only to the one challenged: the challenger and a third player see nothing.
    assert _pending(api, alice).status_code == 204
    assert _pending(api, carol).status_code == 204
    # Past its three minutes it is no longer offered (but the bell's list keeps it).
    with time_machine.travel(timezone.now() + timedelta(minutes=4)):
        assert _pending(api, bob).status_code == 204
    # Declined: not offered again, while a follow notification is not a "pending" one.
    api(bob).post_json(f"/api/challenges/{ch['id']}/decline/")
    assert Challenge.objects.get(pk=ch["id"]).status == "declined"
    api(carol).post_json("/api/follows/", {"username": "bob"})
    assert bob.notifications.filter(kind="follow", read_at__isnull=True).exists()
    assert _pending(api, bob).status_code == 204
    # The toast a push asks for (no ``pending``) still shows the newest notification.
    assert api(bob).get("/notifications/toast/").status_code == 200


def test_the_toast_needs_a_login(client: Any) -> None:
    r = client.get("/notifications/toast/", {"pending": "1"})
    assert r.status_code == 302 and "/login/" in r["Location"]


def test_a_challenge_accepted_while_the_challengers_socket_was_closed_sends_them_once(
    api: Any, alice: Any, bob: Any
) -> None:
    """Alice's page reloads after her challenge's post; Bob accepts before its socket
    opens, so the push reached no page of hers. The socket's first ask takes her there."""
    ch = api(alice).post_json("/api/challenges/", {"username": "bob"}).json()
    assert "X-Sb-Go" not in _pending(api, alice)  # not accepted yet: nowhere to go
    match_id = api(bob).post_json(f"/api/challenges/{ch['id']}/accept/").json()["match_id"]
    r = _pending(api, alice)
    assert r.status_code == 200 and r["X-Sb-Go"] == f"/matches/{match_id}/"
    assert "X-Sb-Go" not in _pending(api, alice)  # once: she may leave the match page
    assert "X-Sb-Go" not in _pending(api, bob)  # the one who accepted went there himself


def test_an_accepted_challenge_whose_match_started_sends_nobody(
    api: Any, alice: Any, bob: Any
) -> None:
    from matches.models import Match

    ch = api(alice).post_json("/api/challenges/", {"username": "bob"}).json()
    match_id = api(bob).post_json(f"/api/challenges/{ch['id']}/accept/").json()["match_id"]
    Match.objects.filter(pk=match_id).update(status=Match.Status.ABORTED)
    assert "X-Sb-Go" not in _pending(api, alice)


def test_every_kind_of_notification_is_worded_in_the_list_and_the_toast(
    api: Any, alice: Any, bob: Any
) -> None:
    """An accepted invite or a started arena is said in words (notify.text), in Japanese
    and in English, never shown as its code (``invite_accepted`` was)."""
    from social import notify
    from social.models import Notification

    for kind in Notification.Kind.values:
        Notification.objects.create(user=alice, kind=kind, actor=bob)
    client = api(alice)
    newest = Notification.objects.filter(user=alice).latest("pk")
    assert newest.kind == "invite_accepted"
    toast = client.get("/notifications/toast/").content.decode()
    with translation.override("ja"):
        assert html.escape(notify.text(newest), quote=False) in toast
    for language in ("ja", "en"):
        client.cookies["django_language"] = language
        page = client.get("/notifications/").content.decode()
        with translation.override(language):
            for n in Notification.objects.filter(user=alice):
                worded = notify.text(n)
                assert worded != n.kind
                assert html.escape(worded, quote=False) in page, (language, n.kind)
                assert f">{n.kind}<" not in page and f"{n.kind} " not in page


def test_only_the_player_opening_the_list_marks_it_read(api: Any, alice: Any, bob: Any) -> None:
    """Another site's link (or image) to /notifications/ arrives with the session's
    cookie: it shows the list but leaves the bell's count alone. The player's own visit,
    from a page of ours or typed, marks every notification read."""
    from social import notify

    api(bob).post_json("/api/follows/", {"username": "alice"})
    api(bob).post_json("/api/challenges/", {"username": "alice"})
    client = api(alice)
    assert notify.unread(alice.pk) == 2
    for site in ("cross-site", "same-site"):
        page = client.get("/notifications/", HTTP_SEC_FETCH_SITE=site)
        assert page.status_code == 200 and 'data-kind="challenge"' in page.content.decode()
        assert notify.unread(alice.pk) == 2, site
    assert client.get("/notifications/", HTTP_SEC_FETCH_SITE="same-origin").status_code == 200
    assert notify.unread(alice.pk) == 0


def test_another_site_cannot_use_up_the_accepted_challenge_notice(
    api: Any, alice: Any, bob: Any
) -> None:
    ch = api(alice).post_json("/api/challenges/", {"username": "bob"}).json()
    match_id = api(bob).post_json(f"/api/challenges/{ch['id']}/accept/").json()["match_id"]
    client = api(alice)
    foreign = client.get(
        "/notifications/toast/", {"pending": "1"}, HTTP_SEC_FETCH_SITE="cross-site"
    )
    assert "X-Sb-Go" not in foreign
    r = client.get("/notifications/toast/", {"pending": "1"}, HTTP_SEC_FETCH_SITE="same-origin")
    assert r["X-Sb-Go"] == f"/matches/{match_id}/"
