"""Two bot accounts play a whole match against a real server, over the public protocol only.

The server is ``python -m config.serve`` (what ``make run`` runs) on the test
database. Each bot is ``examples/bot.py``, a separate process that knows nothing
but the server's URL and its token: robo creates an invite and prints it, droid
accepts it by its code, and both play to the end (Start, every move, 次へ between
hands). Then robo's owner revokes its token on the profile page: its open match
and lobby sockets close with 4401 at once, and the token is refused everywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from channels.db import database_sync_to_async

from matches.models import Match, MatchEvent
from tests.botacct.wire import api, revoke_in_browser
from tests.processes import LOGS, ROOT, WebProcess, server_env, session_cookie, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

MATCH_S = 300  # a whole match of a level-2 bot against a level-1, on a busy two-core machine
# The accepter plays at level 1 (入門): two level-2 bots trade chips as a random walk, a
# match of them 626 decisions at the median and 1,864 at p90 (bots/arena.py, 300 seeds),
# and one match in CI ran past MATCH_S at 3,051 versions; level 2 against level 1 takes
# 133 at the median, 335 at p99 and 366 at most, in 3 to 23 hands.
ACCEPTER_LEVEL = ("--level", "1")
WAIT_S = 10


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebProcess]:
    w = WebProcess(tmp_path, "web", server_env())
    try:
        yield w.start()
    finally:
        w.stop()


class Bot:
    """``examples/bot.py`` in a process of its own, its output in files."""

    def __init__(self, tmp: Path, name: str, server: str, token: str, *args: str) -> None:
        self.out, self.err = tmp / f"{name}.out", tmp / f"{name}.err"
        LOGS.extend([self.out, self.err])  # shown when the test fails
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(ROOT / "examples" / "bot.py"), "--server", server, *args],
                cwd=ROOT,
                env={**server_env(), "SB_TOKEN": token},
                stdout=out,
                stderr=err,
            )

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(x) for x in self.out.read_text().splitlines() if x.strip()]

    def failed(self) -> str | None:
        """Why the bot failed (its exit code and the end of its stderr), if it did."""
        code = self.proc.poll()
        if code is None or code == 0:
            return None
        return f"{self.out.name[:-4]} exited {code}:\n{self.err.read_text()[-3000:]}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def finish_all(bots: list[Bot], timeout_s: float) -> list[dict[str, Any]]:
    """Wait for every bot to end its match; the last line each printed (its result).

    One that fails is reported at once, with its own stderr: its opponent would wait
    for it until the invite's start window closed (the test's log shows every bot's).
    """
    deadline = time.monotonic() + timeout_s
    while any(b.proc.poll() is None for b in bots):
        for b in bots:
            if (why := b.failed()) is not None:
                raise AssertionError(why)
        if time.monotonic() > deadline:
            late = [b.out.name[:-4] for b in bots if b.proc.poll() is None]
            rows = list(Match.objects.values("pk", "status", "version", "ready", "state__phase"))
            raise AssertionError(
                f"{late} did not finish in {timeout_s} s (their logs below); matches: {rows}"
            )
        with contextlib.suppress(subprocess.TimeoutExpired):  # a bot's exit, or a beat
            next(b for b in bots if b.proc.poll() is None).proc.wait(timeout=0.5)
    for b in bots:
        if (why := b.failed()) is not None:
            raise AssertionError(why)
    return [b.lines()[-1] for b in bots]


def _play_one(
    tmp: Path, web: WebProcess, robo: tuple[Any, str], droid: tuple[Any, str]
) -> tuple[Match, list[dict[str, Any]]]:
    """robo invites, droid accepts, both play to the end: the match and each bot's result."""
    tmp.mkdir()
    inviter = Bot(tmp, "robo", web.url, robo[1], "create")
    accepter = None
    try:
        wait_for(lambda: any("code" in x for x in inviter.lines()), WAIT_S * 3, "the invite")
        invite = next(x for x in inviter.lines() if "code" in x)
        assert invite["invite"] == f"{web.url}/invites/{invite['code']}/"
        accepter = Bot(tmp, "droid", web.url, droid[1], *ACCEPTER_LEVEL, "accept", invite["code"])
        results = finish_all([accepter, inviter], MATCH_S)
    finally:
        inviter.stop()
        if accepter is not None:
            accepter.stop()
    m = Match.objects.select_related("player0", "player1").get(pk=results[0]["match_id"])
    return m, results


