"""Bots that play matches over docs/protocol.md: HTTP for the match, a WebSocket per seat.

- :class:`Api`: the HTTP side (``csrftoken`` from a GET, ``POST /api/invites/``,
  ``POST /api/invites/<code>/accept/``), with the bot's ``sessionid`` cookie.
- :class:`Bot`: one seat's socket, JSON or ``?format=html``. It thinks a random
  time before each decision (only when it is to act, and before ``continue``
  between hands), reconnects by itself with a short backoff when the server
  closes its socket and resynchronises from the state sent on connect.
- :class:`Table`: one match of two bots; a finished match is replaced by a new
  one (a new invite) while the table runs.
- :class:`Recorder`: what happened, with monotonic times: every move (with the
  mover's main time before and after, for "main time charged beyond the bot's
  own thinking"), errors by code, dropped sockets, voided matches; and, for a
  fault drill (``loadtest/drill.py``), the versions and events the seats saw,
  the main time each seat lost beyond its own thinking, and reconnections.

Both bots of a match live in this process, so one monotonic clock times a move
from the mover's send to the opponent's receipt of the new version.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from .view import Delta, Fragments, Seen, read_json, read_page, toast_code

# Close codes the server uses on purpose: not a drop, and reconnecting will not help.
CLOSE_FINAL = (4401, 4403)
# Wall clock less monotonic clock: the server stamps in epoch ms, the bots in monotonic s
# (one machine: the clocks agree to well under a millisecond over a run).
WALL_OFFSET_S = time.time() - time.monotonic()
# How long a bot waits for its action's answer before deciding again on the same choices
# (only the clocks having changed meanwhile): the server answers each action at once, so
# only a lost frame waits this long.
IN_FLIGHT_S = 10.0
BACKOFF_S = (0.25, 2.0)  # first and longest wait before reconnecting (as the page)
HTTP_TIMEOUT_S = 30
HANDSHAKES_S = 15  # the longest a new match holds its set-up slot waiting for its sockets
DELAY_MS = 10_000  # RULES §7: each decision's delay, before main time runs


@dataclass
class Account:
    username: str
    sessionid: str
    csrftoken: str = ""


@dataclass
class Move:
    """One action a bot sent and the opponent saw applied (a new version arrived)."""

    op: str
    match_id: int
    seat: int
    mover_html: bool
    version: int  # the version it acted on
    sent: float  # monotonic s, when the frame was sent
    turn_seen: float  # monotonic s, when the mover received the state it acted on
    think_s: float  # the bot's own thinking before the send
    main_before: int | None  # the mover's main time (ms) in that state
    delay_left_before: int  # the mover's delay left (ms) in that state, if running
    opp_html: bool = False
    received: float = 0.0  # monotonic s, when the opponent's socket got the new version
    # The server's receipt of the frame (epoch ms), as a JSON opponent's view says it.
    server_receipt: int | None = None
    main_after: int | None = None  # the mover's main time in the opponent's new state

    @property
    def latency_ms(self) -> float:
        return (self.received - self.sent) * 1000

    @property
    def inbound_ms(self) -> float | None:
        """From the send to the server's receipt stamp (network, proxy, the server's
        loop before it read the frame); ``None`` unless a JSON opponent saw it."""
        if self.server_receipt is None:
            return None
        return self.server_receipt - (self.sent + WALL_OFFSET_S) * 1000

    @property
    def charged_beyond_thinking_ms(self) -> float | None:
        """Main time charged beyond what the bot's own thinking explains.

        The bot thought from ``turn_seen`` to ``sent``; of that, what went past
        the delay left is its own to pay. The rest of the drop in main time is
        the platform's (late delivery of the state, a slow or stalled server).
        """
        if self.main_before is None or self.main_after is None:
            return None
        own = max(0.0, (self.sent - self.turn_seen) * 1000 - self.delay_left_before)
        return max(0.0, (self.main_before - self.main_after) - own)


@dataclass
class Recorder:
    moves: list[Move] = field(default_factory=list)
    errors: list[tuple[float, str]] = field(default_factory=list)
    drops: list[tuple[float, int | None]] = field(default_factory=list)
    ended: list[tuple[float, str]] = field(default_factory=list)  # (t, final status)
    sent: list[float] = field(default_factory=list)
    # Bytes of each state frame a JSON socket received after a change (not on connect).
    frame_bytes: list[tuple[float, int]] = field(default_factory=list)

    examples: dict[str, str] = field(default_factory=dict)  # code → its first frame / reason
    # match → (the highest version a seat saw, when); (match, seq) → (type, player, when
    # first seen) of each event a JSON seat saw: compared with the server's log afterwards.
    versions: dict[int, tuple[int, float]] = field(default_factory=dict)
    events: dict[tuple[int, int], tuple[str, int | None, float]] = field(default_factory=dict)
    # (t, match, seat, ms, version): main time a seat lost beyond its own thinking, seen
    # in that version (Table.account_main).
    charges: list[tuple[float, int, int, float, int]] = field(default_factory=list)
    # (t, match, seat): a dropped socket's first state again.
    reconnects: list[tuple[float, int, int]] = field(default_factory=list)
    # (since, match, seat, its version, the opponent's): a connected seat whose view
    # stayed behind its opponent's (a push it never got; loadtest/drill.py watches).
    stuck: list[tuple[float, int, int, int, int]] = field(default_factory=list)

    def saw(self, match_id: int, seen: Seen, at: float) -> None:
        top = self.versions.get(match_id)
        if top is None or seen.version > top[0]:
            self.versions[match_id] = (seen.version, at)
        for seq, kind, player in seen.events:
            self.events.setdefault((match_id, seq), (kind, player, at))

    def error(self, code: str, detail: str = "") -> None:
        self.errors.append((time.monotonic(), code))
        if detail:
            self.examples.setdefault(code, detail[:300])

    def between(self, t0: float, t1: float) -> dict[str, Any]:
        """What happened in [t0, t1): moves by receipt time, the rest by their time."""
        moves = [m for m in self.moves if t0 <= m.received < t1]
        errors = Counter(code for t, code in self.errors if t0 <= t < t1)
        return {
            "moves": moves,
            "errors": errors,
            "error_examples": {c: self.examples[c] for c in errors if c in self.examples},
            "drops": sum(1 for t, _ in self.drops if t0 <= t < t1),
            "ended": Counter(status for t, status in self.ended if t0 <= t < t1),
            "sent": sum(1 for t in self.sent if t0 <= t < t1),
            "frame_bytes": [n for t, n in self.frame_bytes if t0 <= t < t1],
        }


def connect_failed(rec: Recorder, exc: BaseException) -> None:
    """Count a failed socket handshake: refused with an HTTP status (a consumer that
    closed before accepting answers 403), or cut (Daphne drops a handshake the
    application has not accepted within its handshake timeout)."""
    if isinstance(exc, aiohttp.WSServerHandshakeError):
        rec.error(f"ws_handshake_{exc.status}", str(exc))
    else:
        rec.error(f"ws_connect_{type(exc).__name__}", str(exc))


async def pause(backoff: float) -> float:
    """Wait before reconnecting, jittered so that sockets the server dropped together
    do not all come back together; returns the next backoff."""
    await asyncio.sleep(random.uniform(0.5, 1.0) * backoff)
    return min(backoff * 2, BACKOFF_S[1])


class HttpError(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after  # the server's Retry-After (s), on a 503


def retry_wait(exc: BaseException) -> float:
    """How long a table waits before asking for a new match again: the server's
    Retry-After, jittered as the pages do (``static/js/page.js``: ×1–1.5, at most
    30 s), or 1 s after any other failure."""
    after = getattr(exc, "retry_after", None)
    if after is None:
        return 1.0
    return min(30.0, max(1.0, after)) * random.uniform(1.0, 1.5)


class Api:
    """The HTTP endpoints a bot uses, with its own cookies (no shared cookie jar)."""

    def __init__(self, base: str, http: aiohttp.ClientSession, rec: Recorder) -> None:
        self.base = base
        self.http = http
        self.rec = rec

    async def csrf(self, acct: Account) -> None:
        """Any GET sets the ``csrftoken`` cookie; the login page is the cheapest."""
        async with self.http.get(
            self.base + "/accounts/login/", headers={"Cookie": f"sessionid={acct.sessionid}"}
        ) as r:
            await r.read()
            self._check(r, "csrf")
            acct.csrftoken = r.cookies["csrftoken"].value

    async def post(self, acct: Account, path: str) -> dict[str, Any]:
        if not acct.csrftoken:
            await self.csrf(acct)
        headers = {
            "Cookie": f"sessionid={acct.sessionid}; csrftoken={acct.csrftoken}",
            "X-CSRFToken": acct.csrftoken,
            "Content-Type": "application/json",
        }
        async with self.http.post(self.base + path, data=b"{}", headers=headers) as r:
            body = await r.read()
            self._check(r, path, body)
            return json.loads(body)  # type: ignore[no-any-return]

    def _check(self, r: aiohttp.ClientResponse, what: str, body: bytes = b"") -> None:
        if r.status < 400:
            return
        code = f"http_{r.status}"
        with contextlib.suppress(ValueError, AttributeError):
            code += f"_{json.loads(body)['code']}"
        self.rec.error(code, f"{r.method} {r.url.path}: {body[:200]!r}")
        retry_after = None
        with contextlib.suppress(ValueError, TypeError):
            retry_after = float(r.headers["Retry-After"]) if r.status == 503 else None
        raise HttpError(f"{what}: {code}", retry_after)

    async def new_match(self, a: Account, b: Account) -> int:
        """``a`` invites, ``b`` accepts: ``a`` sits at seat 0."""
        code = (await self.post(a, "/api/invites/"))["code"]
        return int((await self.post(b, f"/api/invites/{code}/accept/"))["match_id"])


def choose(seen: Seen, rng: random.Random) -> dict[str, Any] | None:
    """A legal decision from what the seat sees: mostly pass the auction, a random tile."""
    if seen.deciding and seen.phase == "auction":
        options = [
            op for op, ok in (("decline", seen.can_decline), ("accept", seen.can_accept)) if ok
        ]
        if seen.bid_range is not None and (not options or rng.random() < 0.3):
            lo, hi = seen.bid_range
            return {"op": "bid", "amount": min(hi, lo + 5 * rng.randint(0, 2))}
        return {"op": rng.choice(options)} if options else None
    if seen.deciding and seen.phase == "play" and seen.playable:
        tile, positions = rng.choice(seen.playable)
        return {"op": "place", "tile": tile, "at": rng.choice(positions)}
    if seen.can_continue:
        return {"op": "continue"}
    return None


@dataclass
class Behaviour:
    """How the bots of a table behave."""

    think: tuple[float, float] = (1.0, 4.0)  # seconds, uniform, per decision
    play: bool = True  # False: press Start, then sit idle (idle match sockets)
    replace: bool = True  # a finished match is followed by a new one


class Socket:
    """A logged-in socket that reconnects by itself, as a page does.

    When the server closes it (a restart's 1012, a dropped connection's 1006, a
    handshake that failed), it waits a short, growing, jittered backoff and
    connects again; each unexpected close counts as a dropped socket. A close
    on purpose (4401 not logged in, 4403 not a player) ends it.
    """

    def __init__(
        self, session: aiohttp.ClientSession, base: str, acct: Account, rec: Recorder
    ) -> None:
        self.session = session
        self.base = base
        self.acct = acct
        self.rec = rec
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.stopping = False
        self.dropped = False  # the server closed the last connection: the next one resumes
        self.task: asyncio.Task[None] | None = None

    def url(self) -> str:
        raise NotImplementedError

    def opened(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        """A new connection is up (nothing received yet)."""

    def on_text(self, text: str, at: float) -> None:
        """A text frame arrived at monotonic time ``at``."""

    def lost(self) -> None:
        """The connection is gone (whatever the reason)."""

    def refused(self, code: int) -> None:
        """The server closed on purpose: no reconnecting."""
        self.rec.error(f"close_{code}")

    def start(self) -> None:
        self.task = asyncio.ensure_future(self.run())

    async def run(self) -> None:
        backoff = BACKOFF_S[0]
        while not self.stopping:
            try:
                ws = await self.session.ws_connect(
                    self.url(),
                    headers={"Cookie": f"sessionid={self.acct.sessionid}"},
                    origin=self.base,
                )
            except (TimeoutError, aiohttp.ClientError) as exc:
                connect_failed(self.rec, exc)
                backoff = await pause(backoff)
                continue
            self.ws = ws
            self.opened(ws)
            try:
                async for msg in ws:
                    if msg.type == aiohttp.WSMsgType.TEXT:
                        self.on_text(msg.data, time.monotonic())
                        backoff = BACKOFF_S[0]
                    elif msg.type == aiohttp.WSMsgType.ERROR:
                        break
            except (TimeoutError, aiohttp.ClientError):
                pass
            finally:
                self.ws = None
                self.lost()
            if self.stopping:
                break
            if ws.close_code in CLOSE_FINAL:
                self.refused(ws.close_code)
                break
            self.rec.drops.append((time.monotonic(), ws.close_code))
            self.dropped = True
            backoff = await pause(backoff)

    async def close(self) -> None:
        self.stopping = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task


class Bot(Socket):
    """One seat's socket."""

    def __init__(self, table: Table, seat: int, acct: Account, html: bool) -> None:
        fleet = table.fleet
        super().__init__(fleet.ws, fleet.base, acct, fleet.rec)
        self.table = table
        self.seat = seat
        self.html = html
        self.page = Fragments()
        self.seen: Seen | None = None
        self.seen_at = 0.0
        self.turn_seen = 0.0  # when the decision now pending first showed
        self.acted_version: int | None = None
        # The decision (Seen.decision) of the action sent on this connection and not yet
        # answered, and when it was sent.
        self.in_flight: tuple[Any, ...] | None = None
        self.in_flight_at = 0.0
        self.start_sent = False  # Start pressed on this connection
        self.thinking: asyncio.Task[None] | None = None
        self.thought = 0.0  # s thought since this seat's clock last stood (Table.account_main)
        self.connected = asyncio.Event()  # first state received on the current socket
        self.delta: Delta | None = None  # version 2: the view this socket holds

    def url(self) -> str:
        # HTML as the page; JSON bots speak version 2 (deltas) unless the fleet says 1.
        v2 = self.table.fleet.protocol == 2
        query = "?format=html" if self.html else ("?v=2" if v2 else "")
        return f"{self.table.fleet.ws_base}/ws/matches/{self.table.match_id}/{query}"

    def opened(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.page = Fragments()  # the state sent on connect rebuilds the page
        self.delta = Delta() if self.table.fleet.protocol == 2 else None  # a whole first frame
        # A frame sent just before the drop may be lost: decide again from that state.
        self.acted_version = None
        self.in_flight = None
        self.start_sent = False

    def lost(self) -> None:
        self.connected.clear()

    def refused(self, code: int) -> None:
        super().refused(code)
        self.table.done.set()

    def on_text(self, text: str, at: float) -> None:
        self.on_frame(text, at)

    def on_frame(self, text: str, at: float) -> None:
        if self.html:
            ids = self.page.merge(text)
            seen = read_page(self.page) if "sb-status" in ids else None
            error = toast_code(self.page) if "sb-toast" in ids else None
        else:
            try:
                seen, error = read_json(text, self.delta)
            except ValueError:  # a delta it cannot apply: ask for the whole view
                self.rec.error("v2_lost_track", text)
                self.table.fleet.background(self.send_raw({"op": "sync", "version": 0}))
                return
            if seen is not None and '"events_after":null' not in text:
                self.rec.frame_bytes.append((at, len(text.encode())))
        if error:
            self.rec.error(error, text)
            self.table.pending[self.seat] = None
            self.acted_version = None  # a refused action: look again and decide again
            self.in_flight = None
        if seen is None:
            return
        first = not self.connected.is_set()
        if first and self.dropped:
            self.dropped = False
            self.rec.reconnects.append((at, self.table.match_id, self.seat))
        if self.seen is None or seen.version >= self.seen.version or first:
            self.seen, self.seen_at = seen, at
        self.connected.set()
        self.table.on_state(self, seen, at)
        self.react()

    def react(self) -> None:
        s = self.seen
        if s is None or self.stopping or self.ws is None:
            return
        if s.over:
            self.table.over(s)
            return
        if s.can_start and not self.start_sent:
            # Once: the opponent's Start comes with a new version that still offers
            # this seat the button until its own press arrives.
            self.start_sent = True
            self.table.fleet.background(self.send({"op": "start"}, s, 0.0))
            return
        if not self.table.behaviour.play:
            return
        wanted = s.deciding or s.can_continue
        if wanted and self.thinking is None and self.acted_version != s.version:
            if self.in_flight == s.decision and time.monotonic() - self.in_flight_at < IN_FLIGHT_S:
                # Only time was given back since the action now on its way (our credit
                # for a restart, a late push): its answer is awaited, as the page awaits
                # it, not a second decision sent after it to be refused as stale.
                self.acted_version = s.version
                return
            self.in_flight = None
            self.turn_seen = self.seen_at
            self.thinking = asyncio.ensure_future(self.think())

    async def think(self) -> None:
        lo, hi = self.table.behaviour.think
        think_s = self.table.rng.uniform(lo, hi)
        self.thought += think_s
        try:
            await asyncio.sleep(think_s)
            s = self.seen
            if s is None or self.ws is None or self.stopping or s.over:
                return
            # Look again, as a person would: decide from the newest state.
            frame = choose(s, self.table.rng)
            if frame is not None and self.acted_version != s.version:
                self.acted_version = s.version
                await self.send(frame, s, think_s)
        finally:
            self.thinking = None
        self.react()  # a newer state may already ask for the next decision

    async def send_raw(self, frame: dict[str, Any]) -> None:
        ws = self.ws
        if ws is not None and not ws.closed:
            with contextlib.suppress(ConnectionError):
                await ws.send_str(json.dumps(frame))

    async def send(self, frame: dict[str, Any], s: Seen, think_s: float) -> None:
        ws = self.ws
        if ws is None or ws.closed:
            return
        frame["version"] = s.version
        now = time.monotonic()
        main = s.main[self.seat] if s.main else None
        self.table.pending[self.seat] = Move(
            op=frame["op"],
            match_id=self.table.match_id,
            seat=self.seat,
            mover_html=self.html,
            version=s.version,
            sent=now,
            turn_seen=self.turn_seen if think_s else now,
            think_s=think_s,
            main_before=main,
            delay_left_before=s.delay_left if s.running == self.seat else 0,
        )
        self.rec.sent.append(now)
        self.in_flight, self.in_flight_at = s.decision, now
        with contextlib.suppress(ConnectionError):  # closed meanwhile: the reconnect resyncs
            await ws.send_str(json.dumps(frame))

    async def resign(self) -> None:
        s = self.seen
        if self.ws is not None and s is not None and not s.over:
            await self.ws.send_str(json.dumps({"op": "resign", "version": s.version}))

    async def close(self) -> None:
        if self.thinking is not None:
            self.thinking.cancel()
        await super().close()


def only_credits(seen: Seen) -> bool:
    """A JSON frame whose events are all ``credit``s: a change that only gave time back
    (after our outage) while a move was on its way, not the move: its latency goes on.
    A page's socket reads no events, so there the first newer version ends it."""
    return bool(seen.events) and all(kind == "credit" for _, kind, _ in seen.events)


class Table:
    """One match at a time between two accounts; one seat JSON, the other HTML."""

    def __init__(
        self, fleet: Fleet, a: Account, b: Account, behaviour: Behaviour, rng: random.Random
    ) -> None:
        self.fleet = fleet
        self.accounts = (a, b)
        self.behaviour = behaviour
        self.rng = rng
        self.match_id = 0
        self.bots: list[Bot] = []
        self.pending: list[Move | None] = [None, None]
        self.done = asyncio.Event()
        self.status = "new"  # new, playing, over
        self.stopping = False
        self.task: asyncio.Task[None] | None = None
        self.matches = 0
        self.first_live = 0.0  # monotonic s when its first match was first live
        self.idle_main: list[int | None] = [None, None]  # each seat's main while it stood
        self.main_version = -1  # the last version read by account_main

    @property
    def live(self) -> bool:
        """Both sockets are up and the match is being played."""
        return self.status == "playing" and all(
            b.connected.is_set() and b.seen is not None and not b.seen.over for b in self.bots
        )

    def on_state(self, bot: Bot, seen: Seen, at: float) -> None:
        if not self.first_live and self.live:
            self.first_live = at
        other = 1 - bot.seat
        move = self.pending[other]
        if move is not None and seen.version > move.version and not only_credits(seen):
            self.pending[other] = None
            move.received = at
            move.opp_html = bot.html
            move.main_after = seen.main[other] if seen.main else None
            move.server_receipt = seen.server_now
            if move.op != "start":
                self.fleet.rec.moves.append(move)
        self.fleet.rec.saw(self.match_id, seen, at)
        self.account_main(seen, at)

    def account_main(self, seen: Seen, at: float) -> None:
        """Record main time a seat lost beyond what its own thinking explains.

        Main time falls only while the seat's clock runs, so it is read whenever it
        does not: a fall since the last such reading is what the seat's decisions
        in between cost. Of that, the bot's own thinking beyond the delay is its
        own; the rest the platform charged (a late or lost frame, a reconnection,
        an outage not given back; a timeout charges all that was left).
        """
        if seen.main is None or seen.version <= self.main_version:
            return
        self.main_version = seen.version
        for seat, bot in enumerate(self.bots):
            if seen.running == seat:
                continue
            before, now = self.idle_main[seat], seen.main[seat]
            own = max(0.0, bot.thought * 1000 - DELAY_MS)
            self.idle_main[seat], bot.thought = now, 0.0
            if before is not None and before - now > own:
                charge = (at, self.match_id, seat, before - now - own, seen.version)
                self.fleet.rec.charges.append(charge)

    def over(self, seen: Seen) -> None:
        if self.status != "playing":
            return
        self.status = "over"
        self.fleet.rec.ended.append((time.monotonic(), seen.status))
        self.done.set()

    async def run(self) -> None:
        while not self.stopping:
            self.done.clear()
            self.status = "new"
            refused: BaseException | None = None
            # The set-up slot is held until both sockets have their first state, so
            # the ramp goes no faster than the server takes handshakes.
            async with self.fleet.setting_up:
                await self.fleet.pace()
                try:
                    self.match_id = await self.fleet.api.new_match(*self.accounts)
                except (TimeoutError, HttpError, aiohttp.ClientError) as exc:
                    if not isinstance(exc, HttpError):
                        self.fleet.rec.error(f"http_{type(exc).__name__}", str(exc))
                    refused = exc
                else:
                    await self.seat_bots()
            if refused is not None:
                # Asked again later, outside the set-up slot (the others go on meanwhile).
                await asyncio.sleep(retry_wait(refused))
                continue
            await self.done.wait()
            # The other socket may still be receiving the last move: let it arrive.
            await wait_until(
                lambda: all(b.seen is not None and b.seen.over for b in self.bots), 2.0
            )
            await self.close_bots()
            if not self.behaviour.replace:
                break

    async def seat_bots(self) -> None:
        """The new match's two bots, started; returns once both sockets have their state."""
        self.matches += 1
        html_seat = self.rng.randrange(2)
        self.pending = [None, None]
        self.idle_main, self.main_version = [None, None], -1
        self.bots = [Bot(self, s, self.accounts[s], html=s == html_seat) for s in (0, 1)]
        self.status = "playing"
        for bot in self.bots:
            bot.start()
        await wait_until(lambda: all(b.connected.is_set() for b in self.bots), HANDSHAKES_S)

    async def close_bots(self) -> None:
        for bot in self.bots:
            await bot.close()

    async def stop(self, resign: bool = True, timeout: float = 10.0) -> None:
        """Resign the match (so that it does not linger live on the server), then close."""
        self.stopping = True
        if resign and self.status == "playing" and self.bots:
            # Both seats resign: whichever holds the current version ends the match.
            with contextlib.suppress(Exception):
                for bot in self.bots:
                    await bot.resign()
                await asyncio.wait_for(self.done.wait(), timeout)
        self.done.set()
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self.task, timeout)
        await self.close_bots()


