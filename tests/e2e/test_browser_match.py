"""Two people play Spectacular Bid in real browsers, through clicks alone.

Each browser context is its own player (its own cookies). Deals are seeded
(``SB_DEAL_SEED`` in the server fixture), so a run is repeatable; the players
follow a simple policy: play the first playable tile on its first lit
position, bid the minimum and accept in the first auction, and in any later
auction bid everything and accept, which ends the match by balance.
"""

from __future__ import annotations

import re
import time
from typing import Any

from tests.e2e.conftest import sign_up, start_casual_match

GAME_DEADLINE_S = 240


def _version(page: Any) -> int:
    v = page.locator("#sb-status").get_attribute("data-version")
    return int(v) if v else -1


def _visible(page: Any, selector: str) -> bool:
    loc = page.locator(selector)
    return loc.count() > 0 and loc.first.is_visible()


class Player:
    def __init__(self, page: Any, game: dict[str, int] | None = None) -> None:
        self.page = page
        self.game = game if game is not None else {"auctions": 0}  # shared by both players
        self.bids = 0
        self.placed = 0
        self.settlements = 0

    def act(self) -> bool:
        """Take one decision if this page offers one; True if a frame was sent."""
        p = self.page
        if _visible(p, "[data-testid=result]"):
            return False
        if _visible(p, "[data-testid=op-start]:not([disabled])"):
            p.click("[data-testid=op-start]")
            return True
        if _visible(p, "[data-testid=op-reveal]:not([disabled])"):
            # Nothing of either hand is on the page behind the hand-off screen.
            assert p.locator("[data-testid=hand-tile]").count() == 0
            p.click("[data-testid=op-reveal]")
            return True
        if _visible(p, "[data-testid=op-continue]:not([disabled])"):
            self.settlements += 1
            p.click("[data-testid=op-continue]")
            return True
        if _visible(p, "[data-testid=op-bid]") or _visible(p, "[data-testid=op-accept]"):
            return self._auction()
        if _visible(p, "[data-testid=op-decline]"):
            return self._auction()
        tiles = p.locator(".hand-tile.is-playable:not([disabled])")
        if tiles.count() and tiles.first.is_visible():
            tile = tiles.first
            at = (tile.get_attribute("data-at") or "").split()
            tile.click()
            if len(at) > 1:
                dot = p.locator(f'.pos.is-lit[data-pos="{at[0]}"]')
                dot.click()
            self.placed += 1
            return True
        return False

    def _auction(self) -> bool:
        p = self.page
        first_auction = self.game["auctions"] == 0
        if _visible(p, "[data-testid=op-accept]"):
            self.game["auctions"] += 1
            p.click("[data-testid=op-accept]")
            return True
        if _visible(p, "[data-testid=op-bid]"):
            amount = p.locator("[data-testid=bid-amount]")
            lo, hi = int(amount.get_attribute("min")), int(amount.get_attribute("max"))
            want = lo if first_auction else hi
            amount.fill(str(want))
            # What the bid would cost is shown before it is made.
            assert p.locator("[data-bid-cost]").inner_text().strip().isdigit()
            self.bids += 1
            p.click("[data-testid=op-bid]")
            return True
        self.game["auctions"] += 1
        p.click("[data-testid=op-decline]")
        return True


def _play_to_the_end(players: list[Player]) -> None:
    deadline = time.monotonic() + GAME_DEADLINE_S
    while time.monotonic() < deadline:
        if all(_visible(pl.page, "[data-testid=result]") for pl in players):
            return
        before = max(_version(pl.page) for pl in players)
        acted = False
        for pl in players:
            if pl.act():
                acted = True
                break
        # Wait (with a deadline) until every page shows the same, newer view:
        # deciding from a page whose update is still on its way would click a
        # tile that is about to vanish.
        step_deadline = time.monotonic() + (10 if acted else 3)
        while time.monotonic() < step_deadline:
            versions = {_version(pl.page) for pl in players}
            if len(versions) == 1 and versions.pop() > before:
                break
            players[0].page.wait_for_timeout(50)
    raise AssertionError("the match did not end in time")