def test_two_bots_play_a_whole_match_and_a_revoked_token_is_shut_out(
    web: WebProcess, tmp_path: Path, robo: tuple[Any, str], droid: tuple[Any, str]
) -> None:
    # A match can end in its first hand (the deals and the bots' choices are random: one
    # CI run in three saw it), and then nobody presses 次へ: another is played, up to three.
    for attempt in range(3):
        m, results = _play_one(tmp_path / f"match{attempt}", web, robo, droid)
        assert (m.player0, m.player1, m.kind) == (robo[0], droid[0], Match.Kind.CASUAL)
        for r in results:
            assert r == {
                "match_id": m.pk,
                "status": "finished",
                "result": {
                    "winner": m.winner_seat,
                    "end": "balance",
                    "rated": False,
                    "unrated_reason": "casual",
                },
            }
        assert m.status == Match.Status.FINISHED and m.end_reason == "balance"  # played out
        events = MatchEvent.objects.filter(match=m)
        assert {e.data.get("player") for e in events.filter(kind="place")} == {0, 1}
        assert m.rating_delta is None  # casual: nobody's rating moved
        if events.filter(kind="hand_end").count() >= 2:
            break
    else:
        raise AssertionError("three matches in a row ended in their first hand")
    # 次へ between hands: both bots pressed it after every hand but the last (their
    # presses are the ``ready`` events; a window that ran out would start the hand alone).
    log = sorted(events, key=lambda e: (e.version, e.pk))
    kinds = [e.kind for e in log]
    between = 0
    for i, kind in enumerate(kinds):
        if kind == "hand_end" and "hand_start" in kinds[i:]:
            nxt = kinds.index("hand_start", i)
            pressed = {s for e in log[i:nxt] if e.kind == "ready" for s in e.data["seats"]}
            assert pressed == {0, 1}, (m.pk, log[i].version, pressed)
            between += 1
    assert between >= 1  # (the last hand may end with the match, or the match end within it)

    asyncio.run(revoked_on_the_profile_page(web, m.pk, robo, droid))
    refused = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "bot.py"), "--server", web.url, "create"],
        cwd=ROOT,
        env={**server_env(), "SB_TOKEN": robo[1]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1 and "401 invalid_token" in refused.stderr  # the bot stops


def test_the_example_bots_reconnect_through_a_server_restart_and_finish(
    tmp_path: Path, robo: tuple[Any, str], droid: tuple[Any, str]
) -> None:
    first = WebProcess(tmp_path, "web-1", server_env()).start()
    second = WebProcess(tmp_path, "web-2", server_env(), port=first.port)
    bots: list[Bot] = []
    try:
        bots.append(Bot(tmp_path, "robo", first.url, robo[1], "create"))
        wait_for(lambda: any("code" in x for x in bots[0].lines()), WAIT_S * 3, "the invite")
        code = next(x for x in bots[0].lines() if "code" in x)["code"]
        bots.append(Bot(tmp_path, "droid", first.url, droid[1], *ACCEPTER_LEVEL, "accept", code))
        wait_for(
            lambda: Match.objects.filter(status=Match.Status.LIVE, version__gte=20).exists(),
            MATCH_S,
            "a match under way",
        )
        first.stop()  # SIGTERM: every socket is closed with 1012, then the process exits
        second.start()  # the same address again
        results = finish_all(bots, MATCH_S)
    finally:
        for b in bots:
            b.stop()
        first.stop()
        second.stop()
    m = Match.objects.get()
    assert m.status == Match.Status.FINISHED and m.end_reason == "balance"
    assert all(r["status"] == "finished" and r["match_id"] == m.pk for r in results)
    for b in bots:
        assert "reconnecting" in b.err.read_text()  # each bot's socket dropped, and came back


async def open_socket(url: str, token: str) -> Any:
    ws = await websockets.connect(
        url, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=WAIT_S
    )
    return ws


async def close_code(ws: Any) -> int:
    """Read until the server closes the socket; its close code."""
    try:
        while True:
            await asyncio.wait_for(ws.recv(), WAIT_S)
    except websockets.ConnectionClosed as e:
        assert e.rcvd is not None
        return int(e.rcvd.code)


async def revoked_on_the_profile_page(
    web: WebProcess, match_id: int, robo: tuple[Any, str], droid: tuple[Any, str]
) -> None:
    user, token = robo
    base = web.url.replace("http", "ws", 1)
    match_ws = await open_socket(f"{base}/ws/matches/{match_id}/", token)
    lobby_ws = await open_socket(f"{base}/ws/lobby/", token)
    first = json.loads(await asyncio.wait_for(match_ws.recv(), WAIT_S))
    assert first["view"]["seat"] == 0 and first["view"]["match"]["status"] == "finished"
    assert json.loads(await asyncio.wait_for(lobby_ws.recv(), WAIT_S))["type"] == "queue"

    # The owner, logged in to the bot account in a browser, presses 失効.
    cookie = await database_sync_to_async(session_cookie)(user)
    status = await asyncio.to_thread(revoke_in_browser, web.url, "robo", cookie)
    assert status == 302

    assert await close_code(match_ws) == 4401
    assert await close_code(lobby_ws) == 4401
    assert api(web.url, "/api/matches/live/", token)[0] == 401
    assert api(web.url, "/api/matches/live/", token)[1]["code"] == "invalid_token"
    again = await open_socket(f"{base}/ws/matches/{match_id}/", token)
    assert await close_code(again) == 4401
    assert api(web.url, "/api/matches/live/", droid[1])[0] == 200  # droid's token lives on
    for secret in (token, droid[1]):
        assert secret not in web.log  # refused or not, a token is never logged
