"""HTTP with ``Authorization: Bearer <token>``: a bot's invites, refusals, limits, the queue.

The token replaces the session on ``/api/`` and ``/queue/``: no cookie and no
CSRF token. Anything wrong with it is 401 ``invalid_token``, never a fallback
to a cookie that came along.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import django_ratelimit.core
import pytest
from django.test import Client

from accounts import bot_accounts
from matches.lobby import matchmaking as queue
from matches.lobby.invites import accept_invite, create_invite
from matches.models import Invite, Match, QueueEntry
from matches.play.errors import ServiceError
from tests.botacct.conftest import bearer, make_bot


def csrf_client() -> Client:
    """A client that enforces CSRF, as a real server does."""
    return Client(enforce_csrf_checks=True)


def test_a_bot_creates_an_invite_with_its_token_and_no_csrf(robo: tuple[Any, str]) -> None:
    user, token = robo
    response = csrf_client().post("/api/invites/", **bearer(token))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["url"].endswith(f"/invites/{body['code']}/")
    assert Invite.objects.get(code=body["code"]).creator == user


def test_a_bot_accepts_an_invite_and_gets_a_casual_match_with_the_badge_in_its_view(
    robo: tuple[Any, str], alice: Any
) -> None:
    user, token = robo
    code = create_invite(alice).code
    accepted = csrf_client().post(f"/api/invites/{code}/accept/", **bearer(token))
    assert accepted.status_code == 200, accepted.content
    match_id = accepted.json()["match_id"]
    assert accepted.json()["ws"] == f"/ws/matches/{match_id}/"
    m = Match.objects.get(pk=match_id)
    assert (m.kind, m.player0, m.player1) == (Match.Kind.CASUAL, alice, user)

    live = csrf_client().get("/api/matches/live/", **bearer(token)).json()["matches"]
    assert [(x["id"], x["seats"]) for x in live] == [(match_id, [1])]
    state = csrf_client().get(f"/api/matches/{match_id}/state/", **bearer(token)).json()
    assert state["view"]["seat"] == 1
    assert state["view"]["match"]["names"] == ["alice", "robo"]
    assert state["view"]["match"]["bots"] == [False, True]


def test_a_bot_may_not_read_other_peoples_matches(
    robo: tuple[Any, str], alice: Any, bob: Any
) -> None:
    m = accept_invite(create_invite(alice).code, bob)
    response = csrf_client().get(f"/api/matches/{m.pk}/state/", **bearer(robo[1]))
    assert response.status_code == 403
    assert response.json()["code"] == "not_a_player"
    assert "hand" not in response.content.decode()


def assert_invalid(response: Any) -> None:
    assert response.status_code == 401, response.content
    assert response.json()["code"] == "invalid_token"
    assert response.json()["message"]
    assert response["WWW-Authenticate"] == 'Bearer error="invalid_token"'


@pytest.mark.parametrize(
    "header",
    [
        "Bearer sbb_" + "A" * 43,  # well formed, never issued
        "Bearer not-a-token",
        "Bearer ",
        "Bearer",
        "Basic cm9ibzpzZWNyZXQ=",
        "Token sbb_whatever",
        "Bearer sbb_" + "x" * 5000,
    ],
)
def test_a_bad_token_is_401_on_every_endpoint(robo: tuple[Any, str], header: str) -> None:
    invites = Invite.objects.count()
    c = csrf_client()
    assert_invalid(c.get("/api/matches/live/", HTTP_AUTHORIZATION=header))
    assert_invalid(c.post("/api/invites/", HTTP_AUTHORIZATION=header))
    assert_invalid(c.post("/queue/join/", HTTP_AUTHORIZATION=header))
    assert Invite.objects.count() == invites


def test_a_token_with_a_letter_changed_is_401(robo: tuple[Any, str]) -> None:
    token = robo[1]
    changed = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert_invalid(csrf_client().get("/api/matches/live/", **bearer(changed)))
    assert csrf_client().get("/api/matches/live/", **bearer(token)).status_code == 200


def test_a_revoked_token_is_401(robo: tuple[Any, str]) -> None:
    user, token = robo
    bot_accounts.revoke_token(user)
    assert_invalid(csrf_client().post("/api/invites/", **bearer(token)))


def test_a_rotated_token_is_401_and_the_new_one_works(robo: tuple[Any, str]) -> None:
    user, old = robo
    new = bot_accounts.issue_token(user)
    assert_invalid(csrf_client().get("/api/matches/live/", **bearer(old)))
    assert csrf_client().get("/api/matches/live/", **bearer(new)).status_code == 200


def test_the_token_of_a_deactivated_account_is_401(robo: tuple[Any, str]) -> None:
    user, token = robo
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert_invalid(csrf_client().get("/api/matches/live/", **bearer(token)))


def test_a_bad_token_does_not_fall_back_to_the_session(robo: tuple[Any, str], alice: Any) -> None:
    c = csrf_client()
    c.force_login(alice)
    assert c.get("/api/matches/live/").status_code == 200  # the session alone works
    assert_invalid(c.get("/api/matches/live/", HTTP_AUTHORIZATION="Bearer sbb_forged"))


def test_the_token_wins_over_a_session_cookie(robo: tuple[Any, str], alice: Any) -> None:
    c = csrf_client()
    c.force_login(alice)
    response = c.post("/api/invites/", **bearer(robo[1]))  # no CSRF token: the bearer's call
    assert response.status_code == 200
    assert Invite.objects.get(code=response.json()["code"]).creator == robo[0]


def test_the_token_opens_no_html_page(robo: tuple[Any, str], alice: Any) -> None:
    m = accept_invite(create_invite(alice).code, robo[0])
    response = Client().get(f"/matches/{m.pk}/", **bearer(robo[1]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


# --- rate limits -----------------------------------------------------------------------


def test_too_many_calls_with_one_token_are_429_and_other_tokens_go_on(
    robo: tuple[Any, str], droid: tuple[Any, str], settings: Any
) -> None:
    settings.BOT_TOKEN_RATE = "3/m"
    c = csrf_client()
    for _ in range(3):
        assert c.get("/api/matches/live/", **bearer(robo[1])).status_code == 200
    limited = c.post("/api/invites/", **bearer(robo[1]))
    assert limited.status_code == 429
    assert limited.json()["code"] == "rate_limited" and limited.json()["message"]
    assert int(limited["Retry-After"]) > 0
    assert not Invite.objects.filter(creator=robo[0]).exists()  # refused before the view
    assert c.get("/api/matches/live/", **bearer(droid[1])).status_code == 200


def test_the_limit_counts_the_token_not_the_account(robo: tuple[Any, str], settings: Any) -> None:
    settings.BOT_TOKEN_RATE = "2/m"
    c = csrf_client()
    for _ in range(2):
        c.get("/api/matches/live/", **bearer(robo[1]))
    assert c.get("/api/matches/live/", **bearer(robo[1])).status_code == 429
    # A bad token is refused as such, never counted against the real one's limit.
    assert_invalid(c.get("/api/matches/live/", HTTP_AUTHORIZATION="Bearer sbb_guess"))


def test_the_limit_is_generous_by_default(
    robo: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # django-ratelimit counts in fixed windows: its clock is held still so that the 121
    # requests fall in one window (across a window's end the count starts again, and
    # CI once saw the 121st let through).
    now = time.time()
    monkeypatch.setattr(django_ratelimit.core, "time", SimpleNamespace(time=lambda: now))
    c = csrf_client()
    assert all(
        c.get("/api/matches/live/", **bearer(robo[1])).status_code == 200 for _ in range(120)
    )
    assert c.get("/api/matches/live/", **bearer(robo[1])).status_code == 429


# --- the ranked queue ------------------------------------------------------------------


def test_a_bot_cannot_join_the_ranked_queue_with_its_token(robo: tuple[Any, str]) -> None:
    response = csrf_client().post("/queue/join/", **bearer(robo[1]))
    assert response.status_code == 403
    assert response.json()["code"] == "bot_not_ranked"
    assert not QueueEntry.objects.exists()


def test_a_bot_cannot_join_the_ranked_queue_from_the_lobby_form(robo: tuple[Any, str]) -> None:
    c = Client()
    c.force_login(robo[0])
    lobby = c.get("/").content.decode()
    assert 'data-testid="queue-bot"' in lobby and 'data-testid="queue-join"' not in lobby

    page = c.post("/queue/join/", follow=True).content.decode()
    assert "レーティング戦には参加できません" in page
    card = c.post("/queue/join/", HTTP_HX_REQUEST="true").content.decode()
    assert "レーティング戦には参加できません" in card
    assert not QueueEntry.objects.exists()


def test_the_queue_service_refuses_a_bot_and_a_computer_player(db: Any) -> None:
    bot, _token = make_bot("r2")
    with pytest.raises(ServiceError) as e:
        queue.join(bot)
    assert e.value.code == "bot_not_ranked"
    from accounts.reserved import computer_account

    computer = computer_account(2)  # the site's own (made by a migration)
    with pytest.raises(ServiceError) as e:
        queue.join(computer)
    assert e.value.code == "bot_not_ranked"
    assert not QueueEntry.objects.exists()


def test_people_still_join_the_queue(alice: Any) -> None:
    c = Client()
    c.force_login(alice)
    c.post("/queue/join/")
    assert QueueEntry.objects.filter(user=alice).exists()