def test_two_players_sign_up_invite_and_play_a_whole_match_by_clicking(new_page: Any) -> None:
    alice_page = new_page()
    bob_page = new_page()
    sign_up(alice_page, "alice_e2e")
    sign_up(bob_page, "bob_e2e")

    alice_page.click("[data-testid=create-invite]")
    invite_url = alice_page.locator("[data-testid=invite-url]").input_value()
    assert "/invites/" in invite_url

    bob_page.goto(invite_url)
    bob_page.click("[data-testid=accept-invite]")
    bob_page.wait_for_url("**/matches/*/")
    # Alice's invite page moves on by itself once Bob accepts.
    alice_page.wait_for_url("**/matches/*/", timeout=15_000)

    for page in (alice_page, bob_page):
        page.wait_for_selector("[data-testid=op-start]")
        # Japanese by default: the rules page's word for Start.
        assert "開始" in page.locator("[data-testid=op-start]").inner_text()

    game = {"auctions": 0}
    players = [Player(alice_page, game), Player(bob_page, game)]
    _play_to_the_end(players)

    for pl in players:
        result = pl.page.locator("[data-testid=result]")
        assert result.get_attribute("data-end") == "balance"
        assert result.get_attribute("data-winner") in ("0", "1")
        log = pl.page.locator("[data-testid=log]").inner_text()
        assert log.strip(), "the event log shows what happened"
    assert sum(pl.placed for pl in players) > 0
    assert sum(pl.bids for pl in players) >= 1, "an auction was played"
    assert sum(pl.settlements for pl in players) >= 1, "a hand settlement was shown"
    balances = [
        int(alice_page.locator(f"[data-testid=balance-{s}]").get_attribute("data-points") or -1)
        for s in (0, 1)
    ]
    assert sorted(balances) == [0, 300]


def test_a_same_device_match_plays_a_hand_through_the_hand_off_screen(new_page: Any) -> None:
    page = new_page(width=390, height=844)  # phone width
    sign_up(page, "carol_e2e")
    page.fill("[data-testid=guest-name]", "Dave")
    page.click("[data-testid=create-same-device]")
    page.wait_for_url("**/matches/*/")
    page.wait_for_selector("[data-testid=op-start]")

    player = Player(page)
    reveals = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if _visible(page, "[data-testid=settlement-hand]"):
            break
        before = _version(page)
        if _visible(page, "[data-testid=handoff]"):
            reveals += 1
        player.act()
        step_deadline = time.monotonic() + 10
        while time.monotonic() < step_deadline and _version(page) == before:
            page.wait_for_timeout(50)
    else:
        raise AssertionError("the hand did not end in time")
    assert reveals >= 2, "each turn was handed over behind the hand-off screen"
    # The settlement shows both hands with their pip totals.
    for seat in (0, 1):
        pips = page.locator(f"[data-testid=settle-pips-{seat}]").get_attribute("data-pips")
        assert pips is not None and pips.isdigit()


class HeldSocket:
    """Routes a page's match socket through the test: server → page messages can be
    held back (the page does not hear of a move) and then let through in order."""

    def __init__(self) -> None:
        self.page_side: Any = None
        self.holding = False
        self.held: list[Any] = []

    def route(self, ws: Any) -> None:
        self.page_side = ws
        ws.connect_to_server().on_message(self._to_page)

    def _to_page(self, message: Any) -> None:
        if self.holding:
            self.held.append(message)
        else:
            self.page_side.send(message)

    def release(self) -> None:
        self.holding = False
        for message in self.held:
            self.page_side.send(message)
        self.held.clear()


def test_a_resignation_crossing_the_opponents_move_still_ends_the_match(new_page: Any) -> None:
    # Alice confirms her resignation just as Bob's move lands: it reaches the server
    # at the version before his move and is answered "stale". She resigned whatever
    # the position, so the page sends it again on the new one and the match ends —
    # before, the resignation was lost and the match went on.
    alice_page, bob_page = new_page(), new_page()
    socket = HeldSocket()
    alice_page.route_web_socket(re.compile(r"/ws/matches/"), socket.route)
    sign_up(alice_page, "alice_stale")
    sign_up(bob_page, "bob_stale")
    start_casual_match(alice_page, bob_page)
    for page in (alice_page, bob_page):
        page.wait_for_selector("[data-testid=resign]:visible")
    game = {"auctions": 0}
    alice, bob = Player(alice_page, game), Player(bob_page, game)
    my_turn = "#sb-status[data-my-turn='1']"
    if bob_page.locator(my_turn).count() == 0:
        alice_page.wait_for_selector(my_turn, state="attached")
        assert alice.act()  # Alice decides first; then it is Bob's turn
        bob_page.wait_for_selector(my_turn, state="attached")
    before = _version(bob_page)
    alice_page.wait_for_selector(f"#sb-status[data-version='{before}']", state="attached")
    socket.holding = True  # Alice's page does not hear of Bob's move
    assert bob.act()
    bob_page.wait_for_selector(f"#sb-status:not([data-version='{before}'])", state="attached")
    alice_page.click("[data-testid=resign]")
    alice_page.click("[data-testid=resign-confirm]")
    deadline = time.monotonic() + 10
    while not any('data-code="stale"' in str(m) for m in socket.held):
        assert time.monotonic() < deadline, "the server did not answer the resignation"
        alice_page.wait_for_timeout(50)
    assert _version(alice_page) == before  # the page sent it at the old version
    socket.release()
    for page in (alice_page, bob_page):
        result = page.wait_for_selector("[data-testid=result]:visible", timeout=15_000)
        assert result.get_attribute("data-end") == "resign"
