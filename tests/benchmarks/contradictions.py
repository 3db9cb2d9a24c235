"""Precision and recall of the doctor's `contradiction` finding (SPEC §17) on the labelled set
in tests/core/contradiction_set.py, and the time of its search at 50,000 memories:

    python -m tests.benchmarks.contradictions [--json]

- *pair by pair*: each labelled pair judged alone (`contradictions.contradiction`);
- *whole set*: every memory of the set at once, through the doctor's blocked search
  (`contradiction_pairs`), as the doctor meets them; a pair found there that is in neither
  list (two memories of two labelled pairs) is listed, not counted;
- *time*: the blocked search over 50,000 texts (the set's memories among the corpus
  generator's sentences), CPU seconds, median of 5 runs.

Precision = labelled contradictions found / pairs found among the labelled ones; recall =
labelled contradictions found / labelled contradictions. The misses are printed by kind."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from memtui.core.contradictions import contradiction, contradiction_pairs
from tests.core.contradiction_set import CONTRADICTS, LOOK_ALIKES

from .corpus import sentence


def measure(found: set[frozenset[str]]) -> dict:
    true = {frozenset((a, b)): kind for kind, a, b in CONTRADICTS}
    false = {frozenset((a, b)): shape for shape, a, b in LOOK_ALIKES}
    tp = [p for p in found if p in true]
    fp = [p for p in found if p in false]
    return {"precision": len(tp) / max(len(tp) + len(fp), 1), "recall": len(tp) / len(true),
            "found": len(tp), "false": [sorted(p) + [false[p]] for p in fp],
            "missed": sorted([true[p], *sorted(p)] for p in true if p not in found),
            "unlabelled": sorted(sorted(p) for p in found if p not in true and p not in false)}


def timing(n: int = 50_000, runs: int = 5) -> dict:
    rnd = random.Random(3)
    texts = [t for _, a, b in CONTRADICTS + LOOK_ALIKES for t in (a, b)]
    texts += [sentence(rnd) for _ in range(n - len(texts))]
    rnd.shuffle(texts)
    cpus = []
    for _ in range(runs):
        start = time.process_time()
        contradiction_pairs(texts)
        cpus.append(time.process_time() - start)
    return {"texts": len(texts), "cpu_median_s": statistics.median(cpus), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args()
    alone = {frozenset((a, b)) for _, a, b in CONTRADICTS + LOOK_ALIKES if contradiction(a, b)}
    texts = list(dict.fromkeys(t for _, a, b in CONTRADICTS + LOOK_ALIKES for t in (a, b)))
    together = {frozenset((texts[i], texts[j])) for i, j, _ in contradiction_pairs(texts)}
    results = {"set": {"contradictions": len(CONTRADICTS), "look_alikes": len(LOOK_ALIKES)},
               "pair_by_pair": measure(alone), "whole_set": measure(together), "time": timing()}
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return
    print(f"labelled set: {len(CONTRADICTS)} contradictions, {len(LOOK_ALIKES)} look-alikes")
    for name in ("pair_by_pair", "whole_set"):
        r = results[name]
        print(f"{name.replace('_', ' '):<13} precision {r['precision']:.1%}  recall {r['recall']:.1%}  "
              f"({r['found']} found, {len(r['false'])} false)")
        for kind, a, b in r["missed"]:
            print(f"    missed {kind}: {a!r} / {b!r}")
        for a, b, shape in r["false"]:
            print(f"    false ({shape}): {a!r} / {b!r}")
    print(f"whole set, pairs across labelled pairs (not counted): {len(results['whole_set']['unlabelled'])}")
    t = results["time"]
    print(f"search over {t['texts']:,} texts: {t['cpu_median_s']:.2f} s CPU (median of {t['runs']})")


if __name__ == "__main__":
    main()
