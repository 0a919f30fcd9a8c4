"""The engine against the shared conformance cases, through its one command.

``python -m engine.conformance`` is run as a subprocess, exactly as any other
checker runs it; every key of every ``expect[i]`` is compared with the printed
snapshot (``ends`` and ``legal`` as multisets, everything else exactly).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
PUBLIC = REPO.parent / "shared" / "conformance" / "public"
MULTISET_KEYS = ("ends", "legal")


def _public_files() -> list[Path]:
    # Missing cases must fail the run, never skip it: see test_the_public_cases_exist.
    return sorted(PUBLIC.glob("*.json")) if PUBLIC.is_dir() else []


def run_runner(*paths: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine.conformance", *map(str, paths)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def printed(proc: subprocess.CompletedProcess[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for line in proc.stdout.splitlines():
        obj = json.loads(line)
        assert set(obj) == {"id", "results"}, line
        assert obj["id"] not in out, f"case {obj['id']} printed twice"
        out[obj["id"]] = obj["results"]
    return out


@cache
def _public_run() -> tuple[int, str, dict[str, list[dict[str, Any]]]]:
    proc = run_runner(*_public_files())
    return proc.returncode, proc.stderr, printed(proc)


def _canon(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def same(key: str, want: Any, got: Any) -> bool:
    if key in MULTISET_KEYS and isinstance(want, list) and isinstance(got, list):
        return Counter(map(_canon, want)) == Counter(map(_canon, got))
    # Exact, types included: 1 is not True and 5 is not 5.0.
    return _canon(want) == _canon(got)


def _cases() -> list[Any]:
    params = []
    for path in _public_files():
        case = json.loads(path.read_text(encoding="utf-8"))
        params.append(pytest.param(path, case, id=case.get("id", path.stem)))
    # No cases must fail, not collect an empty (skipped) parameter set.
    return params or [pytest.param(PUBLIC, None, id="no-public-cases")]


def test_the_public_cases_exist() -> None:
    assert PUBLIC.is_dir(), f"conformance cases not found at {PUBLIC}"
    assert len(_public_files()) >= 38, f"expected at least 38 public cases in {PUBLIC}"


def test_the_runner_runs_every_public_case_cleanly() -> None:
    status, stderr, results = _public_run()
    assert status == 0, stderr
    assert stderr == ""
    assert len(results) == len(_public_files())


@pytest.mark.parametrize(("path", "case"), _cases())
def test_the_engine_matches_the_case(path: Path, case: dict[str, Any] | None) -> None:
    assert case is not None, f"no conformance cases found in {path}"
    _, stderr, results = _public_run()
    cid = case["id"]
    assert cid in results, f"{path.name}: no output line for {cid}; stderr:\n{stderr}"
    got = results[cid]
    actions, expect = case["actions"], case["expect"]
    assert len(expect) == len(actions), f"{cid}: the case itself has {len(expect)} expects"
    assert len(got) == len(actions), f"{cid}: {len(got)} snapshots for {len(actions)} actions"
    problems = []
    for i, (action, want) in enumerate(zip(actions, expect, strict=True)):
        for key, value in want.items():
            assert key in got[i], f"{cid} action {i}: snapshot lacks key {key!r}"
            if not same(key, value, got[i][key]):
                problems.append(
                    f"{cid} action {i}: {json.dumps(action)}\n"
                    f"  {key}: expected {_canon(value)}\n"
                    f"  {key}:      got {_canon(got[i][key])}"
                )
    assert not problems, "\n".join(problems)


def test_every_snapshot_has_every_key_of_the_readme() -> None:
    keys = {
        "ok",
        "error",
        "phase",
        "to_act",
        "balances",
        "hand_sizes",
        "talon",
        "ends",
        "end_total",
        "legal",
        "spinner",
        "jockey",
        "bid",
        "clocks",
        "winner",
        "end",
        "hand_end",
        "awaiting_reveal",
    }
    _, _, results = _public_run()
    for cid, snaps in results.items():
        for i, snap in enumerate(snaps):
            assert set(snap) == keys, f"{cid} action {i}: keys {sorted(set(snap) ^ keys)}"
            assert snap["end_total"] == sum(e["value"] for e in snap["ends"])


def test_the_multiset_comparison_is_order_free_but_not_count_free() -> None:
    a, b = {"tile": [1, 4], "value": 1}, {"tile": [1, 4], "value": 4}
    assert same("ends", [a, b], [b, a])
    assert not same("ends", [a, b], [a, b, b])
    assert not same("balances", [150, 150], [150.0, 150])
    assert not same("ok", True, 1)


# --- malformed cases ----------------------------------------------------------

DEAL0 = {
    "hands": [
        [[1, 4], [4, 4], [1, 2], [5, 5], [1, 3], [6, 6], [2, 6]],
        [[1, 1], [3, 4], [1, 5], [0, 5], [0, 0], [2, 3], [3, 6]],
    ],
    "talon": [
        [0, 1],
        [0, 2],
        [0, 3],
        [0, 4],
        [0, 6],
        [1, 6],
        [2, 2],
        [2, 4],
        [2, 5],
        [3, 3],
        [3, 5],
        [4, 5],
        [4, 6],
        [5, 6],
    ],
}
# A short hand (fewer tiles, as hand-made cases may use) that seat 1 ends by going
# out: 0 opens [1|4], 1 plays its only tile [1|1] on the low end.
HANDS_OUT = {"hands": [[[1, 4], [2, 2]], [[1, 1]]], "talon": []}
# HANDS_OUT played through (1 declines, 0 opens, 1 goes out), then the next hand.
HANDS_OUT_THEN_NEXT = [
    {"player": 1, "do": "decline", "t": 1000},
    {"player": 0, "do": "place", "tile": [1, 4], "t": 2000},
    {"player": 1, "do": "place", "tile": [1, 1], "at": {"tile": [1, 4], "side": "low"}, "t": 3000},
    {"player": None, "do": "next_hand", "t": 4000},
]


def good_case(cid: str, **setup: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "balances": [150, 150],
        "clock": {"main_ms": 120000, "delay_ms": 10000},
        "jockey": 0,
        "deals": [DEAL0],
    }
    base.update(setup)
    return {
        "id": cid,
        "setup": base,
        "actions": [
            {"player": 1, "do": "decline", "t": 1000},
            {"player": 0, "do": "place", "tile": [1, 4], "t": 2000},
        ],
        "expect": [],
    }


def write(tmp_path: Path, name: str, obj: Any) -> Path:
    p = tmp_path / f"{name}.json"
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return p


def with_actions(cid: str, actions: list[dict[str, Any]], **setup: Any) -> dict[str, Any]:
    case = good_case(cid, **setup)
    case["actions"] = actions
    return case


def _malformed_cases() -> list[Any]:
    dup = json.loads(json.dumps(DEAL0))
    dup["talon"][0] = [1, 4]
    bad_tile = json.loads(json.dumps(DEAL0))
    bad_tile["talon"][0] = [7, 1]
    clocked = [{"player": 1, "do": "decline", "t": 1000}]
    out = [
        pytest.param("unreadable", '{"id": "unreadable", "setup": ', id="unreadable-json"),
        pytest.param(
            "no-second-deal",
            with_actions(
                "no-second-deal",
                HANDS_OUT_THEN_NEXT,
                deals=[HANDS_OUT],
            ),
            id="missing-deal-for-next-hand",
        ),
        pytest.param("dup", good_case("dup", deals=[dup]), id="duplicate-tile"),
        pytest.param("bad-tile", good_case("bad-tile", deals=[bad_tile]), id="invalid-tile-7-1"),
        pytest.param("zero", good_case("zero", balances=[0, 300]), id="balance-0"),
        pytest.param(
            "t-missing",
            with_actions("t-missing", [{"player": 1, "do": "decline"}]),
            id="t-missing-with-clock",
        ),
        pytest.param(
            "t-negative",
            with_actions("t-negative", [{"player": 1, "do": "decline", "t": -1}]),
            id="t-negative",
        ),
        pytest.param(
            "t-decreasing",
            with_actions(
                "t-decreasing",
                [*clocked, {"player": 0, "do": "place", "tile": [1, 4], "t": 999}],
            ),
            id="t-decreasing",
        ),
        pytest.param(
            "t-float",
            with_actions("t-float", [{"player": 1, "do": "decline", "t": 2500.0}]),
            id="t-2500.0",
        ),
        pytest.param(
            "unknown-do",
            with_actions("unknown-do", [{"player": 1, "do": "fold", "t": 1000}]),
            id="unknown-do",
        ),
        pytest.param(
            "string-player",
            with_actions("string-player", [{"player": "0", "do": "decline", "t": 1000}]),
            id="player-as-string",
        ),
    ]
    return out


def test_the_missing_deal_case_really_reaches_a_second_hand(tmp_path: Path) -> None:
    # Guard for the "missing deal" case below: with a second deal it is well formed,
    # so its rejection really is about the missing deal.
    case = with_actions(
        "two-deals",
        HANDS_OUT_THEN_NEXT,
        deals=[HANDS_OUT, DEAL0],
    )
    proc = run_runner(write(tmp_path, "two-deals", case))
    assert proc.returncode == 0, proc.stderr
    (res,) = printed(proc)["two-deals"][-1:]
    assert res["ok"] and res["phase"] == "auction" and res["jockey"] == 1


@pytest.mark.parametrize(("name", "case"), _malformed_cases())
def test_a_malformed_case_prints_nothing_and_fails_the_run(
    tmp_path: Path, name: str, case: Any
) -> None:
    good = write(tmp_path, "good-before", good_case("good-before"))
    bad = write(tmp_path, name, case)
    good_after = write(tmp_path, "good-after", good_case("good-after"))
    proc = run_runner(good, bad, good_after)
    assert proc.returncode != 0
    results = printed(proc)
    assert set(results) == {"good-before", "good-after"}, proc.stdout
    assert all(r["ok"] for r in results["good-after"])
    assert name in proc.stderr, proc.stderr
    assert "good-before" not in proc.stderr and "good-after" not in proc.stderr


def test_a_run_of_only_good_cases_exits_zero(tmp_path: Path) -> None:
    proc = run_runner(write(tmp_path, "g", good_case("g")))
    assert proc.returncode == 0, proc.stderr
    assert [r["ok"] for r in printed(proc)["g"]] == [True, True]


def test_a_missing_file_is_named_and_fails_the_run(tmp_path: Path) -> None:
    proc = run_runner(tmp_path / "nowhere.json", write(tmp_path, "g", good_case("g")))
    assert proc.returncode != 0
    assert "nowhere.json" in proc.stderr
    assert set(printed(proc)) == {"g"}


# --- leniency -----------------------------------------------------------------


def test_a_tile_written_high_first_means_the_same_tile(tmp_path: Path) -> None:
    case = good_case("high-first")
    case["actions"][1]["tile"] = [4, 1]
    proc = run_runner(write(tmp_path, "high-first", case))
    assert proc.returncode == 0, proc.stderr
    snap = printed(proc)["high-first"][1]
    assert snap["ok"] and snap["balances"] == [155, 145]
    assert same("ends", [{"tile": [1, 4], "value": 1}, {"tile": [1, 4], "value": 4}], snap["ends"])


def test_a_deal_and_a_position_written_high_first_are_accepted(tmp_path: Path) -> None:
    deal = json.loads(json.dumps(DEAL0))
    deal["hands"][0][0] = [4, 1]
    deal["talon"][0] = [1, 0]
    case = good_case("high-first-deal", deals=[deal])
    case["actions"].append(
        {
            "player": 1,
            "do": "place",
            "tile": [1, 1],
            "at": {"tile": [4, 1], "side": "low"},
            "t": 3000,
        }
    )
    proc = run_runner(write(tmp_path, "hfd", case))
    assert proc.returncode == 0, proc.stderr
    snap = printed(proc)["high-first-deal"][2]
    assert snap["ok"] and snap["spinner"] == [1, 1] and snap["end_total"] == 6


def test_missing_balances_jockey_clock_and_handoff_take_their_defaults(tmp_path: Path) -> None:
    case = {
        "id": "defaults",
        "setup": {"deals": [DEAL0]},
        # Forced opening (jockey null): the highest double [6|6] is seat 0's.
        # No clock: t may be left out, and player on tick is ignored.
        "actions": [
            {"player": 0, "do": "place", "tile": [6, 6]},
            {
                "player": 1,
                "do": "place",
                "tile": [3, 6],
                "at": {"tile": [6, 6], "side": "straight_a"},
            },
            {"player": 1, "do": "tick", "t": 10**9},
        ],
    }
    proc = run_runner(write(tmp_path, "defaults", case))
    assert proc.returncode == 0, proc.stderr
    first, second, third = printed(proc)["defaults"]
    assert first["ok"] and first["jockey"] is None and first["clocks"] is None
    assert first["balances"] == [150, 150] and first["awaiting_reveal"] is False
    assert first["end_total"] == 12 and first["to_act"] == 1
    assert second["ok"] and second["end_total"] == 15 and second["balances"] == [135, 165]
    assert third["ok"] and third["phase"] == "play" and third["winner"] is None


def test_an_explicit_null_balances_or_handoff_means_absent_as_null_clock_does(
    tmp_path: Path,
) -> None:
    """ "Lenient where nothing is lost": a generator writing every key, absent ones as
    null, gets the defaults (150/150, no hand-off), as `"clock": null` gives no clock;
    a value of another type is still malformed."""
    nulls = good_case("nulls", balances=None, handoff=None, clock=None)
    plain = good_case("plain", clock=None)
    del plain["setup"]["balances"]
    proc = run_runner(write(tmp_path, "nulls", nulls), write(tmp_path, "plain", plain))
    assert proc.returncode == 0, proc.stderr
    out = printed(proc)
    assert out["nulls"] == out["plain"]
    assert out["nulls"][0]["balances"] == [150, 150] and out["nulls"][0]["awaiting_reveal"] is False
    for name, bad in (
        ("hs", good_case("hs", handoff="yes")),
        ("bs", good_case("bs", balances=150)),
    ):
        proc = run_runner(write(tmp_path, name, bad))
        assert proc.returncode != 0 and name not in printed(proc), proc.stdout


def test_an_at_for_the_opening_tile_is_rejected_not_malformed(tmp_path: Path) -> None:
    case = good_case("opening-at")
    case["actions"][1]["at"] = {"tile": [1, 4], "side": "low"}
    proc = run_runner(write(tmp_path, "opening-at", case))
    assert proc.returncode == 0, proc.stderr
    snap = printed(proc)["opening-at"][1]
    assert (snap["ok"], snap["error"], snap["to_act"]) == (False, "bad_position", 0)


def test_an_unknown_side_is_rejected_not_malformed(tmp_path: Path) -> None:
    case = good_case("odd-side")
    case["actions"].append(
        {
            "player": 1,
            "do": "place",
            "tile": [1, 1],
            "at": {"tile": [1, 4], "side": "up"},
            "t": 3000,
        }
    )
    proc = run_runner(write(tmp_path, "odd-side", case))
    assert proc.returncode == 0, proc.stderr
    snap = printed(proc)["odd-side"][2]
    assert (snap["ok"], snap["error"], snap["balances"]) == (False, "bad_position", [155, 145])
