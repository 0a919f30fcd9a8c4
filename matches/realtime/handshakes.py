"""A web process opens a few match sockets at a time; the rest wait their turn.

A socket's handshake is the heaviest thing a web process does on its event loop:
two reads on the match threads, a channel-layer subscription, and the whole first
view, rendered as HTML for a page. A reconnect wave brings them all at once — about
1,000 at 500 matches after a restart of the web tier, 150 a second through the
proxy — and with each handshake's steps queued on the loop behind every other's, a
page (the operator's health check among them) and a live match's frames waited
behind the whole wave: a restarted process answered its first page 1.7–5 s after it
listened (the drill at 500 matches).

Here at most :data:`AT_ONCE` handshakes run their work at once; the others wait for
a turn, first come first served, which costs the loop nothing. The wave takes as
long as the process's CPU makes it take; what changes is that everything else is no
longer behind all of it. A seat whose socket waits here after our restart is
*rejoining* (``matches/clock/outage.py``, ``presence.py``): the wait is given back to
its clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator

# Enough to keep the match threads (4 on PostgreSQL) busy with the handshakes' reads
# while others render, few enough that the loop's queue stays short.
AT_ONCE = 8

_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _gate() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        gate = _gates[loop] = asyncio.Semaphore(AT_ONCE)
    return gate


@contextlib.asynccontextmanager
async def turn() -> AsyncIterator[None]:
    """Wait for a handshake's turn in this process, and hold it inside the block."""
    async with _gate():
        yield
