"""Every performance figure of memtui in one run: a table and JSON.

    python -m tests.benchmarks.run --size L [--json results.json] [--keep DIR]

Sizes: S (≈100 entries), M (≈2,000), L (≈10,000 Markdown entries in ≈500 files plus
50,000 conversation memories). Medians and p95 over repeated runs; the machine is shared
and noisy, so read ratios rather than single numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from itertools import islice
from pathlib import Path

from memtui.core.paths import Paths, iter_memory_files
from memtui.core.serve import inject_from_store
from memtui.core.settings import load_settings
from memtui.core.store import MemoryStore
from memtui.core.watch import StoreWatcher

from .corpus import SIZES, generate, queries


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def median_of(fn, n: int) -> float:
    return statistics.median(fn() for _ in range(n))


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def read_floor(paths: Paths) -> float:
    """Reading every Markdown file once and every memory row once: no parsing, no scoring."""
    def run():
        for root in (paths.user_root, paths.project_root):
            files, _ = iter_memory_files(root)
            for f in files:
                f.read_bytes()
        conn = sqlite3.connect(paths.db_path)
        conn.execute("SELECT id, content, tags, conversation_id, updated_at FROM memories WHERE type='conversation'").fetchall()
        conn.close()
    return median_of(lambda: timed(run), 5)


def clear_index(paths: Paths) -> None:
    conn = sqlite3.connect(paths.db_path)
    conn.execute("DELETE FROM memories WHERE file_path IS NOT NULL")
    conn.execute("DELETE FROM memtui_files")
    conn.commit()
    conn.close()


def load_figures(paths: Paths, repeats: int) -> dict:
    def cold():
        clear_index(paths)
        return timed(lambda: MemoryStore(paths).load())
    cold_s = statistics.median(cold() for _ in range(max(1, repeats // 2)))
    warm_s = median_of(lambda: timed(lambda: MemoryStore(paths).load()), repeats)
    preview_load_s = median_of(lambda: timed(lambda: MemoryStore(paths, index=False).load()), repeats)
    return {"cold_load_s": cold_s, "warm_load_s": warm_s, "warm_load_readonly_s": preview_load_s}


def injection_figures(paths: Paths, n_queries: int) -> dict:
    store = MemoryStore(paths)
    store.load()
    settings = load_settings(paths)
    qs = queries(n=n_queries)
    inject_from_store(store, settings, qs[0])  # builds the per-layer indexes once per store change
    decide = []
    full = []
    keystroke = []
    for i, q in enumerate(qs):
        t = time.perf_counter()
        r = inject_from_store(store, settings, q)
        decide.append(time.perf_counter() - t)
        # what the TUI's preview pane shows: the counts by reason, the first 60 left out, the lines
        r.status_counts()
        _ = [(c.entry.source_ref, c.entry.text[:100]) for c in islice(
            (c for c in r.iter_candidates() if c.status != "included"), 60)]
        _ = [c.line for c in r.included]
        keystroke.append(time.perf_counter() - t)
        if i % 10 == 0:
            t = time.perf_counter()
            _ = r.candidates  # the whole candidate list, as `preview --json` prints it
            full.append(time.perf_counter() - t + decide[-1])
    counts = {layer: len(store.entries(layer)) for layer in ("user", "project", "conversation")}
    store.close()
    return {"entries": counts, "queries": len(qs),
            "inject_p50_ms": pct(decide, 0.5) * 1000, "inject_p95_ms": pct(decide, 0.95) * 1000,
            "keystroke_p50_ms": pct(keystroke, 0.5) * 1000, "keystroke_p95_ms": pct(keystroke, 0.95) * 1000,
            "inject_with_all_candidates_p50_ms": pct(full, 0.5) * 1000}


def _process_median(cmd: list[str], repeats: int, stdin: bytes = b"", before=None) -> tuple[float, bytes]:
    times = []
    out = b""
    for _ in range(repeats):
        if before is not None:
            before()
        t = time.perf_counter()
        out = subprocess.run(cmd, input=stdin, capture_output=True, check=True).stdout
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def preview_process(paths: Paths, repeats: int) -> dict:
    """Whole processes, as Muse's hook and a person run them: cold (no prepared index), warm
    `preview --json` (every candidate), warm `preview` (the text) and the Claude Code hook."""
    from memtui.core.model import LAYERS
    from memtui.core.store.prepared import cache_path

    base = [sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace), "preview",
            "database pool timeout"]
    cold, _ = _process_median(base, max(1, repeats // 2), before=lambda: [cache_path(paths, layer).unlink(missing_ok=True) for layer in LAYERS])
    subprocess.run(base, capture_output=True, check=True)  # warm: the prepared index and the OS cache
    warm_json, out = _process_median(base + ["--json"], repeats)
    warm_text, _ = _process_median(base, repeats)
    hook_input = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "database pool timeout",
                             "cwd": str(paths.workspace)}).encode()
    hook = [sys.executable, "-m", "memtui.cli.hook"]
    env_home = os.environ.get("MUSE_HOME")
    os.environ["MUSE_HOME"] = str(paths.home)
    try:
        hook_s, _ = _process_median(hook, repeats, stdin=hook_input)
    finally:
        if env_home is None:
            os.environ.pop("MUSE_HOME", None)
        else:
            os.environ["MUSE_HOME"] = env_home
    return {"preview_process_median_s": warm_json, "preview_json_bytes": len(out), "preview_cold_s": cold,
            "preview_text_s": warm_text, "hook_process_s": hook_s,
            "preview_process_max_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def edit_event_figures(paths: Paths, edits: int) -> dict:
    store = MemoryStore(paths)
    store.load()
    files, _ = iter_memory_files(paths.user_root)
    seen: dict[str, float] = {}
    cond = threading.Condition()

    def listener(change):
        with cond:
            now = time.perf_counter()
            for p in change.paths:
                seen.setdefault(p, now)
            cond.notify_all()

    store.subscribe(listener)
    lat = []
    with StoreWatcher(store):
        time.sleep(0.3)
        for i in range(edits):
            target = files[i % len(files)]
            with cond:
                seen.clear()
            start = time.perf_counter()
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(f"- benchmark edit {i}\n")
            with cond:
                if not cond.wait_for(lambda t=str(target): t in seen, timeout=10):
                    raise RuntimeError(f"no change event for {target}")
                lat.append(seen[str(target)] - start)
    store.close()
    return {"edit_event_p50_ms": pct(lat, 0.5) * 1000, "edit_event_p95_ms": pct(lat, 0.95) * 1000, "edits": edits}


def tui_figures(paths: Paths, changed_files: int) -> dict:
    from memtui.tui.widgets import EntryPane
    from tests.tui.helpers import CountingApp

    async def run() -> dict:
        start = time.perf_counter()
        app = CountingApp(paths)
        async with app.run_test(size=(140, 45)) as pilot:
            await asyncio.wait_for(app.ready.wait(), timeout=60)  # the three panes are filled
            populated = time.perf_counter() - start
            assert all(p.rows for p in app.main.query(EntryPane))
            while app.startup.watcher is None or app.last_result is None:
                await pilot.pause(0.01)
            await pilot.pause(0.5)  # the first preview is drawn: measure the reload, not the start-up
            files, _ = iter_memory_files(paths.user_root)
            files = files[:changed_files]
            # Another process changes the files (as an editor or `git checkout` would), started
            # before the probe so that spawning it is not counted.
            writer = subprocess.Popen(
                [sys.executable, "-c", "import sys\nsys.stdin.readline()\n"
                 "for i, f in enumerate(sys.argv[1:]):\n    open(f, 'a').write(f'- reload storm {i}\\n')\n",
                 *map(str, files)], stdin=subprocess.PIPE)
            stall = 0.0
            stop = False

            async def probe():
                nonlocal stall
                loop = asyncio.get_running_loop()
                while not stop:
                    t = loop.time()
                    await asyncio.sleep(0.005)
                    stall = max(stall, loop.time() - t - 0.005)

            task = asyncio.create_task(probe())
            events_before = app.store_changes
            writer.stdin.write(b"go\n")
            writer.stdin.close()
            await asyncio.to_thread(writer.wait)
            deadline = time.perf_counter() + 30
            last = files[-1]
            while time.perf_counter() < deadline:
                rec = app.store.file_record(last)
                if rec is not None and b"reload storm" in rec.data and app.store_changes > events_before:
                    break
                await pilot.pause(0.01)
            await pilot.pause(0.3)  # let the refresh that follows the reload run
            stop = True
            await task
            return {"tui_populated_s": populated, "tui_max_stall_ms": stall * 1000, "reloaded_files": len(files)}

    return asyncio.run(run())


def run(size: str, base: Path, quick: bool = False) -> dict:
    paths = generate(base, size)
    repeats = 3 if quick else 5
    results: dict = {"size": size, "machine": f"{platform.machine()} · {os.cpu_count()} cores · Python {platform.python_version()}"}
    results["floor_read_s"] = read_floor(paths)
    results.update(load_figures(paths, repeats))
    results.update(injection_figures(paths, 40 if quick else 200))
    results.update(preview_process(paths, repeats))
    results.update(edit_event_figures(paths, 10 if quick else 50))
    results.update(tui_figures(paths, 20 if quick else 200))
    results["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    floor = results["floor_read_s"]
    results["ratios_to_floor"] = {k: results[k] / floor for k in ("cold_load_s", "warm_load_s", "warm_load_readonly_s",
                                                                   "preview_process_median_s", "tui_populated_s")}
    return results


TARGETS = {  # at L, on this 2-core machine
    "preview_process_median_s": 0.25, "preview_text_s": 0.15, "hook_process_s": 0.15, "preview_cold_s": 3.0,
    "keystroke_p95_ms": 20, "edit_event_p95_ms": 250, "tui_populated_s": 1.0, "tui_max_stall_ms": 100,
    "peak_rss_mb": 200,
}


def table(results: dict) -> str:
    rows = [
        ("floor: read every file and row once", f"{results['floor_read_s'] * 1000:.0f} ms", "1.0×"),
        ("cold load (no index)", f"{results['cold_load_s'] * 1000:.0f} ms", f"{results['ratios_to_floor']['cold_load_s']:.1f}×"),
        ("warm load (index up to date)", f"{results['warm_load_s'] * 1000:.0f} ms", f"{results['ratios_to_floor']['warm_load_s']:.1f}×"),
        ("warm load, read-only (preview)", f"{results['warm_load_readonly_s'] * 1000:.0f} ms", f"{results['ratios_to_floor']['warm_load_readonly_s']:.1f}×"),
        ("build_injection p50 / p95", f"{results['inject_p50_ms']:.1f} / {results['inject_p95_ms']:.1f} ms", ""),
        ("  … with the full candidate list, p50", f"{results['inject_with_all_candidates_p50_ms']:.0f} ms", ""),
        ("  … decision + what the TUI shows, p50 / p95", f"{results['keystroke_p50_ms']:.1f} / {results['keystroke_p95_ms']:.1f} ms", ""),
        ("`memtui preview --json`, whole process", f"{results['preview_process_median_s'] * 1000:.0f} ms", f"{results['ratios_to_floor']['preview_process_median_s']:.1f}×"),
        ("`memtui preview` (text), whole process", f"{results['preview_text_s'] * 1000:.0f} ms", ""),
        ("Claude Code hook, whole process", f"{results['hook_process_s'] * 1000:.0f} ms", ""),
        ("`memtui preview`, cold (no prepared index)", f"{results['preview_cold_s'] * 1000:.0f} ms", ""),
        ("outside edit → change event p50 / p95", f"{results['edit_event_p50_ms']:.0f} / {results['edit_event_p95_ms']:.0f} ms", ""),
        ("TUI start → panes populated", f"{results['tui_populated_s'] * 1000:.0f} ms", f"{results['ratios_to_floor']['tui_populated_s']:.1f}×"),
        (f"longest event-loop stall, reload of {results['reloaded_files']} files", f"{results['tui_max_stall_ms']:.0f} ms", ""),
        ("peak RSS (benchmark process)", f"{results['peak_rss_mb']:.0f} MB", ""),
    ]
    e = results["entries"]
    head = (f"size {results['size']}: {e['user'] + e['project']} Markdown entries, {e['conversation']} conversation "
            f"memories in this workspace · {results['machine']}")
    width = max(len(r[0]) for r in rows)
    lines = [head, ""] + [f"{a:<{width}}  {b:>16}  {c:>6}" for a, b, c in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=sorted(SIZES), default="S")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (the test suite's smoke run)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix=f"memtui-bench-{args.size}-") as tmp:
        results = run(args.size, Path(tmp), quick=args.quick)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
