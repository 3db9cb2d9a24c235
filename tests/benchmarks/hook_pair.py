"""The hook of two installs, paired: spawns of each one's `memtui hook claude-code` with a
Claude Code prompt on stdin, interleaved (A B, B A, A B, ...), and the median CPU (user +
system) of each with their ratio. For a change that must not make the hook slower: the
commit before in one virtual environment, the change in another.

    python -m tests.benchmarks.hook_pair --a MEMTUI HOME WORKSPACE --b MEMTUI HOME WORKSPACE \\
        [--repeats 11] [--query TEXT]

MEMTUI is an install's console script (`.venv/bin/memtui`). Each install needs its own copy
of the corpus: the prepared index is stamped with the code that made it, so two installs on
one home would each rebuild it for the other. Each side is run once before the timed runs
(the index made or checked, bytecode written); whether both print the same text is
reported (`same output`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess

from .processes import QUERY, child_env


def spawn_cpu(memtui: str, home: str, workspace: str, query: str) -> tuple[float, bytes]:
    """One spawn of the hook: (CPU s, user + system, of the child; what it printed)."""
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": query, "cwd": workspace,
                         "session_id": "bench"}).encode()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([memtui, "--home", home, "hook", "claude-code"], input=prompt, capture_output=True,
                         env=child_env(), check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def measure(sides: dict[str, list[str]], repeats: int, query: str) -> dict:
    """Each side's CPU per spawn, the pairs interleaved, and whether their outputs agree."""
    outputs = {name: spawn_cpu(*side, query)[1] for name, side in sides.items()}  # the warm-up
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    for i in range(repeats):
        for name in (list(sides) if i % 2 == 0 else list(reversed(sides))):
            used, out = spawn_cpu(*sides[name], query)
            cpu[name].append(used)
            if out != outputs[name]:
                raise RuntimeError(f"{name}: the hook printed something else on spawn {i + 1}")
    medians = {name: statistics.median(times) for name, times in cpu.items()}
    return {"medians_s": medians, "ratio_b_a": medians["b"] / medians["a"], "runs_s": cpu,
            "same_output": outputs["a"] == outputs["b"], "output_bytes": len(outputs["a"]), "load": os.getloadavg(), "query": query}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", nargs=3, required=True, metavar=("MEMTUI", "HOME", "WORKSPACE"))
    parser.add_argument("--b", nargs=3, required=True, metavar=("MEMTUI", "HOME", "WORKSPACE"))
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--query", default=QUERY)
    args = parser.parse_args()
    found = measure({"a": args.a, "b": args.b}, args.repeats, args.query)
    for name in ("a", "b"):
        runs = ", ".join(f"{t * 1000:.0f}" for t in sorted(found["runs_s"][name]))
        print(f"{name}: median {found['medians_s'][name] * 1000:.1f} ms CPU ({runs})")
    print(f"b/a {found['ratio_b_a']:.3f}; same output: {found['same_output']}; "
          f"load {' '.join(f'{x:.2f}' for x in found['load'])}")


if __name__ == "__main__":
    main()
