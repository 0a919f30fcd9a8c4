"""Rows of figures from a window's records and /proc usage, printed as Markdown tables."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from .bots import Move
from .procstat import Usage


def pct(values: list[float], p: float) -> float | None:
    """The p-th percentile (nearest rank) of ``values``; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def latency(moves: list[Move]) -> dict[str, Any]:
    return summary([m.latency_ms for m in moves])


def summary(ms: list[float]) -> dict[str, Any]:
    """p50, p95, p99 and max of ``ms`` (rounded to µs), and how many."""
    figures = {
        "p50": pct(ms, 50),
        "p95": pct(ms, 95),
        "p99": pct(ms, 99),
        "max": max(ms, default=None),
    }
    return {**{k: None if v is None else round(v, 3) for k, v in figures.items()}, "n": len(ms)}


def move_split(moves: list[Any]) -> dict[str, Any]:
    """Where moves' time went: p50 to a JSON and to an HTML opponent, and (JSON
    opponents' views carry the receipt stamp) p50 to the server and back out."""
    to_json = [m.latency_ms for m in moves if not m.opp_html]
    to_html = [m.latency_ms for m in moves if m.opp_html]
    inbound = [m.inbound_ms for m in moves if m.inbound_ms is not None]
    outbound = [m.latency_ms - m.inbound_ms for m in moves if m.inbound_ms is not None]
    split = {
        "to_json_p50": pct(to_json, 50),
        "to_html_p50": pct(to_html, 50),
        "inbound_p50": pct(inbound, 50),
        "outbound_p50": pct(outbound, 50),
    }
    return {k: None if v is None else round(v, 3) for k, v in split.items()}


STAGES = ("taken", "locked", "committed", "built", "handed", "published")


def stage_figures(
    before: dict[str, dict[float, float]], after: dict[str, dict[float, float]]
) -> dict[str, dict[str, Any]]:
    """Per stage of a move in the server (``sb_move_stage_seconds``, the window's part):
    how many, and the bucket bound the p50 and p99 fall under (ms: "at most")."""
    out: dict[str, dict[str, Any]] = {}
    for stage in STAGES:
        a, b = before.get(stage, {}), after.get(stage)
        if not b:
            continue
        delta = sorted((le, b[le] - a.get(le, 0.0)) for le in b)
        total = delta[-1][1] if delta else 0.0
        if total <= 0:
            continue

        def under(q: float, delta: list[tuple[float, float]] = delta, total: float = total) -> Any:
            le = next(le for le, n in delta if n >= q * total)
            return None if le == float("inf") else round(le * 1000, 1)

        out[stage] = {"n": int(total), "p50_le_ms": under(0.5), "p99_le_ms": under(0.99)}
    return out


def stage_means(
    before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]]
) -> dict[str, float]:
    """Per stage of a move in the server, its mean in ms between two scrapes (an idle
    server's moves have no tail worth a bucket: the mean says where the time goes)."""
    out: dict[str, float] = {}
    for stage in STAGES:
        s0, n0 = before.get(stage, (0.0, 0.0))
        s1, n1 = after.get(stage, (0.0, 0.0))
        if n1 > n0:
            out[stage] = round((s1 - s0) * 1000 / (n1 - n0), 2)
    return out


def stage_line(stages: dict[str, dict[str, Any]]) -> str:
    """``taken ≤0.5/≤5 · locked …`` (p50/p99 in ms; ``>`` past the last bucket)."""

    def f(v: Any) -> str:
        return "≤" + _n(v) if v is not None else ">2500"

    return " · ".join(f"{s} {f(x['p50_le_ms'])}/{f(x['p99_le_ms'])}" for s, x in stages.items())


def usage_fields(u: Usage, moves: int) -> dict[str, Any]:
    return {
        "cpu_pct": {k: round(v, 1) for k, v in u.by_kind.items()},
        "server_cpu_pct": round(u.server, 1),
        "server_cpu_ms_per_move": round(u.server_cpu_s * 1000 / moves, 2) if moves else None,
        "rss_mb": {k: [round(x) for x in v] for k, v in u.rss_mb.items()},
        "postgres_cpu_pct": round(u.postgres, 1),
        "redis_cpu_pct": round(u.redis, 1),
        "harness_cpu_pct": round(u.harness, 1),
        "machine_cpu_pct": round(u.machine, 1),
    }