class Fleet:
    """Every table of a run against one server, with the HTTP and WebSocket clients."""

    def __init__(
        self,
        base: str,
        accounts: list[Account],
        rec: Recorder,
        *,
        ramp_per_s: float = 25.0,
        setting_up: int = 8,
        seed: int | None = None,
        protocol: int = 2,
    ) -> None:
        self.base = base
        self.protocol = protocol  # what the JSON bots speak (docs/protocol.md)
        self.ws_base = "ws" + base.removeprefix("http")
        self.free = list(accounts)
        self.rec = rec
        self.tables: list[Table] = []
        self.rng = random.Random(seed)
        self.ramp_gap = 1.0 / ramp_per_s
        self.next_start = 0.0
        # At most this many matches being made at once: handshakes arrive spread out.
        self.setting_up = asyncio.Semaphore(setting_up)
        self._background: set[asyncio.Task[Any]] = set()
        self.http = aiohttp.ClientSession(
            cookie_jar=aiohttp.DummyCookieJar(),
            connector=aiohttp.TCPConnector(limit=setting_up * 2),
            timeout=aiohttp.ClientTimeout(total=HTTP_TIMEOUT_S),
        )
        # Sockets are long-lived: no pool limit, and no cookie jar (each bot its own).
        self.ws = aiohttp.ClientSession(
            cookie_jar=aiohttp.DummyCookieJar(),
            connector=aiohttp.TCPConnector(limit=0),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=HTTP_TIMEOUT_S),
        )
        self.api = Api(base, self.http, rec)

    def background(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def pace(self) -> None:
        """Wait for this match's slot in the ramp (at most ``ramp_per_s`` a second)."""
        now = time.monotonic()
        slot = max(now, self.next_start)
        self.next_start = slot + self.ramp_gap
        if slot > now:
            await asyncio.sleep(slot - now)

    def take(self, n: int) -> list[Account]:
        if len(self.free) < n:
            raise RuntimeError(f"not enough accounts: {n} wanted, {len(self.free)} left")
        out, self.free = self.free[:n], self.free[n:]
        return out

    def add(self, behaviour: Behaviour) -> Table:
        a, b = self.take(2)
        t = Table(self, a, b, behaviour, random.Random(self.rng.random()))
        t.task = asyncio.ensure_future(t.run())
        self.tables.append(t)
        return t

    def live(self) -> int:
        return sum(1 for t in self.tables if t.live)

    async def scale(self, n: int, behaviour: Behaviour, timeout: float) -> float:
        """Grow (or shrink) to ``n`` tables and wait until they are live; the ramp's seconds."""
        t0 = time.monotonic()
        while len(self.tables) > n:
            t = self.tables.pop()
            await t.stop()
            self.free.extend(t.accounts)
        self.next_start = max(self.next_start, t0)
        while len(self.tables) < n:
            self.add(behaviour)
        await wait_until(lambda: all(t.first_live for t in self.tables), timeout)
        return time.monotonic() - t0

    async def stop_all(self) -> None:
        """Resign and close every table (each stop is bounded by its own timeouts)."""
        tables, self.tables = self.tables, []
        await asyncio.gather(*(t.stop() for t in tables), return_exceptions=True)
        for t in tables:
            self.free.extend(t.accounts)

    async def close(self) -> None:
        await self.stop_all()
        for task in list(self._background):
            task.cancel()
        await self.http.close()
        await self.ws.close()


async def wait_until(ok: Callable[[], bool], timeout: float, every: float = 0.2) -> bool:
    """Poll ``ok`` until it holds or ``timeout`` seconds pass; whether it held."""
    deadline = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(every)
    return True
