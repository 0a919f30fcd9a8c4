"""The arenas' own schedule, and the periodic jobs on both set-ups."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings

from tournaments import schedule
from tournaments.models import Arena

JST = ZoneInfo("Asia/Tokyo")


def test_the_plan_is_the_next_hours_and_the_evening_at_21_japan_time() -> None:
    now = datetime(2026, 12, 1, 10, 20, tzinfo=JST)
    plan = schedule.planned(now)
    hourly = [s.astimezone(JST).hour for o, s, _m in plan if o == Arena.Origin.HOURLY]
    daily = [(s.astimezone(JST), m) for o, s, m in plan if o == Arena.Origin.DAILY]
    assert hourly == [11, 12]
    assert daily == [(datetime(2026, 12, 1, 21, 0, tzinfo=JST), 90)]
    # After 21:00 the next evening is tomorrow's, and no hourly arena runs during it.
    late = schedule.planned(datetime(2026, 12, 1, 20, 5, tzinfo=JST))
    assert [s.astimezone(JST).hour for o, s, _m in late if o == Arena.Origin.HOURLY] == []
    after = schedule.planned(datetime(2026, 12, 1, 21, 30, tzinfo=JST))
    assert [s.astimezone(JST) for o, s, _m in after if o == Arena.Origin.DAILY] == [
        datetime(2026, 12, 2, 21, 0, tzinfo=JST)
    ]
    assert [s.astimezone(JST).hour for o, s, _m in after if o == Arena.Origin.HOURLY] == [23]


@pytest.mark.django_db
def test_the_schedule_makes_each_arena_once_ahead_of_time() -> None:
    now = datetime(2026, 12, 1, 1, 20, tzinfo=UTC)  # 10:20 JST
    made = schedule.ensure_schedule(now)
    assert len(made) == 3
    assert schedule.ensure_schedule(now) == []  # run again (another worker): nothing new
    arenas = list(Arena.objects.order_by("starts_at"))
    assert all(a.rated and a.starts_at > now for a in arenas)
    assert [a.minutes for a in arenas] == [60, 60, 90]
    assert arenas[0].display_name().startswith("毎時アリーナ")
    assert arenas[-1].display_name() == "夜のアリーナ 21:00"


def test_celery_beat_and_the_embedded_loop_run_the_same_three_jobs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from config.celery import app
    from tournaments import periodic, push, services

    beat = {v["task"]: v["schedule"] for v in settings.CELERY_BEAT_SCHEDULE.values()}
    assert beat["tournaments.tasks.arena_pairing"] == 2.0
    assert beat["tournaments.tasks.arena_standings"] == 1.0
    assert beat["tournaments.tasks.arena_schedule"] == 60.0
    app.loader.import_default_modules()
    for name in beat:
        assert name in app.tasks
    jobs = dict((job, period) for period, job in periodic.jobs())
    assert jobs == {
        services.pairing_pass: 2.0,
        push.push_standings: 1.0,
        schedule.ensure_schedule: 60.0,
    }


async def test_the_embedded_loop_starts_the_arena_jobs(settings: Any, monkeypatch: Any) -> None:
    from matches.realtime import periodic

    ran: list[str] = []

    def job(name: str) -> Any:
        def run(*a: Any) -> None:
            ran.append(name)

        return run

    monkeypatch.setattr(
        "tournaments.periodic.jobs", lambda: [(60.0, job("arena-a")), (60.0, job("arena-b"))]
    )
    for name in ("housekeeping", "sweep_once"):
        monkeypatch.setattr(f"matches.clock.sweeper.{name}", lambda *a, **k: 60.0)
    monkeypatch.setattr("matches.lobby.matchmaking.sweep", lambda *a, **k: [])
    settings.MATCH_BACKGROUND = True
    settings.MATCH_SWEEPER = "web"
    periodic.ensure_started()
    try:
        import asyncio

        loop = asyncio.get_running_loop()
        end = loop.time() + 5
        while set(ran) != {"arena-a", "arena-b"} and loop.time() < end:
            await asyncio.sleep(0.05)
    finally:
        await periodic.stop()
    assert set(ran) == {"arena-a", "arena-b"}
