"""/invites/<code>/: what a stranger, the invited player and the inviter see.

A stranger sees who invites and the time control, and logs in or signs up back
to the invite; only a logged-in player other than the inviter gets an accept
button, and only while the invite is open.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from matches.lobby.invites import accept_invite, cancel_invite, create_invite
from matches.models import Invite, Match
from tests.support import PASSWORD

ACCEPT = 'data-testid="accept-invite"'


@pytest.fixture
def invite(alice: Any) -> Invite:
    return create_invite(alice)


def _url(inv: Invite) -> str:
    return reverse("matches:invite", args=[inv.code])


def _page(client: Client, inv: Invite) -> str:
    response = client.get(_url(inv))
    assert response.status_code == 200
    # Back from the match must fetch the page again, never show a kept copy.
    assert "no-store" in response["Cache-Control"]
    return response.content.decode()


def test_a_stranger_sees_who_invites_and_the_time_control(client: Client, invite: Invite) -> None:
    html = _page(client, invite)
    assert "aliceさんからカジュアル対局への招待です。" in html
    assert "各自2分（120秒）" in html and "手番ごとに最初の10秒" in html
    assert 'href="/rules/"' in html
    assert ACCEPT not in html  # nothing to accept before logging in
    # What to do comes first, on a phone's first screen: signing up (an invited friend is
    # most often new), then logging in; the time control after them.
    at = html.index
    assert at('data-testid="invite-signup"') < at('data-testid="invite-login"')
    assert at('data-testid="invite-login"') < at('data-testid="before-play"')


def test_a_stranger_logs_in_on_the_invite_and_lands_back_on_it(
    client: Client, invite: Invite, bob: Any
) -> None:
    html = _page(client, invite)
    assert f'<input type="hidden" name="next" value="{_url(invite)}">' in html
    response = client.post(
        reverse("login"), {"username": "bob", "password": PASSWORD, "next": _url(invite)}
    )
    assert response.status_code == 302 and response["Location"] == _url(invite)
    assert ACCEPT in _page(client, invite)
    response = client.post(reverse("matches:invite_accept", args=[invite.code]))
    m = Match.objects.get()
    assert response["Location"] == reverse("matches:match", args=[m.pk])
    assert (m.player0.username, m.player1.username) == ("alice", "bob")


def test_a_wrong_password_keeps_the_way_back_to_the_invite(
    client: Client, invite: Invite, bob: Any
) -> None:
    response = client.post(
        reverse("login"), {"username": "bob", "password": "wrong", "next": _url(invite)}
    )
    assert response.status_code == 200  # the log-in form again, with its error
    assert f'name="next" value="{_url(invite)}"' in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_stranger_signs_up_and_lands_back_on_the_invite(client: Client, invite: Invite) -> None:
    html = _page(client, invite)
    assert f'href="/signup/?next=/invites/{invite.code}/"' in html
    form = client.get(f"/signup/?next={_url(invite)}").content.decode()
    assert f'name="next" value="{_url(invite)}"' in form
    assert f'href="/accounts/login/?next={_url(invite)}"' in form  # changed one's mind
    response = client.post(
        "/signup/",
        {
            "username": "newcomer",
            "password1": "correct-horse-battery-9",
            "password2": "correct-horse-battery-9",
            "next": _url(invite),
        },
    )
    assert response.status_code == 302 and response["Location"] == _url(invite)
    assert ACCEPT in _page(client, invite)


def test_the_inviter_gets_the_link_and_no_accept_button(client: Client, invite: Invite) -> None:
    client.force_login(invite.creator)
    html = _page(client, invite)
    assert 'data-testid="invite-url"' in html and 'data-testid="cancel-invite"' in html
    assert ACCEPT not in html


def test_an_accepted_invite_says_so_and_links_its_players_to_the_match(
    client: Client, invite: Invite, bob: Any, outsider: Any
) -> None:
    m = accept_invite(invite.code, bob)
    match_link = f'href="{reverse("matches:match", args=[m.pk])}"'
    for player in (bob, invite.creator):
        client.force_login(player)
        html = _page(client, invite)
        assert "この招待はすでに受諾されています。" in html
        assert ACCEPT not in html and 'data-testid="cancel-invite"' not in html
        assert match_link in html
    client.force_login(outsider)
    html = _page(client, invite)
    assert "この招待はすでに受諾されています。" in html
    assert ACCEPT not in html and match_link not in html
    client.logout()
    html = _page(client, invite)
    assert ACCEPT not in html and match_link not in html
    assert 'data-testid="invite-login"' not in html  # nothing left to log in for


def test_a_cancelled_or_expired_invite_has_no_accept_button(
    client: Client, alice: Any, bob: Any
) -> None:
    client.force_login(bob)
    cancelled = create_invite(alice)
    cancel_invite(cancelled.code, alice)
    html = _page(client, cancelled)
    assert "この招待は取り消されました。" in html and ACCEPT not in html
    expiring = create_invite(alice)
    with time_machine.travel(expiring.expires_at + timedelta(seconds=1)):
        html = _page(client, expiring)
    assert "この招待は期限切れです。" in html and ACCEPT not in html


def test_an_unknown_invite_is_not_found(client: Client, db: Any) -> None:
    assert client.get("/invites/nope/").status_code == 404
