"""Keyword vs hybrid retrieval (SPEC §13) on the labelled set in `relevance_set.py`.

    python -m tests.benchmarks.relevance [--budget default|tight] [--json]

For each mode it writes the set as memtui's files and Muse's rows in a fresh temporary home and
workspace, asks `build_injection` for every query, and counts, over all queries: the needed
memories that are in the injected text (recall), the injected memories that were not needed,
and, on the paraphrase queries alone, the needed memories that keyword retrieval misses and
hybrid finds. It also times the hook (`memtui hook claude-code`, a spawned process, warm) per mode:
the median CPU time (user + system) and wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from memtui.core.paths import Paths
from memtui.core.serve import build_injection
from memtui.core.store.database import Database

from .relevance_set import CONVERSATION, PROJECT, QUERIES, USER

BUDGETS = {
    "default": None,  # SPEC §4's defaults
    # A store with more than fits: roughly what a year of use gives a 2,000-token budget.
    "tight": {"total": 500, "user": 150, "project": 250, "conversation": 150},
}


def write_set(base: Path, retrieval: str, budget: dict | None) -> Paths:
    paths = Paths(base.resolve() / "home", base.resolve() / "workspace")
    paths.user_root.mkdir(parents=True)
    paths.project_root.mkdir(parents=True)
    (paths.user_root / "preferences.md").write_text(
        "---\ntype: preference\n---\n\n" + "".join(f"- {t}\n" for t in USER.values()), encoding="utf-8")
    (paths.project_root / "context.md").write_text("".join(f"- {t}\n" for t in PROJECT.values()), encoding="utf-8")
    memory: dict = {"retrieval": retrieval}
    if budget:
        memory["budget"] = budget
    (paths.home / "settings.json").write_text(json.dumps({"memoryEnabled": True, "memory": memory}), encoding="utf-8")
    Database(paths.db_path).ensure_schema()
    with sqlite3.connect(paths.db_path) as conn:
        conn.execute("INSERT INTO conversations VALUES ('conv-1', 'billing', ?, 1, 1)", (str(paths.workspace),))
        conn.executemany(
            "INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, created_at, "
            "updated_at) VALUES (?, 'conversation', 'knowledge', ?, '[]', 'auto', 'conv-1', NULL, ?, ?)",
            [(key, text, 1_760_000_000_000 + i, 1_760_000_000_000 + i) for i, (key, text) in enumerate(CONVERSATION.items())])
    conn.close()
    return paths


@dataclass
class Tally:
    mode: str
    needed: int = 0
    found: int = 0
    unneeded: int = 0
    injected: int = 0
    paraphrase_found: set[tuple[str, str]] = field(default_factory=set)
    paraphrase_needed: int = 0
    hook_ms: float = 0.0
    hook_cpu_ms: float = 0.0
    model: str = ""

    def as_dict(self) -> dict:
        return {"mode": self.mode, "needed": self.needed, "found": self.found, "unneeded_injected": self.unneeded,
                "injected": self.injected, "paraphrase_needed": self.paraphrase_needed,
                "paraphrase_found": len(self.paraphrase_found), "hook_ms_median": round(self.hook_ms, 1),
                "hook_cpu_ms_median": round(self.hook_cpu_ms, 1), "model": self.model}


def run_mode(retrieval: str, budget: dict | None, hook_runs: int) -> Tally:
    by_text = {text: key for part in (USER, PROJECT, CONVERSATION) for key, text in part.items()}
    tally = Tally(retrieval)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_set(Path(tmp), retrieval, budget)
        for query, needed, paraphrase in QUERIES:
            result = build_injection(paths.workspace, query, home=paths.home)
            if result.errors and retrieval == "hybrid" and not tally.model:
                tally.model = "; ".join(str(e) for e in result.errors)
            got = {by_text[c.entry.text] for c in result.included}
            tally.needed += len(needed)
            tally.found += len(needed & got)
            tally.unneeded += len(got - needed)
            tally.injected += len(got)
            if paraphrase:
                tally.paraphrase_needed += len(needed)
                tally.paraphrase_found |= {(query, k) for k in needed & got}
        tally.hook_ms, tally.hook_cpu_ms = _hook_ms(paths, hook_runs)
    return tally


def _hook_ms(paths: Paths, runs: int) -> tuple[float, float]:
    """The warm hook's median wall time and median CPU time (user + system), in ms."""
    memtui = shutil.which("memtui", path=str(Path(sys.executable).parent)) or "memtui"
    payload = json.dumps({"prompt": QUERIES[0][0], "cwd": str(paths.workspace), "session_id": "bench",
                          "hook_event_name": "UserPromptSubmit"})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times, cpu = [], []
    for i in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([memtui, "--home", str(paths.home), "hook", "claude-code"], input=payload, text=True,
                       capture_output=True, check=True, cwd=paths.workspace, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i:  # the first run warms the caches
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return (statistics.median(times), statistics.median(cpu)) if times else (0.0, 0.0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", choices=sorted(BUDGETS), default="default")
    parser.add_argument("--hook-runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    tallies = [run_mode(mode, BUDGETS[args.budget], args.hook_runs) for mode in ("keyword", "hybrid")]
    keyword, hybrid = tallies
    missed = keyword.paraphrase_needed - len(keyword.paraphrase_found)
    recovered = len(hybrid.paraphrase_found - keyword.paraphrase_found)
    if args.json:
        print(json.dumps({"budget": args.budget, "modes": [t.as_dict() for t in tallies],
                          "keyword_missed_paraphrase": missed, "hybrid_recovered": recovered}, indent=2))
        return
    print(f"budget: {args.budget}; {len(QUERIES)} queries, "
          f"{sum(1 for q in QUERIES if q[2])} of them paraphrases")
    print(f"{'mode':8} {'recall':>12} {'unneeded injected':>18} {'paraphrase recall':>18} {'hook ms CPU / wall (median)':>28}")
    for t in tallies:
        print(f"{t.mode:8} {t.found:>4}/{t.needed:<4} ({t.found / t.needed:4.0%}) {t.unneeded:>10}/{t.injected:<6} "
              f"{len(t.paraphrase_found):>9}/{t.paraphrase_needed:<8} {t.hook_cpu_ms:>17.0f} / {t.hook_ms:.0f}")
    print(f"hybrid recovers {recovered} of the {missed} needed memories keyword misses on paraphrases")
    if hybrid.model:
        print(f"note: {hybrid.model}")


if __name__ == "__main__":
    main()
