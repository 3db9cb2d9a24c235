"""What SPEC §18 costs the hook's path when nothing of it is set: the expiry check
(`serve._expired`: memtui's entry-flags table and each layer's saved `expiring` map) alone,
and `build_injection` with and without it, interleaved, on the L corpus.

    python -m tests.benchmarks.forgetting [--size L] [--rounds 3]

Medians in milliseconds; the machine is shared, so read the ratio of the two interleaved
figures rather than either alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from memtui.core import serve
from memtui.core.serve import build_injection
from memtui.core.settings import load_settings
from memtui.core.store.prepared import open_prepared

from .corpus import generate, queries


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="L")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    paths = generate(Path(tempfile.mkdtemp()), args.size)
    data = json.loads(paths.global_settings.read_text()) if paths.global_settings.exists() else {}
    paths.global_settings.write_text(json.dumps({**data, "memoryEnabled": True}))
    qs = queries(n=60)
    build_injection(paths.workspace, qs[0], home=paths.home)  # the prepared index, built and saved
    check = serve._expired
    with_check: list[float] = []
    without: list[float] = []
    for _ in range(args.rounds):
        for q in qs:
            for out, fn in ((with_check, check), (without, lambda *a, **k: (frozenset(), {}))):
                serve._expired = fn  # type: ignore[assignment]
                began = time.perf_counter()
                build_injection(paths.workspace, q, home=paths.home)
                out.append(time.perf_counter() - began)
    serve._expired = check  # type: ignore[assignment]
    settings = load_settings(paths)
    prepared = open_prepared(paths, settings)
    alone = []
    for _ in range(200):
        began = time.perf_counter()
        check(paths, settings, prepared.indexes, None, [])
        alone.append(time.perf_counter() - began)
    print(f"size {args.size}: build_injection median {statistics.median(with_check) * 1000:.2f} ms with the expiry "
          f"check, {statistics.median(without) * 1000:.2f} ms without; the check alone "
          f"{statistics.median(alone) * 1000:.3f} ms")


if __name__ == "__main__":
    main()
