"""Keyword §5, hybrid §13 and focused §15 side by side on the labelled store of `focused_set.py`.

    python -m tests.benchmarks.focused [--split all|dev|held] [--hook-runs N] [--json]

For each mode it writes the set as memtui's files and Muse's rows in a fresh temporary home and
workspace, asks `build_injection` (what the hook and `memtui preview` answer) for every message at
the default budget and at a 500-token one, and counts: the needed memories in the injected text
(recall), the injected memories that were not needed (per message), the tokens injected for a
message about nothing stored, and the paraphrases whose needed conversation memory was found.
With `--hook-runs N` it also times the hook (`memtui hook claude-code`, a spawned process, warm):
the median CPU time (user + system).
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
from dataclasses import dataclass, field
from pathlib import Path

from memtui.core.paths import Paths
from memtui.core.serve import build_injection
from memtui.core.store.database import Database

from .focused_set import FocusedSet, build, check

TIGHT = {"total": 500, "user": 150, "project": 200, "conversation": 150}
MODES = {  # name -> the "memory" settings
    "keyword §5": {},
    "hybrid §13": {"retrieval": "hybrid"},
    "focused (keyword)": {"injection": "focused"},
    "focused + semantic": {"injection": "focused", "retrieval": "hybrid"},
    # decay on (SPEC §13): every memory here is weeks to a year old
    "hybrid §13 + decay": {"retrieval": "hybrid", "decay": {"halfLifeDays": 30}},
    "focused + semantic + decay": {"injection": "focused", "retrieval": "hybrid", "decay": {"halfLifeDays": 30}},
}
BASE_MS = 1_750_000_000_000


def write_set(base: Path, data: FocusedSet, memory: dict) -> Paths:
    paths = Paths(base.resolve() / "home", base.resolve() / "workspace")
    for root, files in ((paths.user_root, data.user_files), (paths.project_root, data.project_files)):
        root.mkdir(parents=True)
        for name, text in files.items():
            (root / name).write_text(text, encoding="utf-8")
    (paths.home / "settings.json").write_text(json.dumps({"memoryEnabled": True, "memory": memory}), encoding="utf-8")
    Database(paths.db_path).ensure_schema()
    other = str(base.resolve() / "ceramics")
    with sqlite3.connect(paths.db_path) as conn:
        conn.executemany("INSERT INTO conversations VALUES (?, ?, ?, ?, ?)",
                         [(cid, title, str(paths.workspace) if here else other, BASE_MS, BASE_MS)
                          for cid, (title, here) in data.conversations.items()])
        conn.executemany(
            "INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, created_at, "
            "updated_at) VALUES (?, 'conversation', 'knowledge', ?, ?, 'auto', ?, NULL, ?, ?)",
            [(f"m{i:05d}", row.text, json.dumps(list(row.tags)), row.conversation, BASE_MS + i * 3_600_000,
              BASE_MS + i * 3_600_000) for i, row in enumerate(data.rows)])
    conn.close()
    return paths


@dataclass
class Tally:
    mode: str
    budget: str
    messages: int = 0
    needed: int = 0
    found: int = 0
    unneeded: int = 0
    nothing_messages: int = 0
    nothing_tokens: int = 0
    para_conv_needed: int = 0
    para_conv_found: int = 0
    worst_unneeded: int = 0
    misses: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"mode": self.mode, "budget": self.budget, "needed": self.needed, "found": self.found,
                "recall": round(self.found / self.needed, 3) if self.needed else None,
                "unneeded_per_message": round(self.unneeded / self.messages, 1) if self.messages else None,
                "worst_unneeded": self.worst_unneeded,
                "nothing_tokens_mean": round(self.nothing_tokens / self.nothing_messages) if self.nothing_messages else None,
                "paraphrase_conversation": f"{self.para_conv_found}/{self.para_conv_needed}"}


def run_mode(data: FocusedSet, name: str, memory: dict, budget: str, split: str) -> Tally:
    by_text = {text: key for key, text in data.texts.items()}
    tally = Tally(name, budget)
    settings = dict(memory)
    if budget == "500":
        settings["budget"] = TIGHT
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_set(Path(tmp), data, settings)
        for m in data.messages:
            if split != "all" and m.split != split:
                continue
            result = build_injection(paths.workspace, m.text, home=paths.home)
            got = {by_text.get(c.entry.text, c.entry.text) for c in result.included}
            tally.messages += 1
            tally.needed += len(m.needed)
            tally.found += len(m.needed & got)
            extra = len(got - m.needed)
            tally.unneeded += extra
            tally.worst_unneeded = max(tally.worst_unneeded, extra)
            tally.misses += [f"{m.text} -> {k}" for k in sorted(m.needed - got)]
            if m.kind == "nothing":
                tally.nothing_messages += 1
                tally.nothing_tokens += result.tokens
            if m.kind == "paraphrase":
                conv = {k for k in m.needed if k.startswith("c-")}
                tally.para_conv_needed += len(conv)
                tally.para_conv_found += len(conv & got)
    return tally


def hook_cpu_ms(data: FocusedSet, memory: dict, runs: int) -> float:
    """The warm hook's median CPU time (user + system) in ms."""
    memtui = shutil.which("memtui", path=str(Path(sys.executable).parent)) or "memtui"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cpu = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_set(Path(tmp), data, memory)
        payload = json.dumps({"prompt": data.messages[1].text, "cwd": str(paths.workspace), "session_id": "bench",
                              "hook_event_name": "UserPromptSubmit"})
        for i in range(runs + 1):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([memtui, "--home", str(paths.home), "hook", "claude-code"], input=payload, text=True,
                           capture_output=True, check=True, cwd=paths.workspace, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if i:  # the first run warms the caches
                cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(cpu) if cpu else 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("all", "dev", "held"), default="all")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated mode names")
    parser.add_argument("--hook-runs", type=int, default=0)
    parser.add_argument("--misses", action="store_true", help="list the needed memories each mode missed")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    data = build()
    problems = check(data)
    if problems:
        raise SystemExit("the set is not what it claims:\n" + "\n".join(problems))
    rows = []
    for name in args.modes.split(","):
        for budget in ("default", "500"):
            tally = run_mode(data, name, MODES[name], budget, args.split)
            row = tally.as_dict()
            if args.hook_runs and budget == "default":
                row["hook_cpu_ms_median"] = round(hook_cpu_ms(data, MODES[name], args.hook_runs))
            rows.append(row)
            if args.misses:
                print(f"# {name} at {budget}: missed", *tally.misses, sep="\n  ", file=sys.stderr)
    if args.json:
        print(json.dumps({"split": args.split, "rows": rows}, indent=2, ensure_ascii=False))
        return
    n_conv = sum(1 for r in data.rows)
    print(f"{len(data.texts) - sum(1 for k in data.texts if k.startswith('c-'))} user/project memories, "
          f"{n_conv} conversation rows, split {args.split}")
    print("| mode | budget | needed injected | unneeded per message (worst) | tokens, nothing stored | "
          "paraphrase → conversation | hook CPU ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['mode']} | {r['budget']} | {r['found']}/{r['needed']} ({r['recall']:.0%}) | "
              f"{r['unneeded_per_message']} ({r['worst_unneeded']}) | {r['nothing_tokens_mean']} | "
              f"{r['paraphrase_conversation']} | {r.get('hook_cpu_ms_median', '')} |")


if __name__ == "__main__":
    main()
