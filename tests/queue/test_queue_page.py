"""The ranked queue card on the lobby page: join and leave in one click."""

from __future__ import annotations

from typing import Any

import pytest

from matches.models import QueueEntry

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_lobby_shows_the_join_button_and_the_rating(alice: Any, client: Any) -> None:
    client.force_login(alice)
    page = client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'id="ranked-queue"' in page
    assert 'data-testid="queue-join"' in page
    assert "Your rating: 1500" in page
    assert "js/queue.js" in page


def test_joining_with_one_click_shows_the_time_waited_and_the_window(
    alice: Any, client: Any, clock: Any
) -> None:
    client.force_login(alice)
    card = client.post("/queue/join/", HTTP_ACCEPT_LANGUAGE="en", **HTMX).content.decode()
    assert QueueEntry.objects.filter(user=alice).exists()
    assert 'data-in-queue="1"' in card
    assert 'data-testid="queue-leave"' in card
    assert "±100" in card and "0:00" in card
    clock.shift(21)
    card = client.get("/queue/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "±200" in card and "0:21" in card


def test_leaving_with_one_click(alice: Any, client: Any) -> None:
    client.force_login(alice)
    client.post("/queue/join/", **HTMX)
    card = client.post("/queue/leave/", **HTMX).content.decode()
    assert not QueueEntry.objects.filter(user=alice).exists()
    assert 'data-testid="queue-join"' in card


def test_the_second_player_to_join_goes_straight_to_the_match(
    alice: Any, bob: Any, client: Any
) -> None:
    client.force_login(alice)
    client.post("/queue/join/", **HTMX)
    client.force_login(bob)
    response = client.post("/queue/join/", **HTMX)
    assert response.status_code == 200
    assert response["HX-Redirect"].startswith("/matches/")


def test_without_javascript_the_forms_come_back_to_the_lobby(alice: Any, client: Any) -> None:
    client.force_login(alice)
    assert client.post("/queue/join/").url == "/"
    assert client.post("/queue/leave/").url == "/"


def test_a_busy_player_sees_why_on_the_card(alice: Any, bob: Any, client: Any) -> None:
    from matches.lobby.invites import accept_invite, create_invite

    accept_invite(create_invite(alice).code, bob)
    client.force_login(alice)
    card = client.post("/queue/join/", HTTP_ACCEPT_LANGUAGE="en", **HTMX).content.decode()
    assert "Finish your current match first." in card


def test_the_queue_pages_need_a_login(client: Any) -> None:
    assert client.post("/queue/join/").status_code == 302
    assert client.get("/queue/").status_code == 302