def level_row(
    label: str,
    window: dict[str, Any],
    u: Usage,
    *,
    target: int,
    live: list[int],
    ramp_s: float | None,
    offered: float | None = None,
) -> dict[str, Any]:
    """One level's figures; ``window`` is ``Recorder.between(t0, t1)``. With
    ``offered`` (moves a second the bots ask for) it is a level of live play, and
    the row has the moves' figures too; without, a level of idle sockets."""
    row = {
        "level": label,
        "target": target,
        "live": round(sum(live) / len(live)) if live else 0,
        "live_min": min(live) if live else 0,
        "ramp_s": None if ramp_s is None else round(ramp_s, 1),
        "window_s": round(u.seconds, 1),
        "errors": dict(window["errors"]),
        "error_examples": window["error_examples"],
        "dropped_sockets": window["drops"],
    }
    moves: list[Move] = window["moves"]
    if offered is None:
        return {**row, **usage_fields(u, 0)}
    charged = [c for m in moves if (c := m.charged_beyond_thinking_ms) is not None]
    return {
        **row,
        "offered_per_s": round(offered, 1),
        "sent_per_s": round(window["sent"] / u.seconds, 1),
        "moves_per_s": round(len(moves) / u.seconds, 1),
        "latency_ms": latency(moves),
        "latency_to_json_ms": latency([m for m in moves if not m.opp_html]),
        "latency_to_html_ms": latency([m for m in moves if m.opp_html]),
        # Of the moves a JSON opponent saw: the way to the server's receipt stamp, and
        # from it back out to the opponent (commit, push, transport, the harness).
        "inbound_ms": summary([x for m in moves if (x := m.inbound_ms) is not None]),
        "outbound_ms": summary(
            [m.latency_ms - x for m in moves if (x := m.inbound_ms) is not None]
        ),
        "moves_by_json_bots": sum(1 for m in moves if not m.mover_html),
        "moves_by_html_bots": sum(1 for m in moves if m.mover_html),
        "ops": dict(Counter(m.op for m in moves)),
        "charged_beyond_thinking_ms": {"p99": pct(charged, 99), "max": max(charged, default=None)},
        "state_frame_bytes": {
            "p50": pct(window.get("frame_bytes", []), 50),
            "p95": pct(window.get("frame_bytes", []), 95),
            "max": max(window.get("frame_bytes", []), default=None),
        },
        "voided": window["ended"].get("voided", 0),
        "ended": dict(window["ended"]),
        **usage_fields(u, len(moves)),
    }


# --- printing -------------------------------------------------------------------------


def _n(x: Any, digits: int = 1) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _errors(row: dict[str, Any]) -> str:
    errs = row.get("errors") or {}
    return " ".join(f"{k}:{v}" for k, v in sorted(errs.items())) or "0"


def _rss(row: dict[str, Any]) -> str:
    return " ".join(
        f"{kind} {'/'.join(str(x) for x in mbs)}" for kind, mbs in sorted(row["rss_mb"].items())
    )


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def play_table(rows: list[dict[str, Any]]) -> str:
    header = [
        "level",
        "live",
        "ramp s",
        "offered/s",
        "moves/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "errors",
        "dropped",
        "voided",
        "frame B p50/p95",
    ]
    out = []
    for r in rows:
        lat = r.get("latency_ms") or {}
        fb = r.get("state_frame_bytes") or {}
        out.append(
            [
                r["level"],
                _n(r["live"]),
                _n(r["ramp_s"]),
                _n(r.get("offered_per_s")),
                _n(r.get("moves_per_s")),
                _n(lat.get("p50")),
                _n(lat.get("p95")),
                _n(lat.get("p99")),
                _n(lat.get("max")),
                _errors(r),
                _n(r["dropped_sockets"]),
                _n(r.get("voided")),
                f"{_n(fb.get('p50'), 0)}/{_n(fb.get('p95'), 0)}",
            ]
        )
    return markdown(header, out)


def cpu_table(rows: list[dict[str, Any]]) -> str:
    kinds = sorted({k for r in rows for k in r["cpu_pct"]})
    header = [
        "level",
        *[f"{k} %" for k in kinds],
        "server %",
        "server ms/move",
        "RSS MB",
        "PostgreSQL %",
        "Redis %",
        "harness %",
        "machine %",
    ]
    out = []
    for r in rows:
        out.append(
            [
                r["level"],
                *[_n(r["cpu_pct"].get(k)) for k in kinds],
                _n(r["server_cpu_pct"]),
                _n(r.get("server_cpu_ms_per_move"), 2),
                _rss(r),
                _n(r["postgres_cpu_pct"]),
                _n(r["redis_cpu_pct"]),
                _n(r["harness_cpu_pct"]),
                _n(r["machine_cpu_pct"]),
            ]
        )
    return markdown(header, out)


