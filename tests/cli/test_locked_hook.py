"""SPEC §8 "A locked database costs the prompt nothing": while another process holds muse.db
(a real second SQLite connection in `BEGIN EXCLUSIVE`), the hook, a real subprocess, still
injects the Markdown layers, and the conversation layer from the prepared index when it can be
read; only the history record is dropped, said on stderr. How long it takes is measured by
`python -m tests.benchmarks.locked_hook`, not asserted here."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path

import pytest

from memtui.core import history
from memtui.core.paths import Paths
from memtui.core.store.conversations import Conversations
from tests.helpers import enable, write

from .test_hook import HOOK, hook_input, run_hook

PROMPT = "vitest pool nightingale"


@contextmanager
def held(db: Path):
    """Another process's writer: a connection of its own holding `BEGIN EXCLUSIVE`."""
    conn = sqlite3.connect(db, timeout=1, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def seeded(paths: Paths, journal: str) -> None:
    enable(paths)
    write(paths.user_root / "prefs.md", "- Use vitest, not jest\n")
    write(paths.project_root / "context.md", "- The pool lives in src/db/pool.ts\n")
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Chat", str(paths.workspace))
    db.add("the staging database is called nightingale", memory_id="m1", conversation_id="c1")
    db.close()
    first = run_hook(paths.home, hook_input(paths.workspace, PROMPT), cmd=HOOK)  # prepares the index, records
    assert b"nightingale" in first.stdout and first.stderr == b""
    conn = sqlite3.connect(paths.db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert conn.execute(f"PRAGMA journal_mode={journal}").fetchone()[0] == journal
    conn.close()


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_the_hook_injects_while_another_writer_holds_the_database(paths, journal):
    seeded(paths, journal)
    with held(paths.db_path):
        done = run_hook(paths.home, hook_input(paths.workspace, PROMPT), cmd=HOOK)
        # a Markdown file changed meanwhile is read again, still without waiting on the lock
        write(paths.project_root / "context.md", "- The pool lives in src/db/pool.ts\n- vitest runs in CI\n")
        again = run_hook(paths.home, hook_input(paths.workspace, PROMPT), cmd=HOOK)
    for result in (done, again):
        out, err = result.stdout.decode(), result.stderr.decode()
        assert result.returncode == 0
        assert "- Use vitest, not jest" in out and "- The pool lives in src/db/pool.ts" in out, err
        assert "injection not recorded" in err and "locked" in err and "still injected" in err
        if journal == "wal":  # readers read through a writer's lock: the conversation layer is there
            assert "- the staging database is called nightingale" in out
        else:  # a rollback journal shuts readers out: the layer is left out, not waited for
            assert "nightingale" not in out
    assert "- vitest runs in CI" in again.stdout.decode()
    assert len(history.records(paths.db_path)) == 1  # only the first, unlocked run was recorded
    after = run_hook(paths.home, hook_input(paths.workspace, PROMPT), cmd=HOOK)
    assert b"nightingale" in after.stdout and after.stderr == b""
    assert len(history.records(paths.db_path)) == 2


def test_preview_says_the_conversation_layer_was_left_out_for_the_lock(paths):
    from .run import memtui

    seeded(paths, "delete")
    with held(paths.db_path):
        shown = memtui(paths, "preview", PROMPT, "--json", real=True)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert "- Use vitest, not jest" in data["text"] and "nightingale" not in data["text"]
    assert any("locked by another writer" in e["message"] for e in data["errors"]), data["errors"]
