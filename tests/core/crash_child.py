"""A child process for the crash-safety test: random remember / edit / delete / forget on a
real store, journaling the hash of every file version before it is written, until killed."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from memtui.core import fileio as store_module  # the gate's low-level write
from memtui.core.actions import matching
from memtui.core.fileio import ConflictError, sha256
from memtui.core.paths import Paths
from memtui.core.store import MemoryStore


def main() -> None:
    home, ws, journal_path, seed = sys.argv[1:5]
    rnd = random.Random(int(seed))
    journal = open(journal_path, "a", encoding="utf-8")  # noqa: SIM115 - open until the process is killed
    original = store_module.atomic_write_bytes

    def journaled(path: Path, data: bytes, expected="any", **where) -> None:
        journal.write(f"{path}\t{sha256(data)}\n")
        journal.flush()
        os.fsync(journal.fileno())
        original(path, data, expected=expected, **where)

    store_module.atomic_write_bytes = journaled
    store = MemoryStore(Paths(Path(home), Path(ws)))
    store.load()
    print("ready", flush=True)
    n = 0
    while True:
        n += 1
        entries = store.entries("user") + store.entries("project")
        op = rnd.choice(["remember", "remember", "edit", "edit", "delete", "forget", "conversation"])
        try:
            if op == "remember" or not entries:
                store.create_entry(rnd.choice(["user", "project"]), f"remembered {seed}-{n} " + "x" * rnd.randint(0, 300))
            elif op == "edit":
                store.edit_entry(rnd.choice(entries), f"edited {seed}-{n}\n  second line {n}")
            elif op == "delete":
                store.delete_entries([rnd.choice(entries)])
            elif op == "forget":
                store.delete_entries(matching(store, "remembered")[:3])
            else:
                store.create_entry("conversation", f"conversation note {seed}-{n}")
        except (ConflictError, ValueError):
            store.reload(full=True)


if __name__ == "__main__":
    main()
