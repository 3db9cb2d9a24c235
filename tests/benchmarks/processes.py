"""Whole processes, timed from the spawn as a person (or Claude Code) feels them, on the
LARGE corpus (≈500 Markdown files, ≈3,000 entries, 50,000 conversation rows, ≈37,000 of
them in this workspace) or a multiple of its rows:

    python -m tests.benchmarks.processes [--scale 1] [--repeats 9] [--keep DIR] [--json out.json]
    python -m tests.benchmarks.processes --doc docs/performance.md [--corpora DIR] [--repeats 5] [--json out.json]
    python -m tests.benchmarks.processes --doc docs/performance.md --from out.json

`--doc` measures every figure at ×1 and ×10 (and the TUI's, `tui_spawn`) and writes the
figures table of docs/performance.md between its markers: the table is never edited by hand.

Each figure is the median and p95 of `--repeats` spawns of the installed `memtui` console
script (the command is printed beside it). Bytecode is compiled first and
PYTHONDONTWRITEBYTECODE is removed from the children's environment, so no run pays for
compiling memtui. The machine is shared: read ratios as much as single numbers.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memtui.core.paths import Paths, iter_memory_files

from .corpus import generate

QUERY = "database pool timeout 数据库 连接池"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("MEMTUI_LOG", None)
    return env


def spawn_one(cmd: list[str], stdin: bytes = b"") -> tuple[float, float, float]:
    """One spawn of `cmd`: (wall s, CPU s = user + system, peak RSS in MB) of that process
    (and the children it waited for), its output read to the end into a file."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=err, env=child_env())
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err.read().decode()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def spawn_times(cmd: list[str], repeats: int, stdin: bytes = b"", before: Callable[[], None] | None = None) -> dict:
    times, cpu, rss = [], [], []
    for _ in range(repeats):
        if before is not None:
            before()
        wall, used, peak = spawn_one(cmd, stdin)
        times.append(wall)
        cpu.append(used)
        rss.append(peak)
    # wall time is what a person waits; CPU time (user + system) is steadier on a shared machine
    return {"median_s": statistics.median(times), "p95_s": pct(times, 0.95), "cpu_median_s": statistics.median(cpu),
            "rss_median_mb": statistics.median(rss), "rss_max_mb": max(rss), "runs": repeats,
            "command": " ".join(cmd[:1] + [a if len(a) < 60 else "…" for a in cmd[1:]])}


def memtui_script() -> str:
    return str(Path(sys.executable).parent / "memtui")


