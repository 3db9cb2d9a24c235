"""The TUI as a person meets it, timed from the process spawn (headless, Textual's Pilot):

    python -m tests.benchmarks.tui_spawn --home H -w W [--keys 40] [--runs 3]

The parent spawns a child that starts the app and reports, each from the spawn: panes
populated, the first preview shown (its message handled and the next frame processed), and
then per typed key in the preview query the time from the key press to the preview of the
new query shown, plus the child's RSS after the first preview and at its peak.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERY = "database pool timeout 数据库 连接池 deploy"


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def child(home: str, workspace: str, spawned: float, keys: int) -> dict:
    from textual.widgets import Input

    from memtui.core.paths import Paths
    from memtui.tui.app import MemtuiApp

    app = MemtuiApp(Paths.resolve(home=home, workspace=workspace), watch=False)
    out: dict = {}
    async with app.run_test(size=(140, 45)) as pilot:
        await asyncio.wait_for(app.ready.wait(), timeout=300)
        await pilot.pause()
        out["panes_s"] = time.time() - spawned
        while app.last_result is None:
            await pilot.pause(0.005)
        await pilot.pause()
        out["first_preview_s"] = time.time() - spawned
        out["rss_after_first_preview_mb"] = rss_mb()
        box = app.main.query_one("#query", Input)
        box.focus()
        await pilot.pause()
        latencies = []
        typed = ""
        for ch in (QUERY * 4)[:keys]:
            typed += ch
            start = time.perf_counter()
            await pilot.press(ch if ch != " " else "space")
            while app.last_result is None or app.last_result.query != typed:
                await pilot.pause(0.001)
            await pilot.pause()
            latencies.append(time.perf_counter() - start)
        out["keystroke_ms"] = [x * 1000 for x in latencies]
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("-w", "--workspace", required=True)
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(asyncio.run(child(args.home, args.workspace, args.child, args.keys))))
        return
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    runs = []
    for _ in range(args.runs):
        cmd = [sys.executable, "-m", "tests.benchmarks.tui_spawn", "--home", args.home, "-w", args.workspace,
               "--keys", str(args.keys), "--child", repr(time.time())]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[2])
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    keys = [k for r in runs for k in r["keystroke_ms"]]
    summary = {
        "spawn_to_panes_s": statistics.median(r["panes_s"] for r in runs),
        "spawn_to_first_preview_s": statistics.median(r["first_preview_s"] for r in runs),
        "keystroke_p50_ms": pct(keys, 0.5), "keystroke_p95_ms": pct(keys, 0.95),
        "rss_after_first_preview_mb": statistics.median(r["rss_after_first_preview_mb"] for r in runs),
        "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs), "runs": len(runs), "keys": len(keys),
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
