"""The merge driver (SPEC §14) on one large memory file, so it stays linear (git gives a driver
no timeout: a slow driver is a hung `git merge`):

    python -m tests.benchmarks.merge_driver [--sizes 1000,10000,30000] [--repeats 3] [--json out.json]

For each size and each shape of file (list items under a few headings; paragraphs separated
by blank lines, the shape whose many identical blank lines made the diff quadratic), BASE
holds that many entries and each side deletes, changes and adds about 1 % of them at
different places (a seeded random, so every run merges the same files). Two figures each:
- *spawned*: `memtui merge-driver BASE OURS THEIRS PATH`, the whole process git starts;
- *in process*: `gitmerge.merge_entries` alone.
Medians of wall and CPU time (the machine is shared: read CPU time and the ratio between
sizes; linear means 3x the entries costs about 3x the time).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memtui.core.gitmerge import merge_entries

SHAPES = ("items", "paragraphs")


def versions(n: int, shape: str, seed: int = 1) -> tuple[bytes, bytes, bytes]:
    """BASE, OURS and THEIRS of one file of `n` entries in `shape`."""
    rnd = random.Random(seed)
    # short entries, so that 30,000 of them fit in the 1 MiB a memory file may hold
    base = [f"E{i} uses port {rnd.randrange(1000, 9999)}" for i in range(n)]

    def side(tag: str) -> list[tuple[int, str]]:
        out: list[tuple[int, str]] = []
        for i, text in enumerate(base):
            r = rnd.random()
            if r < 0.01:
                continue  # deleted
            out.append((i, text + f" ({tag})" if r < 0.02 else text))
            if r > 0.99:
                out.append((i, f"{tag} added {i}"))
        return out

    def render(items: list[tuple[int, str]]) -> bytes:
        head = "---\ntype: knowledge\ntags: [team]\nupdatedAt: 2026-01-01\n---\n\n"
        if shape == "paragraphs":  # one list item, so that each paragraph is an entry (SPEC §2)
            head += "- Paragraphs below, one entry each\n\n"
        parts = []
        part = -1
        for i, text in items:  # a heading every 1,000 entries of BASE, where BASE has it
            if i // 1000 != part:
                part = i // 1000
                parts.append(f"{'' if not parts else chr(10)}## Part {part}\n\n")
            parts.append(f"- {text}\n" if shape == "items" else f"{text}\n\n")
        return (head + "".join(parts)).encode()

    return render(list(enumerate(base))), render(side("ours")), render(side("theirs"))


def _cpu_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def spawned(n: int, shape: str, repeats: int) -> dict:
    base, ours, theirs = versions(n, shape)
    exe = shutil.which("memtui") or str(Path(sys.executable).with_name("memtui"))
    walls, cpus, codes = [], [], set()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "base").write_bytes(base)
        (folder / "theirs").write_bytes(theirs)
        for _ in range(repeats):
            (folder / "ours").write_bytes(ours)  # the driver merges into OURS
            cpu, start = _cpu_children(), time.perf_counter()
            done = subprocess.run([exe, "merge-driver", str(folder / "base"), str(folder / "ours"),
                                   str(folder / "theirs"), ".muse/memory/context.md"], capture_output=True)
            walls.append(time.perf_counter() - start)
            cpus.append(_cpu_children() - cpu)
            codes.add(done.returncode)
    return {"median_s": statistics.median(walls), "cpu_median_s": statistics.median(cpus), "exit": sorted(codes),
            "command": f"{exe} merge-driver BASE OURS THEIRS PATH"}


def in_process(n: int, shape: str, repeats: int) -> dict:
    base, ours, theirs = versions(n, shape)
    walls, cpus = [], []
    conflicts = 0
    for _ in range(repeats):
        cpu, start = time.process_time(), time.perf_counter()
        conflicts = merge_entries(base, ours, theirs).conflicts
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return {"median_s": statistics.median(walls), "cpu_median_s": statistics.median(cpus), "conflicts": conflicts}


def run(sizes: list[int], repeats: int) -> dict:
    results: dict = {}
    for shape in SHAPES:
        for n in sizes:
            results[f"{shape}/{n}"] = {"spawned": spawned(n, shape, repeats), "in_process": in_process(n, shape, repeats)}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,30000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    results = run([int(x) for x in args.sizes.split(",")], args.repeats)
    print(f"{'file':<20}{'spawned wall':>14}{'spawned CPU':>13}{'exit':>6}{'merge wall':>12}{'merge CPU':>11}")
    for name, r in results.items():
        s, p = r["spawned"], r["in_process"]
        print(f"{name:<20}{s['median_s']:>13.2f}s{s['cpu_median_s']:>12.2f}s{','.join(map(str, s['exit'])):>6}"
              f"{p['median_s']:>11.2f}s{p['cpu_median_s']:>10.2f}s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
