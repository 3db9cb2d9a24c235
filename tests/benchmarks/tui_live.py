"""The TUI while another writer adds a conversation row, timed in a spawned process (headless,
Textual's Pilot, the store watched as `memtui` watches it):

    python -m tests.benchmarks.tui_live --home H -w W [--runs 3] [--filter "deploy cache"]

Each run starts the app, waits until its store, doctor and inbox are in, filters the panes
(`--filter`), then inserts one conversation row into muse.db with the standard library (as
Muse would) and times, from the insert, the row listed in the filtered conversation pane and
then the preview of a query that injects it. Reported per run and as medians: those times
(wall, and the process's CPU time over them), the RSS before the insert and the peak after.
The row is deleted again at the end of each run (the corpus gets a few changes in memtui's
change log: run it on a copy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sqlite3
import statistics
import time
from collections.abc import Callable
from typing import Any

from tests.benchmarks.tui_spawn import rss_mb, spawn_children

QUERY = "zanzibar tariffs"


async def child(home: str, workspace: str, text: str, run: int) -> dict[str, Any]:
    from textual.pilot import Pilot
    from textual.widgets import Input

    from memtui.core.paths import Paths
    from memtui.tui.app import MemtuiApp
    from memtui.tui.widgets import EntryPane

    paths = Paths.resolve(home=home, workspace=workspace)
    app = MemtuiApp(paths, watch=True)
    out: dict[str, Any] = {}

    async def until(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError("the app never showed it")
            await pilot.pause(0.005)

    row_id = f"bench-live-{os.getpid()}-{run}"
    async with app.run_test(size=(140, 45)) as pilot:
        await until(pilot, lambda: app.loaded and app.findings is not None and app.inbox is not None)
        pane = app.query_one("#pane-conversation", EntryPane)
        app.main.query_one("#filter", Input).value = text
        await until(pilot, lambda: " of " in str(pane.border_title))
        out["filtered"] = str(pane.border_title)
        out["rss_before_mb"] = rss_mb()
        with sqlite3.connect(paths.db_path) as conn:
            found = conn.execute("SELECT id FROM conversations WHERE workspace_path = ?", [str(paths.workspace)]).fetchone()
            wall, cpu = time.perf_counter(), time.process_time()
            conn.execute("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, created_at, "
                         "updated_at) VALUES (?, 'conversation', 'knowledge', ?, '[]', 'auto', ?, 1800000000000, "
                         "1800000000000)", [row_id, f"{text} {QUERY} are recomputed nightly", found[0] if found else None])
        conn.close()
        await until(pilot, lambda: any(e.id == row_id for e in pane.entries))
        out["listed_ms"] = (time.perf_counter() - wall) * 1000
        out["listed_cpu_ms"] = (time.process_time() - cpu) * 1000
        app.main.query_one("#query", Input).value = QUERY
        await until(pilot, lambda: app.last_result is not None and app.last_result.query == QUERY
                    and any(c.id == row_id for c in app.last_result.included))
        out["previewed_ms"] = (time.perf_counter() - wall) * 1000
        out["previewed_cpu_ms"] = (time.process_time() - cpu) * 1000
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with sqlite3.connect(paths.db_path) as conn:
        conn.execute("DELETE FROM memories WHERE id = ?", [row_id])
    conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("-w", "--workspace", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--filter", default="deploy cache", help="typed into the panes' filter before the insert")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(asyncio.run(child(args.home, args.workspace, args.filter, args.child))))
        return
    runs = spawn_children("tests.benchmarks.tui_live", args.runs, lambda run: [
        "--home", args.home, "-w", args.workspace, "--filter", args.filter, "--child", str(run)])
    summary = {name: statistics.median(r[name] for r in runs)
               for name in ("listed_ms", "listed_cpu_ms", "previewed_ms", "previewed_cpu_ms", "rss_before_mb",
                            "peak_rss_mb")}
    summary["filtered"] = runs[-1]["filtered"]
    summary["runs"] = len(runs)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
