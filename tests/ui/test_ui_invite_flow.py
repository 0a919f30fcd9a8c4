"""An invite link opened by someone logged out, in Chromium: who invites and the time
control first, then log in or sign up, straight back to the invite, accept, and into
the match; Back from the match never shows a live accept button."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from ui_pages import browsing, off_the_loop

from matches.lobby.invites import accept_invite, create_invite
from matches.models import Invite
from tests.support import FAST_HASHERS, PASSWORD, make_user, use_embedded_default


@pytest.fixture
def invite(transactional_db: Any, settings: Any) -> Invite:
    use_embedded_default(settings)
    settings.PASSWORD_HASHERS = FAST_HASHERS

    def make() -> Invite:
        make_user("bob", PASSWORD)
        return create_invite(make_user("alice", PASSWORD))

    return off_the_loop(make)


def _stranger_sees_the_invite(page: Any, inv: Invite) -> None:
    page.goto(f"/invites/{inv.code}/")
    assert page.locator("[data-testid=inviter]").inner_text() == (
        "aliceさんからカジュアル対局への招待です。"
    )
    time_control = page.locator("[data-testid=time-control]").inner_text()
    assert "各自2分（120秒）" in time_control and "最初の10秒" in time_control
    assert page.locator("[data-testid=rules-link]").get_attribute("href") == "/rules/"
    assert page.locator("[data-testid=accept-invite]").count() == 0


def test_log_in_on_the_invite_accept_and_back_never_shows_a_live_accept(
    browser: Any, live_server: Any, invite: Invite
) -> None:
    with browsing(browser, live_server, "phone") as page:
        _stranger_sees_the_invite(page, invite)
        page.fill("#invite-username", "bob")
        page.fill("#invite-password", PASSWORD)
        page.click("[data-testid=invite-login] button[type=submit]")
        page.wait_for_url(f"**/invites/{invite.code}/")
        page.click("[data-testid=accept-invite]")
        page.wait_for_url(re.compile(r"/matches/\d+/$"))
        match_path = page.url.removeprefix(live_server.url)
        page.go_back()
        page.wait_for_selector("[data-testid=invite-match]")
        assert page.url.endswith(f"/invites/{invite.code}/")
        assert page.locator("[data-testid=accept-invite]").count() == 0
        assert "この招待はすでに受諾されています。" in page.inner_text("main")
        assert page.locator("[data-testid=invite-match]").get_attribute("href") == match_path


def test_sign_up_from_the_invite_comes_back_to_accept_it(
    browser: Any, live_server: Any, invite: Invite
) -> None:
    with browsing(browser, live_server, "desktop") as page:
        _stranger_sees_the_invite(page, invite)
        page.click("[data-testid=invite-signup]")
        page.fill("input[name=username]", "newcomer")
        page.fill("input[name=password1]", "correct-horse-battery-9")
        page.fill("input[name=password2]", "correct-horse-battery-9")
        page.click("main form button[type=submit]")
        page.wait_for_url(f"**/invites/{invite.code}/")
        page.click("[data-testid=accept-invite]")
        page.wait_for_url(re.compile(r"/matches/\d+/$"))


def test_a_stranger_opening_an_accepted_invite_can_do_nothing_with_it(
    browser: Any, live_server: Any, invite: Invite
) -> None:
    bob = get_user_model().objects.get(username="bob")
    off_the_loop(accept_invite, invite.code, bob)
    with browsing(browser, live_server, "phone") as page:
        page.goto(f"/invites/{invite.code}/")
        assert "この招待はすでに受諾されています。" in page.inner_text("main")
        for testid in ("accept-invite", "invite-login", "invite-signup", "invite-match"):
            assert page.locator(f"[data-testid={testid}]").count() == 0
