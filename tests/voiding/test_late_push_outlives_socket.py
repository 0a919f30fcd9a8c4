"""A turn that reached its socket late is given back even if that socket is gone before
its seat acts (issue 14; ``matches/play/late_push.py``).

The drill at 500 matches: a push waited 10–12 s behind a reconnect wave, then the next
fault killed the process holding the socket before its seat acted. The lateness lived
in the socket's memory, and the seat was charged it (up to 17.9 s of main time).
Now the socket also notes the late push on Redis, and whoever gives the seat time back
without that socket gives the push's lateness first: a dead process's seats, an outage
of the whole tier, a new socket's first action.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis

import engine
from matches.clock import liveness, presence
from matches.clock.deadlines import check_match
from matches.clock.outage import rejoin
from matches.models import Match, MatchEvent
from matches.play import late_push, timing
from matches.play.act import PUSH_BOUND_MS, act
from tests.support import frame_for

LATE_MS = 700  # the push reached the socket this long after the decision began


def _to_act(m: Match, *users: Any) -> tuple[Any, int, int, int]:
    """(the user to act, their seat, the decision's start, its deadline)."""
    m.refresh_from_db()
    s = engine.from_dict(m.state)
    assert s.to_act is not None and s.decision_start is not None
    user = next(u for u in users if s.to_act in m.seats_of(u.pk))
    dl = engine.deadline(s)
    assert dl is not None
    return user, s.to_act, s.decision_start, dl


def _credits(m: Match) -> list[dict[str, Any]]:
    return [e.data for e in MatchEvent.objects.filter(match=m, kind="credit").order_by("pk")]


@pytest.mark.django_db
def test_a_late_push_is_given_back_when_the_sockets_process_dies_before_the_seat_acts(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    m = live_ranked(alice, bob)
    mover, seat, start, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000  # web-a's last beat
    late_push.note(m.pk, [seat], start + LATE_MS, None)  # its socket on web-a, pushed late
    presence.here(m.pk, [seat], t - 500, process="web-a")
    presence.here(m.pk, [1 - seat], t - 500, process="web-b")
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    assert liveness.beat(t + 1_000, "web-b") == []
    assert liveness.beat(t + 3_000, "web-b") == [m.pk]  # web-a found dead
    # The push's lateness past the bound, and the way back since web-a's last beat.
    assert _to_act(m, alice, bob)[3] == deadline + (LATE_MS - PUSH_BOUND_MS) + 3_000
    push, away = _credits(m)
    assert push["push"] and push["from"] == start and push["ms"] == LATE_MS - PUSH_BOUND_MS
    assert away["from"] == t and away["ms"] == 3_000
    # Its socket back 1 s later: that is given too, and the push is not given again.
    assert rejoin(m.pk, mover, t + 4_000)
    assert _to_act(m, alice, bob)[3] == deadline + (LATE_MS - PUSH_BOUND_MS) + 4_000


@pytest.mark.django_db
def test_a_late_push_is_given_back_when_the_whole_tier_goes_down_before_the_seat_acts(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    m = live_ranked(alice, bob)
    _, seat, start, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    late_push.note(m.pk, [seat], start + LATE_MS, None)
    liveness.beat(t, "web-a")
    assert liveness.beat(t + 5_000, "web-a") == [m.pk]  # silent 5 s: an outage, credited
    assert _to_act(m, alice, bob)[3] == deadline + (LATE_MS - PUSH_BOUND_MS) + 5_000
    push, outage = _credits(m)
    assert push["push"] and push["ms"] == LATE_MS - PUSH_BOUND_MS
    assert outage["from"] == t and outage["ms"] == 5_000


@pytest.mark.django_db
def test_a_late_push_of_an_earlier_decision_or_of_the_other_seat_gives_nothing(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    m = live_ranked(alice, bob)
    _, seat, start, deadline = _to_act(m, alice, bob)
    t = timing.now_ms() + 1_000
    late_push.note(m.pk, [seat], start - 1, None)  # pushed before this decision began
    late_push.note(m.pk, [1 - seat], start + LATE_MS, None)  # the seat not to act
    presence.here(m.pk, [seat], t - 500, process="web-a")
    liveness.beat(t, "web-a")
    liveness.beat(t, "web-b")
    assert liveness.beat(t + 3_000, "web-b") == [m.pk]
    assert _to_act(m, alice, bob)[3] == deadline + 3_000  # the way back only
    assert [c.get("push") for c in _credits(m)] == [None]


@pytest.mark.django_db
def test_a_new_sockets_first_action_gives_the_late_push_of_the_socket_before_it(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    """The first socket was pushed the turn late and closed (the player's network);
    the seat acts through a new one, whose first view was its push: both waits are ours."""
    m = live_ranked(alice, bob)
    mover, seat, start, _ = _to_act(m, alice, bob)
    late_push.note(m.pk, [seat], start + LATE_MS, None)
    opened = start + 2_000  # the new socket's handshake; its view 300 ms later
    state = engine.from_dict(m.state)
    frame = frame_for(engine.legal_actions(state)[0], m.version)
    done = act(m.pk, mover, frame, opened + 500, turn_pushed_at=opened + 300, turn_from=opened)
    assert done.error is None
    given = [(c["from"], c["ms"]) for c in _credits(m) if c.get("push")]
    assert given == [(start, LATE_MS - PUSH_BOUND_MS), (opened, 300 - PUSH_BOUND_MS)]


@pytest.mark.django_db
@pytest.mark.parametrize("where", ["redis", "embedded"])
def test_the_sweeper_gives_a_late_push_back_before_it_flags_the_seat(
    alice: Any, bob: Any, live_ranked: Any, settings: Any, require_redis: str, where: str
) -> None:
    """Its turn reached it 3 s late: at its deadline the sweeper gives that back instead
    of ending the match on time (on Redis, and in the embedded default's own memory)."""
    settings.REDIS_URL = require_redis if where == "redis" else ""
    settings.LIVENESS_PREFIX = f"sbtest{uuid.uuid4().hex[:8]}"
    m = live_ranked(alice, bob)
    _, seat, start, deadline = _to_act(m, alice, bob)
    late_push.note(m.pk, [seat], start + 3_000, None)
    try:
        assert check_match(m.pk, now=deadline + 1_000)  # a credit, not the end
        m.refresh_from_db()
        assert not m.is_over
        assert _to_act(m, alice, bob)[3] == deadline + 3_000 - PUSH_BOUND_MS
        assert [(c["from"], c["ms"], c["push"]) for c in _credits(m)] == [
            (start, 3_000 - PUSH_BOUND_MS, True)
        ]
        # Given once: past the new deadline the seat loses on time.
        assert check_match(m.pk, now=deadline + 3_000)
        m.refresh_from_db()
        assert m.is_over and m.end_reason == "time"
        assert len(_credits(m)) == 1
    finally:
        late_push._local.clear()
        if where == "redis":
            client = redis.Redis.from_url(require_redis)
            keys = client.keys(f"{settings.LIVENESS_PREFIX}*")
            if keys:
                client.delete(*keys)
            client.close()


@pytest.mark.django_db
def test_the_sweeper_flags_a_seat_whose_late_push_was_shorter_than_its_overrun(
    alice: Any, bob: Any, live_ranked: Any, on_redis: str
) -> None:
    m = live_ranked(alice, bob)
    _, seat, start, deadline = _to_act(m, alice, bob)
    late_push.note(m.pk, [seat], start + 600, None)  # 500 ms owed; 2 s over the deadline
    assert check_match(m.pk, now=deadline + 2_000)
    m.refresh_from_db()
    assert m.is_over and m.end_reason == "time"
