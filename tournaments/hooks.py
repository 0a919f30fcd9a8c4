"""The two places a match reaches its arena (connected in ``TournamentsConfig.ready``).

- ``matches.signals.match_changed`` after every committed change: when the
  match is over, :func:`tournaments.services.settle_match_end` counts it (a
  no-op, one indexed query, for a match no arena made);
- ``matches.signals.match_starting`` when both pressed 開始: the berserk seats'
  main time is halved before the first clock runs (``services.apply_berserk``).
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

OVER = ("finished", "aborted", "voided")


def on_match_changed(sender: Any, change: Any, **kwargs: Any) -> None:
    status = change.view(change.audiences[0])["match"]["status"]
    if status not in OVER:
        return
    from .services import settle_match_end

    try:
        settle_match_end(change.match_id)
    except Exception:  # the next pairing pass settles it (services.settle_pending)
        log.exception("arena result of match %s not settled now", change.match_id)