def measure(paths: Paths, repeats: int, only: set[str] | None = None) -> dict:
    memtui = memtui_script()
    base = [memtui, "--home", str(paths.home), "-w", str(paths.workspace)]
    preview_json = [*base, "preview", QUERY, "--json"]
    preview_text = [*base, "preview", QUERY]
    hook = [memtui, "--home", str(paths.home), "hook", "claude-code"]
    hook_input = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": QUERY, "cwd": str(paths.workspace),
                             "session_id": "bench"}).encode()
    files, _ = iter_memory_files(paths.project_root)
    edited = files[len(files) // 2]
    counter = iter(range(10**9))

    def outside_edit() -> None:  # what an assistant or an editor does all day
        with open(edited, "a", encoding="utf-8") as fh:
            fh.write(f"- benchmark edit {next(counter)} of the database pool\n")

    def new_row() -> None:  # Muse adds one conversation memory
        conn = sqlite3.connect(paths.db_path)
        n = next(counter)
        conn.execute("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, "
                     "created_at, updated_at) VALUES (?, 'conversation', 'knowledge', ?, '[]', 'auto', 'conv-00001', NULL, 1, 2)",
                     [f"bench-row-{time.time_ns()}", f"database pool row {n}"])
        conn.commit()
        conn.close()

    from memtui.core.model import LAYERS
    from memtui.core.store.prepared import cache_path

    def cold() -> None:
        for layer in LAYERS:
            cache_path(paths, layer).unlink(missing_ok=True)
        conn = sqlite3.connect(paths.db_path)
        for table in ("memtui_files",):
            try:
                conn.execute(f"DELETE FROM {table}")
            except sqlite3.OperationalError:
                pass
        conn.commit()
        conn.close()

    floor_imports = [sys.executable, "-c", "import memtui.cli.entry, memtui.cli.hook, memtui.core.serve, "
                     "memtui.core.assistants.delivery, memtui.core.assistants.claude_code"]
    out: dict = {}
    if only:  # just these figures (after a warm-up run), e.g. the hook's cost curve over scales
        subprocess.run(hook, input=hook_input, capture_output=True, env=child_env())
        subprocess.run(hook, input=hook_input, capture_output=True, env=child_env())
        commands: dict[str, tuple[list[str], bytes, Callable[[], None] | None]] = {
            "warm_hook": (hook, hook_input, None), "warm_preview_json": (preview_json, b"", None),
            "warm_preview_text": (preview_text, b"", None), "floor_python": ([sys.executable, "-c", "pass"], b"", None),
            "floor_hook_imports": (floor_imports, b"", None),
            "hook_after_edit": (hook, hook_input, outside_edit), "preview_json_after_edit": (preview_json, b"", outside_edit),
            "hook_after_new_row": (hook, hook_input, new_row), "preview_json_after_new_row": (preview_json, b"", new_row),
            "cold_preview": (preview_text, b"", cold)}
        for name in sorted(only):
            cmd, given, before = commands[name]
            out[name] = spawn_times(cmd, repeats, stdin=given, before=before)
        return out
    out["floor_python"] = spawn_times([sys.executable, "-c", "pass"], repeats)
    out["floor_stdlib"] = spawn_times([sys.executable, "-c", "import json, sqlite3, marshal, zlib, hashlib, unicodedata"],
                                      repeats)
    out["floor_hook_imports"] = spawn_times(floor_imports, repeats)
    out["cold_preview"] = spawn_times(preview_text, max(3, repeats // 3), before=cold)
    subprocess.run(preview_text, capture_output=True, env=child_env())  # warm: the prepared index exists
    out["warm_preview_json"] = spawn_times(preview_json, repeats)
    out["warm_preview_text"] = spawn_times(preview_text, repeats)
    out["warm_hook"] = spawn_times(hook, repeats, stdin=hook_input)
    out["hook_after_edit"] = spawn_times(hook, repeats, stdin=hook_input, before=outside_edit)
    out["preview_json_after_edit"] = spawn_times(preview_json, repeats, before=outside_edit)
    out["hook_after_new_row"] = spawn_times(hook, repeats, stdin=hook_input, before=new_row)
    out["preview_json_after_new_row"] = spawn_times(preview_json, repeats, before=new_row)
    return out


def counts(paths: Paths) -> dict:
    conn = sqlite3.connect(paths.db_path)
    rows = conn.execute("SELECT count(*) FROM memories WHERE type = 'conversation'").fetchone()[0]
    here = conn.execute("SELECT count(*) FROM memories m LEFT JOIN conversations c ON c.id = m.conversation_id "
                        "WHERE m.type = 'conversation' AND (c.workspace_path = ? OR c.workspace_path IS NULL)",
                        [str(paths.workspace)]).fetchone()[0]
    conn.close()
    md = sum(len(iter_memory_files(root)[0]) for root in (paths.user_root, paths.project_root))
    return {"markdown_files": md, "conversation_rows": rows, "rows_in_workspace": here}


def table(results: dict) -> str:
    lines = [f"LARGE ×{results['scale']}: {results['corpus']}", ""]
    for name, fig in results["figures"].items():
        lines.append(f"{name:<28} {fig['median_s'] * 1000:7.0f} ms median  {fig['p95_s'] * 1000:7.0f} ms p95  "
                     f"{fig['cpu_median_s'] * 1000:7.0f} ms CPU  {fig['rss_max_mb']:6.0f} MB peak   {fig['command']}")
    return "\n".join(lines)


def arguments(doc: str | None, repeats: int, scale_help: str) -> argparse.ArgumentParser:
    """The options every whole-process benchmark takes: --scale, --repeats, --keep, --json."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=1, help=scale_help)
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--keep", type=Path, help="generate into (or reuse) this directory")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    return parser


@contextmanager
def large_corpus(args: argparse.Namespace, prefix: str) -> Iterator[Paths]:
    """memtui's bytecode compiled (no run pays for compiling), then the LARGE corpus at
    `args.scale`: generated into `args.keep` (or a temporary folder), or reused from there."""
    compileall.compile_dir(str(Path(__file__).resolve().parents[2]), quiet=1, workers=1,
                           rx=re.compile(r"/(\.venv|tests|screenshots)/"))
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        base = args.keep or Path(tmp)
        if (base / "home" / "muse.db").exists():
            yield Paths((base / "home").resolve(), (base / "workspace").resolve())
        else:
            base.mkdir(parents=True, exist_ok=True)
            yield generate(base, "LARGE", scale=args.scale)


def report(args: argparse.Namespace, results: dict, text: str) -> None:
    """Print the table, and write the figures to `--json` when asked."""
    print(text)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------- docs/performance.md's table
BEGIN, END = "<!-- figures: begin (python -m tests.benchmarks.processes --doc) -->", "<!-- figures: end -->"
SCALES = (1, 10)
# (figure, what it is, target at ×1, target at ×10); a target is (seconds of wall time, MB of peak RSS or None)
ROWS: list[tuple[str, str, tuple[float, float | None] | None, tuple[float, float | None] | None]] = [
    ("cold_preview", "cold first run: no prepared index, no parse cache (`preview`)", (2.0, None), (8.0, 400)),
    ("warm_preview_json", "warm `preview --json`", (0.25, None), (0.5, 250)),
    ("warm_preview_text", "warm `preview`", None, None),
    ("warm_hook", "warm hook (`hook claude-code`)", (0.10, None), (0.15, None)),
    ("hook_after_edit", "hook after one outside edit", (0.2, None), None),
    ("preview_json_after_edit", "`preview --json` after one outside edit", (0.4, None), None),
    ("hook_after_new_row", "hook after one new conversation row", (0.2, None), None),
    ("preview_json_after_new_row", "`preview --json` after one new row", (0.4, None), None),
    ("floor_python", "floor: `python -c pass`", None, None),
    ("floor_hook_imports", "floor: the hook's imports", None, None),
]
TUI_ROWS: list[tuple[str, str, str, tuple[float | None, float | None]]] = [  # (key, what, unit, targets ×1, ×10)
    ("spawn_to_first_preview_s", "TUI: spawn → first preview painted", "s", (1.0, 1.0)),
    ("cpu_to_first_preview_s", "TUI: CPU time to the first preview", "s", (1.0, 1.0)),
    ("keystroke_p50_ms", "TUI: keystroke → preview painted, p50", "ms", (None, None)),
    ("keystroke_p95_ms", "TUI: keystroke → preview painted, p95", "ms", (50, 50)),
    ("cpu_per_key_ms", "TUI: CPU per key (all threads)", "ms", (None, None)),
    ("peak_rss_mb", "TUI: peak RSS of the typing run", "MB", (150, 250)),
    ("spawn_to_insights_s", "TUI: spawn → the doctor's findings in", "s", (2, 10)),
]


def _met(wall: float, cpu: float, rss: float, target: tuple[float, float | None] | None) -> str:
    """The target and whether it is met: ✓ by the wall time, "CPU ✓" when only the CPU time
    is within it (the wall time of a loaded machine waits for a core), else ✗."""
    if target is None:
        return ""
    seconds, mb = target
    text = f"≤ {seconds:g} s" + (f", ≤ {mb:g} MB" if mb is not None else "")
    if mb is not None and rss > mb:
        return text + " ✗"
    return text + (" ✓" if wall <= seconds else " CPU ✓" if cpu <= seconds else " ✗")


def doc_table(results: dict[int, dict]) -> str:
    """The figures table of docs/performance.md, from `--doc`'s results (one per scale)."""
    head = " | ".join(f"×{k}: wall · CPU · peak RSS" for k in results)
    lines = [f"| figure | {head} | target ×1 | target ×10 |", "|---|" + "---|" * (len(results) + 2)]
    for name, what, *targets in ROWS:
        cells, marks = [], []
        for found in results.values():
            fig = found["figures"].get(name)
            cells.append("—" if fig is None else
                         f"{fig['median_s']:.2f} s · {fig['cpu_median_s']:.2f} s · {fig['rss_max_mb']:.0f} MB")
        for scale, target in zip(SCALES, targets):
            fig = results.get(scale, {}).get("figures", {}).get(name)
            marks.append("" if fig is None else _met(fig["median_s"], fig["cpu_median_s"], fig["rss_max_mb"], target))
        lines.append(f"| {what} | {' | '.join(cells)} | {' | '.join(marks)} |")
    for key, what, unit, tui_targets in TUI_ROWS:
        cells, marks = [], []
        for found in results.values():
            value = found.get("tui", {}).get(key)
            cells.append("—" if value is None else f"{value:.2f} {unit}" if unit == "s" else f"{value:.0f} {unit}")
        for scale, target in zip(SCALES, tui_targets):
            value = results.get(scale, {}).get("tui", {}).get(key)
            ok = value is not None and target is not None and value <= target
            marks.append("" if target is None or value is None else f"≤ {target:g} {unit}" + (" ✓" if ok else " ✗"))
        lines.append(f"| {what} | {' | '.join(cells)} | {' | '.join(marks)} |")
    corpora = "; ".join(f"×{k}: {v['corpus']['markdown_files']:,} Markdown files, {v['corpus']['conversation_rows']:,} "
                        f"rows ({v['corpus']['rows_in_workspace']:,} in the workspace)" for k, v in results.items())
    runs = "; ".join(f"×{k}: {v['repeats']} spawns per figure, TUI {v.get('tui_runs', 0)} runs" for k, v in results.items())
    load = "; ".join(f"×{k}: {v['load']:.1f}" for k, v in results.items() if "load" in v)
    return "\n".join([BEGIN, "", *lines, "", f"Corpus: {corpora}. Medians ({runs}); CPU = user + system time of "
                      "the process; peak RSS the largest of the spawns; a target is met by the wall time (✓) or, "
                      "only by the CPU time (CPU ✓), when the machine made the process wait for a core. Load "
                      f"average (1 min) at the end of each scale: {load}. A `—`: not measured (a TUI run that "
                      "timed out).", "", END])


def regenerate(doc: Path, corpora: Path, repeats: int, tui_runs: int, tui_keys: int) -> dict[int, dict]:
    """Every figure at ×1 and ×10 (the corpora generated into `corpora`/x1 and /x10 once, then
    reused), written into `doc` between its markers."""
    from . import tui_spawn

    results: dict[int, dict] = {}
    for scale in SCALES:
        args = argparse.Namespace(scale=scale, keep=corpora / f"x{scale}")
        with large_corpus(args, "memtui-processes-") as paths:
            found = {"corpus": counts(paths), "figures": measure(paths, repeats), "repeats": repeats,
                     "tui_runs": tui_runs}
            if tui_runs:
                try:
                    found["tui"] = tui_spawn.measure(str(paths.home), str(paths.workspace), tui_runs, tui_keys)
                except RuntimeError as exc:  # (a child that timed out): the rows say "—"
                    print(f"TUI at ×{scale} not measured: {str(exc)[-300:]}", flush=True)
        found["load"] = os.getloadavg()[0]
        results[scale] = found
        print(table({"scale": scale, **found}), flush=True)
    write_table(doc, results)
    return results


def write_table(doc: Path, results: dict[int, dict]) -> None:
    """`doc_table(results)` written into `doc` between its markers (appended when it has none)."""
    text = doc.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + doc_table(results) + text[text.index(END) + len(END):]
    else:
        text += "\n" + doc_table(results) + "\n"
    doc.write_text(text, encoding="utf-8")


def main() -> None:
    parser = arguments(__doc__, 9, "multiply the Markdown files and the conversation rows (10: 5,000 files, 500,000 rows)")
    parser.add_argument("--only", action="append", help="just this figure (warm_hook, warm_preview_json, ...)")
    parser.add_argument("--doc", type=Path, help="measure ×1 and ×10 (corpora in --corpora) and write the table "
                                                 "into this file (docs/performance.md)")
    parser.add_argument("--corpora", type=Path, default=Path(tempfile.gettempdir()) / "memtui-corpora",
                        help="with --doc: where the ×1 and ×10 corpora are generated once and reused")
    parser.add_argument("--tui-runs", type=int, default=3, help="with --doc: TUI spawns per scale (0: none)")
    parser.add_argument("--tui-keys", type=int, default=40, help="with --doc: keys typed per TUI spawn")
    parser.add_argument("--from", dest="source", type=Path, help="with --doc: the table from the results a --doc "
                                                                   "--json run saved, not measured again")
    args = parser.parse_args()
    if args.doc and args.source:
        write_table(args.doc, {int(k): v for k, v in json.loads(args.source.read_text()).items()})
        return
    if args.doc:
        results = regenerate(args.doc, args.corpora, args.repeats, args.tui_runs, args.tui_keys)
        if args.json:
            args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        return
    with large_corpus(args, "memtui-processes-") as paths:
        results = {"scale": args.scale, "corpus": counts(paths), "figures": measure(paths, args.repeats, set(args.only or ()))}
    report(args, results, table(results))


if __name__ == "__main__":
    main()
