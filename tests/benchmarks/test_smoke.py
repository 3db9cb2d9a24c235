"""The benchmark harness at size S, so it cannot rot. Speed is reported by the harness,
never asserted here: this only checks that every figure is produced."""

from __future__ import annotations

from pathlib import Path

from tests.benchmarks.run import TARGETS, run, table


def test_harness_produces_every_figure(tmp_path: Path):
    results = run("S", tmp_path, quick=True)
    for key in ("floor_read_s", "cold_load_s", "warm_load_s", "inject_p50_ms", "inject_p95_ms",
                "preview_process_median_s", "edit_event_p50_ms", "edit_event_p95_ms", "tui_populated_s",
                "tui_max_stall_ms", "peak_rss_mb", *TARGETS):
        assert results[key] >= 0, key
    assert results["entries"]["user"] + results["entries"]["project"] == 100
    assert results["preview_json_bytes"] > 0
    assert "build_injection p50 / p95" in table(results)
