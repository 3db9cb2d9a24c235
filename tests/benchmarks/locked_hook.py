"""The hook's time while another writer holds muse.db (SPEC §8, "a locked database costs the
prompt nothing"), beside its time when nobody does.

    python -m tests.benchmarks.locked_hook [--runs N]

For each journal mode (WAL, as memtui leaves it; and a rollback journal, as another program may
set it), the median wall time of a whole `memtui hook claude-code` process, free and while a
second connection holds `BEGIN EXCLUSIVE`."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memtui.core.paths import Paths
from memtui.core.store.conversations import Conversations

HOOK = [sys.executable, "-m", "memtui.cli.hook"]


def setup(root: Path, journal: str) -> Paths:
    home, ws = root / "home", root / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    (home / "settings.json").write_text('{"memoryEnabled": true}')
    (home / "memory" / "prefs.md").write_text("".join(f"- preference {i} about vitest\n" for i in range(200)))
    (ws / ".muse" / "memory" / "context.md").write_text("".join(f"- the pool note {i}\n" for i in range(400)))
    paths = Paths(home.resolve(), ws.resolve())
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Chat", str(paths.workspace))
    for i in range(300):
        db.add(f"conversation memory {i} about nightingale", memory_id=f"m{i}", conversation_id="c1")
    db.close()
    hook(paths)  # prepared
    conn = sqlite3.connect(paths.db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.close()
    return paths


def hook(paths: Paths) -> float:
    data = json.dumps({"prompt": "vitest pool nightingale", "cwd": str(paths.workspace),
                       "hook_event_name": "UserPromptSubmit"}).encode()
    started = time.perf_counter()
    done = subprocess.run(HOOK, input=data, capture_output=True, env={**os.environ, "MUSE_HOME": str(paths.home)},
                          timeout=120, check=False)
    took = time.perf_counter() - started
    assert b"## Memory" in done.stdout, done.stderr
    return took


def measure(runs: int) -> dict[str, float]:
    out = {}
    for journal in ("wal", "delete"):
        with tempfile.TemporaryDirectory() as tmp:
            paths = setup(Path(tmp), journal)
            out[f"{journal}_free_s"] = statistics.median(hook(paths) for _ in range(runs))
            holder = sqlite3.connect(paths.db_path, isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")
            try:
                out[f"{journal}_locked_s"] = statistics.median(hook(paths) for _ in range(runs))
            finally:
                holder.execute("ROLLBACK")
                holder.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    results = measure(args.runs)
    for journal in ("wal", "delete"):
        free, locked = results[f"{journal}_free_s"], results[f"{journal}_locked_s"]
        print(f"{journal:<6} free {free * 1000:7.0f} ms   locked {locked * 1000:7.0f} ms   ratio {locked / free:4.2f}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
