"""Metrics an operator scrapes (Prometheus text format, prometheus-client).

Per web process (each has its own registry; scrape each process):

- ``sb_moves_total`` and ``sb_move_seconds`` (histogram): frames that changed a
  match, and the time from the frame's receipt to its commit and push;
  ``sb_move_stage_seconds{stage}`` (histogram): where that time went in this
  process — ``taken``, ``locked``, ``committed``, ``built``, ``handed``,
  ``published`` (``matches.play.stages``);
- ``sb_sockets{kind}``: open sockets — ``match`` (a seat's), ``watch``, ``lobby``;
- ``sb_loop_lag_seconds`` (histogram) and ``sb_db_wait_seconds`` (histogram):
  how late the event loop's tick ran, and how long a call waited for a match
  thread — the headroom that admission control reads;
- ``sb_saturated``: 1 while this process refuses new work;
- ``sb_admission_refusals_total{what}``: new work refused (``matches.play.admission``);
- ``sb_outage_credits_total`` and ``sb_outage_credited_seconds_total``: matches
  given an outage back and the time given, plus ``sb_loop_lag_credited_seconds_total``
  (frames' receipt moved back past a stalled loop, ``matches.clock.receipt``);
- ``sb_sweeper_lateness_seconds``: how far past due (and its grace) the most
  overdue wake-up of an open match is, read from the database at the scrape:
  0 while the deadline sweeper keeps up.

Served two ways, never to the public: ``GET /metrics`` for staff users (404 to
anyone else), and, with ``METRICS_PORT`` set, on ``127.0.0.1:<port>`` by each
web process (``config.serve``).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from matches.clock import receipt
from matches.play import admission, stages

REGISTRY = CollectorRegistry(auto_describe=True)
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

moves = Counter("sb_moves", "Frames that changed a match", registry=REGISTRY)
move_seconds = Histogram(
    "sb_move_seconds",
    "Receipt of a frame to its commit and push",
    buckets=_BUCKETS,
    registry=REGISTRY,
)
loop_lag = Histogram(
    "sb_loop_lag_seconds",
    "How late the event loop's 50 ms tick ran",
    buckets=_BUCKETS,
    registry=REGISTRY,
)
db_wait = Histogram(
    "sb_db_wait_seconds", "A call's wait for a match thread", buckets=_BUCKETS, registry=REGISTRY
)
move_stage_seconds = Histogram(
    "sb_move_stage_seconds",
    "A player's move in this process, stage by stage (matches/play/stages.py)",
    ["stage"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
    registry=REGISTRY,
)
push_delay = Histogram(
    "sb_push_delay_seconds",
    "A change's receipt to its frame reaching a socket's consumer (after commit and layer)",
    buckets=_BUCKETS,
    registry=REGISTRY,
)
refusals = Counter(
    "sb_admission_refusals", "New work refused while saturated", ["what"], registry=REGISTRY
)
outage_credits = Counter(
    "sb_outage_credits", "Matches given an outage of the web tier back", registry=REGISTRY
)
outage_seconds = Counter(
    "sb_outage_credited_seconds", "Outage time given back, per match, summed", registry=REGISTRY
)
caught_up = Counter(
    "sb_caught_up_sockets",
    "Sockets sent the current view because a push never reached them (realtime/catchup.py)",
    registry=REGISTRY,
)

_sockets: dict[str, weakref.WeakSet[Any]] = {
    k: weakref.WeakSet() for k in ("match", "watch", "lobby")
}


def track_socket(consumer: Any, kind: str) -> None:
    """Count ``consumer`` as an open socket of ``kind`` until it is closed or gone."""
    _sockets[kind].add(consumer)


def untrack_socket(consumer: Any) -> None:
    for sockets in _sockets.values():
        sockets.discard(consumer)


def observe_move(seconds: float) -> None:
    moves.inc()
    move_seconds.observe(max(0.0, seconds))


def observe_outage(match_ids: list[int], start_ms: int, end_ms: int) -> None:
    outage_credits.inc(len(match_ids))
    outage_seconds.inc(len(match_ids) * max(0, end_ms - start_ms) / 1000)


def _on_admission(kind: str, value: float) -> None:
    if kind == "loop_lag":
        loop_lag.observe(max(0.0, value) / 1000)
    elif kind == "db_wait":
        db_wait.observe(max(0.0, value) / 1000)
    elif kind == "push_delay":
        push_delay.observe(max(0.0, value) / 1000)
    elif kind.startswith("refused:"):
        refusals.labels(kind.removeprefix("refused:")).inc(value)


admission._listeners.append(_on_admission)
stages._listeners.append(lambda stage, s: move_stage_seconds.labels(stage).observe(s))


class _Now(Collector):
    """What is read at the scrape: sockets, saturation, credits, the sweeper's lateness."""

    def describe(self) -> list[GaugeMetricFamily]:
        return []  # nothing read at registration (the database is not there yet)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        g = GaugeMetricFamily("sb_sockets", "Open sockets of this process", labels=["kind"])
        for kind, sockets in _sockets.items():
            g.add_metric([kind], len(sockets))
        yield g
        yield GaugeMetricFamily(
            "sb_saturated",
            "1 while this process refuses new work",
            value=1 if admission.saturated() else 0,
        )
        yield GaugeMetricFamily(
            "sb_admission_pressure",
            "The largest admission signal as a fraction of its limit (new matches paced from 0.5)",
            value=min(admission.headroom().pressure(), 1e9),
        )
        yield GaugeMetricFamily(
            "sb_frames_queued",
            "Most frames one socket has waiting to be read",
            value=admission.frames_queued(),
        )
        yield GaugeMetricFamily(
            "sb_loop_lag_credited_seconds_total",
            "Receipt times moved back past a stalled event loop, summed",
            value=receipt.credited_ms / 1000,
        )
        yield GaugeMetricFamily(
            "sb_sweeper_lateness_seconds",
            "How far past due and grace the most overdue wake-up of an open match is",
            value=sweeper_lateness_s(),
        )


def sweeper_lateness_s() -> float:
    from django.db.models import Min

    from matches.clock.deadlines import GRACE_MS
    from matches.models import Match
    from matches.play import timing
    from matches.play.seating import OPEN_STATUSES

    now = timing.now_ms()
    due = now - GRACE_MS
    oldest = Match.objects.filter(status__in=OPEN_STATUSES, wake_at_ms__lte=due).aggregate(
        m=Min("wake_at_ms")
    )["m"]
    return 0.0 if oldest is None else (due - oldest) / 1000


REGISTRY.register(_Now())


def render() -> bytes:
    """The Prometheus text exposition of this process's metrics."""
    return bytes(generate_latest(REGISTRY))


def serve_locally(port: int) -> Any:
    """Serve :func:`render` on ``127.0.0.1:port`` from a thread (``METRICS_PORT``)."""
    from prometheus_client import start_http_server

    server, _thread = start_http_server(port, addr="127.0.0.1", registry=REGISTRY)
    return server


def view(request: Any) -> Any:
    """``GET /metrics``: staff only (anyone else is told there is nothing here)."""
    from django.http import Http404, HttpResponse
    from prometheus_client import CONTENT_TYPE_LATEST

    user = getattr(request, "user", None)
    if request.method != "GET" or user is None or not (user.is_active and user.is_staff):
        raise Http404
    response = HttpResponse(render(), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
