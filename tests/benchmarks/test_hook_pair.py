"""The paired hook benchmark (tests/benchmarks/hook_pair.py) on two small homes with one
install, so it cannot rot: every spawn is timed and both sides say the same. Its figures
are the benchmark's (python -m tests.benchmarks.hook_pair), never asserted here."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from memtui.core.paths import Paths
from tests.benchmarks.hook_pair import measure
from tests.helpers import enable, write


def _home(root: Path) -> Paths:
    paths = Paths((root / "home").resolve(), (root / "ws").resolve())
    (paths.home / "memory").mkdir(parents=True)
    (paths.workspace / ".muse" / "memory").mkdir(parents=True)
    enable(paths, {"memory": {"injection": "focused"}})
    write(paths.user_root / "prefs.md", "- The database pool times out after 30 s\n")
    write(paths.project_root / "context.md", "- The pool lives in src/db/pool.ts\n")
    return paths


def test_both_sides_are_timed_and_answer_alike(tmp_path: Path):
    memtui = str(Path(sys.executable).parent / "memtui")
    a, b = _home(tmp_path / "a"), _home(tmp_path / "b")
    found = measure({"a": [memtui, str(a.home), str(a.workspace)], "b": [memtui, str(b.home), str(b.workspace)]},
                    repeats=2, query="database pool")
    assert all(len(runs) == 2 and all(t > 0 for t in runs) for runs in found["runs_s"].values())
    assert math.isfinite(found["ratio_b_a"]) and found["ratio_b_a"] > 0
    assert found["same_output"] and found["output_bytes"] > 0  # the memories, injected by both
