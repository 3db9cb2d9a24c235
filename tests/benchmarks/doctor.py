"""The doctor's findings on the LARGE corpus (≈3,000 Markdown entries and ≈36,500
conversation rows in the workspace at ×1), two ways:

    python -m tests.benchmarks.doctor [--scale 1] [--repeats 5] [--keep DIR] [--json out.json]

- *spawned*: `memtui --home H -w W doctor`, a whole process from spawn to exit, as a person
  runs it (the installed console script; bytecode compiled first), with its peak RSS;
- *in process*: `doctor.findings(paths, store=store)` on an already loaded store, which is
  what the TUI's insights worker runs in the background, and each kind of finding alone.

Each figure is the median (and p95) of `--repeats` runs, wall time and CPU time (user +
system, every thread of the process) beside it. The corpus is indexed first (`doctor --fix`)
so the findings are the same in every run, and `memtui preview` saves the prepared index
as the hook keeps it. The machine is shared: read CPU time and ratios
measured back to back rather than single wall times.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from memtui.core.paths import Paths

from .processes import QUERY, arguments, child_env, counts, large_corpus, memtui_script, pct, report


def figure(walls: list[float], cpus: list[float], **extra: object) -> dict:
    return {"median_s": statistics.median(walls), "p95_s": pct(walls, 0.95), "cpu_median_s": statistics.median(cpus),
            "runs": len(walls), **extra}


def spawned(cmd: list[str], repeats: int) -> dict:
    """`cmd` from spawn to exit, and its peak RSS (that process's own, from `wait4`); the
    doctor exits 1 when it finds something, 2 or more on an error."""
    walls, cpus, peaks = [], [], []
    found = ""
    for _ in range(repeats):
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.perf_counter()
            process = subprocess.Popen(cmd, stdout=out, stderr=err, env=child_env())
            _, status, used = os.wait4(process.pid, 0)
            walls.append(time.perf_counter() - start)
            process.returncode = os.waitstatus_to_exitcode(status)
            cpus.append(used.ru_utime + used.ru_stime)
            peaks.append(used.ru_maxrss / 1024)  # KiB on Linux
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        if process.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(cmd)} exited {process.returncode}: {stderr.decode()[-500:]}")
        found = (stderr or stdout).decode().strip().rsplit("\n", 1)[-1]  # "N findings."
    return figure(walls, cpus, command=" ".join(cmd), last_line=found, peak_rss_mb_median=statistics.median(peaks))


def in_process(paths: Paths, repeats: int) -> dict:
    """`findings` on a loaded store (the TUI's insights worker): its first run on a freshly
    loaded store, a second run on the same store (the TUI runs it again after every change),
    and each kind alone, each on a freshly loaded store (loading is not timed)."""
    from memtui.core import doctor
    from memtui.core.store import MemoryStore

    def timed(kinds: tuple[str, ...], again: bool) -> tuple[float, float, int]:
        store = MemoryStore(paths, index=paths.home.is_dir())  # as the TUI makes its store
        store.load()
        try:
            if again:
                doctor.findings(paths, kinds, store=store)
            cpu, start = time.process_time(), time.perf_counter()
            found = len(doctor.findings(paths, kinds, store=store))
            return time.perf_counter() - start, time.process_time() - cpu, found
        finally:
            store.close()

    out: dict = {}
    runs = [("all kinds, first run", doctor.KINDS, False), ("all kinds, again", doctor.KINDS, True)]
    for name, kinds, again in runs + [(kind, (kind,), False) for kind in doctor.KINDS]:
        walls, cpus = [], []
        found = 0
        for _ in range(repeats):
            wall, cpu, found = timed(kinds, again)
            walls.append(wall)
            cpus.append(cpu)
        out[name] = figure(walls, cpus, findings=found)
    return out


def table(results: dict) -> str:
    lines = [f"LARGE ×{results['scale']}: {results['corpus']}", ""]
    spawn = results["spawned"]
    lines.append(f"{'spawned: memtui doctor':<34} {spawn['median_s']:6.2f} s median  {spawn['p95_s']:6.2f} s p95  "
                 f"{spawn['cpu_median_s']:6.2f} s CPU  {spawn['peak_rss_mb_median']:6.0f} MB peak RSS   "
                 f"{spawn['command']}  ({spawn['last_line']})")
    inner = results["in_process"]
    lines.append("in process, findings(store=…) on a loaded store:")
    for name, fig in inner.items():
        lines.append(f"  {name:<32} {fig['median_s']:6.2f} s median  {fig['p95_s']:6.2f} s p95  "
                         f"{fig['cpu_median_s']:6.2f} s CPU   {fig['findings']} findings")
    return "\n".join(lines)


def main() -> None:
    args = arguments(__doc__, 5, "multiply the conversation rows (2: 73,000 in the workspace)").parse_args()
    with large_corpus(args, "memtui-doctor-") as paths:
        cmd = [memtui_script(), "--home", str(paths.home), "-w", str(paths.workspace), "doctor"]
        subprocess.run([*cmd, "--fix"], capture_output=True, env=child_env())  # the index in step: same findings each run
        # the prepared index, as the hook and `memtui preview` keep it (the doctor takes its made lines)
        subprocess.run([*cmd[:-1], "preview", QUERY], capture_output=True, env=child_env())
        results = {"scale": args.scale, "corpus": counts(paths), "python": sys.version.split()[0],
                   "spawned": spawned(cmd, args.repeats), "in_process": in_process(paths, args.repeats)}
    report(args, results, table(results))


if __name__ == "__main__":
    main()
