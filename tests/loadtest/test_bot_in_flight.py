"""A harness bot waits for its action's answer when only time was given back meanwhile.

After a web process dies, the outage is given back to every match as a new version
(a credit) while many moves are on their way. The bot used to take that new version
for a new decision and send a second move; the first was applied (matches.play.store.
only_time_since) and the second refused as ``stale`` — 20–37 such refusals in each
SIGKILL of the drill at 500, every one a second move the bot sent, none a move the
server lost. A page keeps its tiles held while its move is in flight; so does the bot
now, on the same connection, as long as what it is asked to decide is unchanged.
"""

from __future__ import annotations

import asyncio
import json
import random
from types import SimpleNamespace
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from loadtest.bots import Account, Behaviour, Bot, Recorder, Table
from matches.clock import outage
from matches.play import timing
from matches.play.store import current_view
from tests.support import Tables

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE_S = 5.0


class Wire:
    """The bot's socket: what it sends is kept (``changed`` is set at each frame)."""

    closed = False

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    async def send_str(self, text: str) -> None:
        self.sent.append(json.loads(text))
        self.changed.set()


def _bot(match_id: int, seat: int) -> tuple[Bot, Wire]:
    fleet = SimpleNamespace(
        ws=None,
        base="http://bots.invalid",
        ws_base="ws://bots.invalid",
        rec=Recorder(),
        protocol=1,
        background=asyncio.ensure_future,
    )
    accounts = (Account("a", "s"), Account("b", "s"))
    table = Table(fleet, *accounts, Behaviour(think=(0.0, 0.0)), random.Random(3))  # type: ignore[arg-type]
    table.match_id = match_id
    bot = Bot(table, seat, accounts[seat], html=False)
    table.bots = [bot, bot]
    wire = Wire()
    bot.ws = wire  # type: ignore[assignment]
    bot.opened(wire)  # type: ignore[arg-type]
    return bot, wire


def _frame(match_id: int, user: Any) -> str:
    _, view = current_view(match_id, user)
    return json.dumps({"type": "state", "version": view["match"]["version"], "view": view})


async def _sent(wire: Wire, n: int) -> None:
    async def until_n() -> None:
        while len(wire.sent) < n:
            wire.changed.clear()
            await wire.changed.wait()

    try:
        await asyncio.wait_for(until_n(), DEADLINE_S)
    except TimeoutError:
        pytest.fail(f"{len(wire.sent)} frames sent, not {n}")


async def _settled(bot: Bot) -> None:
    """The bot's decision in progress, if it started one, is over."""
    if bot.thinking is not None:
        await asyncio.wait_for(asyncio.shield(bot.thinking), DEADLINE_S)


@pytest.fixture
def started(alice: Any, bob: Any, settings: Any) -> tuple[Any, Any]:
    """A started match, and the user whose seat acts first."""
    settings.DEAL_SEED = 5
    tables = Tables()
    m = tables.start(tables.casual(alice, bob))
    _, view = current_view(m.pk, alice)
    return m, (alice if view["my_turn"] else bob)


async def _first_move(started: tuple[Any, Any]) -> tuple[Bot, Wire, str]:
    """The bot of the seat to act, shown its view: it has sent its move (and the view)."""
    m, user = started
    bot, wire = _bot(m.pk, 0 if user.pk == m.player0_id else 1)
    first = await sync_to_async(_frame)(m.pk, user)
    bot.on_frame(first, 0.0)
    await _sent(wire, 1)
    assert wire.sent[0]["op"] in ("place", "bid", "accept", "decline")
    return bot, wire, first


async def test_a_credit_while_the_move_is_on_its_way_does_not_make_the_bot_move_again(
    started: tuple[Any, Any],
) -> None:
    m, user = started
    bot, wire, _ = await _first_move(started)
    chosen_at = wire.sent[0]["version"]
    # Our outage is given back before the move arrives: a new version, the same choices.
    now = timing.now_ms()
    assert await sync_to_async(outage.credit_outage)(now, now + 1_000) == [m.pk]
    credited = await sync_to_async(_frame)(m.pk, user)
    assert json.loads(credited)["version"] == chosen_at + 1
    bot.on_frame(credited, 1.0)
    await _settled(bot)
    assert len(wire.sent) == 1  # no second move behind the first
    # Refused after all (say, stale): the bot looks again and decides again.
    bot.on_frame(json.dumps({"type": "error", "code": "stale", "message": "…"}), 2.0)
    bot.on_frame(credited, 2.0)
    await _sent(wire, 2)
    assert wire.sent[1]["version"] == chosen_at + 1


async def test_after_a_reconnection_the_bot_decides_again_even_on_the_same_choices(
    started: tuple[Any, Any],
) -> None:
    # The move may have been lost with the connection: the first view on the new one
    # is a decision to make, credit or not.
    bot, wire, first = await _first_move(started)
    bot.lost()
    bot.opened(wire)  # type: ignore[arg-type]
    bot.on_frame(first, 1.0)
    await _sent(wire, 2)
    assert wire.sent[1]["version"] == wire.sent[0]["version"]  # decided again, same view
