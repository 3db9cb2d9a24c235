"""The doctor's whole near-duplicate search (`similarity.close_pairs`, what a first run or a
run after many changes pays) on a file of texts, and the search of a few new texts against
all the others (`similarity.close_across`, what a run after a small change pays):

    python -m tests.benchmarks.near_pairs TEXTS.json [--repeats 3] [--new 400]

TEXTS.json is a JSON list of the memories' texts as the doctor passes them to
`duplicate_pairs`; they are normalised and made distinct as `near_pairs.NearPairs` does.
Each figure is the median of `--repeats` runs in this process, CPU time (the doctor runs
niced in a child: CPU is what it costs) and wall time beside it, and the peak RSS of the
process. The pairs found are printed with their count, so two versions can be compared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path


def timed(run: Callable[[], list[tuple[int, int]]], repeats: int) -> tuple[float, float, list[tuple[int, int]]]:
    cpus, walls = [], []
    found: list[tuple[int, int]] = []
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        found = run()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return statistics.median(cpus), statistics.median(walls), found


def digest(pairs: list[tuple[int, int]]) -> str:
    return hashlib.sha256(json.dumps(sorted(pairs)).encode()).hexdigest()[:16]


def main() -> None:
    from memtui.core.similarity import close_across, close_pairs, normalise_for_duplicates

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("texts", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--new", type=int, default=400, help="texts searched against all the others (0: skip)")
    args = parser.parse_args()

    texts = json.loads(args.texts.read_text(encoding="utf-8"))
    norms = list(dict.fromkeys(normalise_for_duplicates(t) for t in texts))
    print(f"{len(texts):,} texts, {len(norms):,} distinct once normalised")

    cpu, wall, pairs = timed(lambda: close_pairs(norms), args.repeats)
    print(f"close_pairs (the whole search): median CPU {cpu:.2f} s, wall {wall:.2f} s over {args.repeats} runs; "
          f"{len(pairs)} pairs (sha256 {digest(pairs)})")
    if args.new:
        fresh = norms[-args.new:]
        cpu, wall, across = timed(lambda: close_across(fresh, norms), args.repeats)
        print(f"close_across ({len(fresh)} new texts against all): median CPU {cpu:.2f} s, wall {wall:.2f} s; "
              f"{len(across)} pairs (sha256 {digest(across)})")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
