"""A child process for the crash-safety test: random remember / edit / delete / forget on a
real store, journaling the hash of every file version before it is written, until killed."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memtui.core import fileio as store_module  # the gate's low-level write
from memtui.core.actions import matching
from memtui.core.fileio import ConflictError, sha256
from memtui.core.paths import Paths
from memtui.core.store import MemoryStore


def run(home: str, ws: str, journal_path: str, seed: str, ready: Callable[[], Any]) -> None:
    """Write at random until killed; `ready()` once the store is loaded."""
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
    ready()
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


def forked(home: str, ws: str, journal_path: str, seed: str, conn: Any) -> None:
    """The same in a process forked from a multiprocessing fork server that imported memtui
    once (the test's 50 rounds then skip 50 interpreter start-ups); says ready on `conn`."""
    run(home, ws, journal_path, seed, lambda: conn.send("ready"))


def main() -> None:
    run(*sys.argv[1:5], ready=lambda: print("ready", flush=True))


if __name__ == "__main__":
    main()
