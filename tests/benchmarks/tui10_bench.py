"""The TUI as a person meets it, timed from the process spawn (headless, Textual's Pilot):

    python -m tests.benchmarks.tui_spawn --home H -w W [--keys 40] [--runs 3] [--gap 0.05] [--start-only [--insights]]

The parent spawns a child that starts the app; every figure is taken when a frame is
painted: the app's `_display` is wrapped so that each screen update is also turned into the
bytes a terminal would receive (headless, Textual computes the update but writes nothing),
and the state is looked at as that frame goes out. Reported, each from the spawn: the first
frame with the panes populated, the first frame with a preview, the doctor's findings in
(the background "insights"); the child's CPU time (all threads) at the first two; per key
typed into the preview query, the time from the key event sent to the first frame showing
the preview of the new query (keys are sent as Textual's driver sends them, not through
`Pilot.press`, whose waits for an idle process would be timed too), and the child's CPU
time per key while typing (all threads, the pauses between keys included); the child's RSS
at the first preview's frame and its peak. `--start-only` stops at the first preview (the
start-up figures alone, without typing or waiting for the doctor); with `--insights` it
waits for the doctor's findings instead, no key typed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

QUERY = "database pool timeout 数据库 连接池 deploy"


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def child(home: str, workspace: str, spawned: float, keys: int, gap: float, start_only: bool = False,
                insights: bool = False) -> dict:
    gc.disable()  # as `memtui` does before it imports the app (the app turns it on after the first preview)
    from textual import events
    from textual._compositor import CompositorUpdate

    from memtui.core.paths import Paths
    from memtui.tui.app import MemtuiApp

    app = MemtuiApp(Paths.resolve(home=home, workspace=workspace), watch=False)
    out: dict = {}
    frame = asyncio.Event()
    watching: dict = {"check": None, "at": None}  # a condition looked at as each frame goes out
    display = app._display

    def painted(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        if renderable is None or app._batch_count:
            return
        if isinstance(renderable, CompositorUpdate):
            renderable.render_segments(app.console)  # what a terminal would be sent
        now = time.perf_counter()
        if "panes_s" not in out and app.ready.is_set():
            out["panes_s"] = time.time() - spawned
            out["panes_cpu_s"] = time.process_time()
        if "first_preview_s" not in out and app.last_result is not None:
            out["first_preview_s"] = time.time() - spawned
            out["first_preview_cpu_s"] = time.process_time()
            out["rss_after_first_preview_mb"] = rss_mb()
        check = watching["check"]
        if check is not None and watching["at"] is None and check():
            watching["at"] = now
        frame.set()

    app._display = painted

    async def until(condition: Callable[[], bool], timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            frame.clear()
            try:
                await asyncio.wait_for(frame.wait(), timeout=max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("the app never showed it")

    async with app.run_test(size=(140, 45)):
        await until(lambda: "first_preview_s" in out and "panes_s" in out)
        if start_only:
            if insights:  # untouched after the start: when are the doctor's findings in?
                await until(lambda: app.findings is not None)
                out["insights_s"] = time.time() - spawned
            return out
        box = app.main.query_one("#query")
        box.focus()
        await asyncio.sleep(gap)
        latencies = []
        typing_cpu = time.process_time()
        typed = ""
        for ch in (QUERY * 4)[:keys]:
            typed += ch
            want = typed
            watching.update(check=lambda want=want: app.last_result is not None and app.last_result.query == want,
                            at=None)
            key = "space" if ch == " " else ch
            event = events.Key(key, ch)
            event.set_sender(app)
            start = time.perf_counter()
            app._driver.send_message(event)
            await until(lambda: watching["at"] is not None)
            latencies.append(watching["at"] - start)
            await asyncio.sleep(gap)  # a person's pace between keys
        out["keystroke_ms"] = [x * 1000 for x in latencies]
        out["cpu_per_key_ms"] = (time.process_time() - typing_cpu) / max(1, len(latencies)) * 1000
        watching["check"] = None
        await until(lambda: app.loaded and app.inbox is not None)
        await asyncio.sleep(3)
        out["insights_s"] = time.time() - spawned
        out["gc_counts"] = gc.get_count()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu_s"] = cpu.ru_utime + cpu.ru_stime
    return out


def spawn_children(module: str, runs: int, arguments: Callable[[int], list[str]]) -> list[dict[str, Any]]:
    """Run `python -m module ARGS` once per run (bytecode written, as an installed memtui has it)
    and read each child's last line of JSON."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    found = []
    for run in range(runs):
        done = subprocess.run([sys.executable, "-m", module, *arguments(run)], capture_output=True, text=True,
                              env=env, cwd=Path(__file__).resolve().parents[2])
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        found.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return found


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("-w", "--workspace", required=True)
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gap", type=float, default=0.05, help="seconds between keys (a fast typist's pace)")
    parser.add_argument("--start-only", action="store_true", help="stop at the first preview painted")
    parser.add_argument("--insights", action="store_true",
                        help="with --start-only: stop once the doctor's findings are in (no key typed)")
    parser.add_argument("--child", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(asyncio.run(child(args.home, args.workspace, args.child, args.keys, args.gap,
                                           args.start_only, args.insights))))
        return
    print(json.dumps(measure(args.home, args.workspace, args.runs, args.keys, args.gap, args.start_only, args.insights),
                     indent=2))


def measure(home: str, workspace: str, runs_wanted: int, keys_wanted: int = 40, gap: float = 0.05,
            start_only: bool = False, insights: bool = False) -> dict[str, Any]:
    """The figures (medians over `runs_wanted` spawned children) as `main` prints them."""
    runs = spawn_children("tests.benchmarks.tui10_bench", runs_wanted, lambda _: [
        "--home", home, "-w", workspace, "--keys", str(keys_wanted), "--gap", str(gap),
        *(["--start-only"] if start_only else []), *(["--insights"] if insights else []),
        "--child", repr(time.time())])
    summary = {
        "spawn_to_panes_s": statistics.median(r["panes_s"] for r in runs),
        "spawn_to_first_preview_s": statistics.median(r["first_preview_s"] for r in runs),
        "cpu_to_panes_s": statistics.median(r["panes_cpu_s"] for r in runs),
        "cpu_to_first_preview_s": statistics.median(r["first_preview_cpu_s"] for r in runs),
        "rss_after_first_preview_mb": statistics.median(r["rss_after_first_preview_mb"] for r in runs),
        "runs": len(runs)}
    if start_only and insights:
        summary["spawn_to_insights_s"] = statistics.median(r["insights_s"] for r in runs)
    if not start_only:
        keys = [k for r in runs for k in r["keystroke_ms"]]
        summary.update({
            "keystroke_p50_ms": pct(keys, 0.5), "keystroke_p95_ms": pct(keys, 0.95),
            "cpu_per_key_ms": statistics.median(r["cpu_per_key_ms"] for r in runs),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs),
            "spawn_to_insights_s": statistics.median(r["insights_s"] for r in runs),
            "child_cpu_s": statistics.median(r["cpu_s"] for r in runs), "keys": len(keys)})
    return summary


if __name__ == "__main__":
    main()