def probe_lines(p: dict[str, Any]) -> list[str]:
    out = []
    echo = p.get("echo")
    if echo:
        out.append(
            f"echo (one group_send, {echo['n']} relays): p50 {_n(echo['p50'], 2)} ms, "
            f"p99 {_n(echo['p99'], 2)} ms"
        )
    load = p.get("echo_load")
    if load:
        out.append(
            f"echo load ({load['pairs']} pairs, {load['relays_per_s']} relays/s): server CPU "
            f"{_n(load['server_cpu_ms_per_relay'], 3)} ms per relay (server "
            f"{load['busy_server_pct']} % of a core, {load['idle_server_pct']} % with the same "
            "sockets idle, taken off)"
        )
    idle = p.get("idle_move")
    if idle:
        line = (
            f"one match, idle server ({idle['n']} moves): move → opponent p50 {_n(idle['p50'])} ms"
        )
        if echo and echo.get("p50") and idle.get("p50"):
            line += f"; move/echo ratio {idle['p50'] / echo['p50']:.1f}×"
        if idle.get("to_json_p50") is not None or idle.get("to_html_p50") is not None:
            line += (
                f" (to a JSON seat {_n(idle.get('to_json_p50'))} ms, to a page's socket "
                f"{_n(idle.get('to_html_p50'))} ms; to the server "
                f"{_n(idle.get('inbound_p50'))} ms, back out {_n(idle.get('outbound_p50'))} ms)"
            )
        means = idle.get("server_stages_mean_ms")
        if means:
            line += "; in its web process, mean ms (matches/play/stages.py): " + " · ".join(
                f"{stage} {_n(ms, 2)}" for stage, ms in means.items()
            )
        out.append(line)
    flood = p.get("flood")
    if flood:
        ratio = flood.get("ratio")
        out.append(
            f"login flood ({flood['workers']} workers, {flood['logins']} wrong-password "
            f"logins, {_n(flood['logins_per_s'])}/s): move p50 {_n(flood['idle_p50'])} ms idle → "
            f"{_n(flood['flood_p50'])} ms during the flood "
            f"({'—' if ratio is None else f'{ratio:.1f}×'} idle; goal ≤ 2×; "
            f"{flood['flood_moves']} moves)"
        )
    return out


def soak_lines(s: dict[str, Any]) -> list[str]:
    lat = s["latency_ms"]
    out = [
        f"soak {s['seconds']:.0f} s at {s['matches']} matches: {s['moves_per_s']} moves/s, "
        f"p50 {_n(lat['p50'])} ms, p99 {_n(lat['p99'])} ms, errors {_errors(s)}, "
        f"dropped {s['dropped_sockets']}, voided {s['voided']}"
    ]
    for name, (a, b) in sorted(s["rss_mb"].items()):
        if name.startswith("other:"):
            continue  # make, honcho and shells: in the JSON
        growth = "—" if not a or b is None else f"{(b - a) / a * 100:+.1f}%"
        out.append(f"  RSS {name}: {_n(a, 0)} → {_n(b, 0)} MB ({growth})")
    return out


def render(setup: str, result: dict[str, Any]) -> str:
    parts = [f"## {setup}"]
    if result.get("error"):
        parts.append(f"FAILED: {result['error']}")
    lines = probe_lines(result.get("probes") or {})
    if lines:
        parts.append("\n".join(lines))
    rows = [r for r in result.get("rows") or [] if "skipped" not in r]
    if rows:
        parts.append(play_table(rows))
        parts.append(cpu_table(rows))
        staged = [r for r in rows if r.get("server_stages")]
        if staged:
            parts.append(
                "A move in its web process, stage by stage, p50/p99 in ms (bucket bounds; "
                "matches/play/stages.py):\n"
                + "\n".join(f"- {r['level']}: {stage_line(r['server_stages'])}" for r in staged)
            )
    skipped = [r for r in result.get("rows") or [] if "skipped" in r]
    if skipped:
        parts.append("\n".join(f"{r['level']}: skipped, {r['skipped']}" for r in skipped))
    if result.get("soak"):
        parts.append("\n".join(soak_lines(result["soak"])))
    return "\n\n".join(parts)
