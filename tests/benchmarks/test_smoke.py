"""The benchmark harness at size S, so it cannot rot. Speed is reported by the harness,
never asserted here: this checks that every figure is measured (a duration nobody measured
stays 0 or NaN) and that the figures agree with each other."""

from __future__ import annotations

import math
from pathlib import Path

from tests.benchmarks.run import TARGETS, run, table


def test_harness_produces_every_figure(tmp_path: Path):
    results = run("S", tmp_path, quick=True)
    durations = ("floor_read_s", "cold_load_s", "warm_load_s", "inject_p50_ms", "inject_p95_ms",
                 "preview_process_median_s", "edit_event_p50_ms", "edit_event_p95_ms", "tui_populated_s",
                 "peak_rss_mb", *(k for k in TARGETS if k != "tui_max_stall_ms"))
    for key in durations:
        assert math.isfinite(results[key]) and results[key] > 0, (key, results[key])
    # the probe starts at 0 and keeps the longest gap it saw (none: 0), within the run's length
    assert 0 <= results["tui_max_stall_ms"] < 30_000, results["tui_max_stall_ms"]
    assert results["reloaded_files"] > 0
    assert results["inject_p95_ms"] >= results["inject_p50_ms"]
    assert results["edit_event_p95_ms"] >= results["edit_event_p50_ms"]
    # a whole `memtui preview` process includes an injection, and Python's start-up besides
    assert results["preview_process_median_s"] * 1000 > results["inject_p50_ms"]
    for key, ratio in results["ratios_to_floor"].items():
        assert ratio == results[key] / results["floor_read_s"], key
    assert results["entries"]["user"] + results["entries"]["project"] == 100
    assert results["preview_json_bytes"] > 0
    assert "build_injection p50 / p95" in table(results)
