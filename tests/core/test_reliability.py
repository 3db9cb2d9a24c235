"""Loses no data, leaks nothing: crashes, a concurrent writer, watch storms, recovery."""

from __future__ import annotations

import json
import multiprocessing
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memtui.core import markdown as md
from memtui.core.demo import write_demo
from memtui.core.fileio import ConflictError, sha256
from memtui.core.paths import Paths, iter_memory_files
from memtui.core.store import MemoryStore
from memtui.core.store.conversations import Conversations
from memtui.core.store.database import Database
from memtui.core.watch import StoreWatcher
from tests.core import crash_child
from tests.helpers import enable, write

ROOT = Path(__file__).resolve().parents[2]


def memory_files(paths: Paths) -> dict[Path, bytes]:
    out = {}
    for root in (paths.user_root, paths.project_root):
        files, _ = iter_memory_files(root)
        out.update({f: f.read_bytes() for f in files})
    return out


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_nothing(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    paths = write_demo(home, ws)
    allowed: dict[str, set[str]] = {}
    for f, data in memory_files(paths).items():
        allowed.setdefault(str(f), set()).add(sha256(data))
    journal = tmp_path / "journal.txt"
    rnd = random.Random(7)
    kills = 0
    # each writer is a real process, forked from a fork server that imported memtui once
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tests.core.crash_child"])
    for round_ in range(50):
        said, tell = context.Pipe(duplex=False)
        child = context.Process(target=crash_child.forked, daemon=True,
                                args=(str(paths.home), str(paths.workspace), str(journal), str(round_), tell))
        child.start()
        tell.close()
        assert said.poll(60) and said.recv() == "ready", f"writer {round_} did not start (exit code {child.exitcode})"
        time.sleep(rnd.uniform(0.0, 0.25))
        child.kill()
        child.join(timeout=10)
        said.close()
        kills += child.exitcode == -signal.SIGKILL
        for line in journal.read_text().splitlines():
            path, digest = line.split("\t")
            allowed.setdefault(path, set()).add(digest)
        # every file is a version someone meant to write: the one before or after the interrupted write
        for f, data in memory_files(paths).items():
            assert sha256(data) in allowed.get(str(f), set()), f"{f} holds a torn write"
            assert not f.name.startswith(".") and ".tmp" not in f.name
            md.parse_text(data.decode("utf-8"))  # every memory file still parses
        store = MemoryStore(paths)
        store.load()
        assert [p for p in store.problems if "skipped" in p.message] == []
        store.close()
        conn = sqlite3.connect(paths.db_path)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()
    assert kills == 50


MUSE_WRITER = r"""
import os, sqlite3, sys, time
db, md_file, turns, bursts, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])

def wait_for(name):
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(turns, name)):
        if time.monotonic() > deadline:
            sys.exit(f"never got {name}")
        time.sleep(0.001)

conn = sqlite3.connect(db, timeout=10)
for burst in range(bursts):
    wait_for(f"go-{burst}")  # memtui races this burst with an edit of its own
    for i in range(burst * size, (burst + 1) * size):
        with conn:
            conn.execute("INSERT INTO memories (id, type, category, content, tags, source, created_at, updated_at) "
                         "VALUES (?, 'conversation', 'knowledge', ?, '[]', 'auto', 1, 1)", (f"muse-{i}", f"muse note {i}"))
        fd = os.open(md_file, os.O_WRONLY | os.O_APPEND)
        os.write(fd, f"- muse line {i}\n".encode())
        os.close(fd)
        time.sleep(0.003)
    open(os.path.join(turns, f"done-{burst}"), "w").close()
print("done")
"""


def test_concurrent_writer_loses_no_update(paths, tmp_path):
    """Muse appends to a memory file and inserts rows in bursts while memtui edits both: one
    edit of memtui's races each burst (applied or refused as a conflict, never over Muse's
    change), and one more is made between bursts, which must go through."""
    enable(paths)
    shared = write(paths.user_root / "shared.md", "".join(f"- memtui line {i}\n" for i in range(40)))
    Database(paths.db_path).ensure_schema()
    turns = tmp_path / "turns"
    turns.mkdir()
    store = MemoryStore(paths)
    store.load()
    bursts, size = 15, 10
    muse = subprocess.Popen([sys.executable, "-c", MUSE_WRITER, str(paths.db_path), str(shared), str(turns),
                             str(bursts), str(size)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    edits: list[str] = []
    rnd = random.Random(3)

    def edit_both() -> None:
        store.reload(changed=[shared], conversation=True)
        mine = [e for e in store.entries("user") if e.text.startswith("memtui line")]
        target = rnd.choice(mine)
        edits.append(store.edit_entry(target, target.text.replace("memtui line", "memtui EDITED")).text)
        convs = store.entries("conversation")
        if convs:
            store.edit_entry(rnd.choice(convs), "memtui edit of a conversation note")

    try:
        for burst in range(bursts):
            (turns / f"go-{burst}").touch()
            try:
                edit_both()
            except ConflictError:
                pass  # a stale edit is refused, never applied over the other's change
            deadline = time.monotonic() + 60
            while not (turns / f"done-{burst}").exists():
                assert muse.poll() is None, muse.communicate()[1].decode()
                assert time.monotonic() < deadline, "the writer never finished its burst"
                time.sleep(0.001)
            before = len(edits)
            edit_both()  # the writer is waiting: nothing can conflict
            assert len(edits) == before + 1
    finally:
        out, err = muse.communicate(timeout=60)
    assert muse.returncode == 0, err.decode()
    text = shared.read_text()
    for i in range(bursts * size):
        assert f"- muse line {i}\n" in text  # none of Muse's appends was lost
    for e in edits:
        assert f"- {e}\n" in text  # nor any of memtui's accepted edits
    rows = sqlite3.connect(paths.db_path).execute("SELECT count(*) FROM memories WHERE id LIKE 'muse-%'").fetchone()
    assert rows == (bursts * size,)


def test_a_storm_of_changes_is_one_coalesced_reload(paths):
    store = MemoryStore(paths)
    store.load()
    changes = []
    heard = threading.Condition()

    def listen(change):
        with heard:
            changes.append(change)
            heard.notify_all()

    def wait_for(predicate) -> bool:
        with heard:
            return heard.wait_for(predicate, timeout=30)

    store.subscribe(listen)
    with StoreWatcher(store, debounce=0.2, max_delay=2.0) as watcher:
        for i in range(1000):
            (paths.project_root / f"f{i:04d}.md").write_text(f"- checkout {i}\n")
        assert wait_for(lambda: len(store.entries("project")) == 1000), "the storm was not reloaded in 30 s"
        # Events arrive in order: once a file written after the storm is listed, every event of
        # the storm has been delivered and reloaded (a straggler's reload would be counted).
        (paths.project_root / "zz-after.md").write_text("- after the storm\n")
        assert wait_for(lambda: any(e.text == "after the storm" for e in store.entries("project")))
    assert len(store.entries("project")) == 1001
    assert watcher.reloads <= 3 + 1  # the storm in at most three, then the file after it
    assert len(changes) <= 3 + 1


def test_export_import_round_trip_and_repair_of_a_corrupt_database(paths, tmp_path):
    enable(paths)
    write(paths.user_root / "a.md", "- survives\n")
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Chat", str(paths.workspace))
    db.add("only in the database", memory_id="m1", conversation_id="c1", tags=["x"])
    db.close()
    cli = [sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace)]
    backup = tmp_path / "backup.jsonl"
    assert subprocess.run(cli + ["export", "jsonl", str(backup)], capture_output=True).returncode == 0
    paths.db_path.write_bytes(b"garbage" * 500)
    for side in ("-wal", "-shm"):
        Path(str(paths.db_path) + side).unlink(missing_ok=True)
    status = subprocess.run(cli + ["status"], capture_output=True, text=True)
    assert "memtui repair" in status.stdout and str(paths.db_path) in status.stdout
    preview = json.loads(subprocess.run(cli + ["preview", "survives", "--json"], capture_output=True, text=True).stdout)
    assert preview["count"] == 1 and preview["errors"]
    damaged = paths.db_path.read_bytes()
    repaired = subprocess.run(cli + ["repair"], capture_output=True, text=True)
    # SPEC §8: Muse's database is never renamed, replaced or deleted, only reported
    assert repaired.returncode == 1 and "is damaged" in repaired.stderr, repaired
    assert paths.db_path.read_bytes() == damaged
    assert sorted(p.name for p in paths.home.iterdir() if p.name.startswith("muse.db")) == ["muse.db"]
    paths.db_path.unlink()  # what the person does after saving their conversation memories
    imported = subprocess.run(cli + ["import", "jsonl", str(backup)], capture_output=True, text=True)
    assert "Imported 1" in imported.stdout
    listed = json.loads(subprocess.run(cli + ["list", "--json"], capture_output=True, text=True).stdout)["entries"]
    assert {(e["layer"], e["text"]) for e in listed} == {("user", "survives"), ("conversation", "only in the database")}
    again = subprocess.run(cli + ["import", "jsonl", str(backup)], capture_output=True, text=True)
    assert "Imported 0" in again.stdout and "skipped 2 duplicates" in again.stdout


def test_import_names_the_bad_line(paths, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"memory": {"id": "a", "content": "x"}}\nnot json\n')
    cli = [sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace)]
    r = subprocess.run(cli + ["import", "jsonl", str(bad)], capture_output=True, text=True)
    # SPEC §9: a bad line is skipped and reported with its place and reason; the rest imports
    assert r.returncode == 0 and f"{bad}:2" in r.stderr and "Imported 1" in r.stdout, r


def test_import_keeps_memories_whose_conversation_is_unknown(paths, tmp_path):
    backup = tmp_path / "b.jsonl"
    backup.write_text(json.dumps({"memory": {"id": "orphan", "content": "from a deleted chat",
                                             "conversation_id": "gone"}, "conversation": None}) + "\n")
    cli = [sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace)]
    r = subprocess.run(cli + ["import", "jsonl", str(backup)], capture_output=True, text=True)
    assert r.returncode == 0 and "Imported 1" in r.stdout, r.stderr
    store = MemoryStore(paths)
    store.load()
    assert [(e.id, e.conversation_id) for e in store.entries("conversation")] == [("orphan", "gone")]


def test_an_append_between_check_and_rename_is_kept(paths, monkeypatch):
    """Deterministic form of the race the concurrent-writer test samples: another program
    appends to the file after memtui checked it and before the rename."""
    import os as _os

    from memtui.core import fileio

    shared = write(paths.user_root / "shared.md", "- one\n- two\n")
    store = MemoryStore(paths)
    store.load()
    real_replace = _os.replace
    fired = []

    def append_then_replace(src, dst, **folders):  # names relative to the folder's descriptor
        if dst == shared.name and not fired:
            fired.append(True)
            with open(shared, "a", encoding="utf-8") as f:
                f.write("- appended by Muse\n")
        real_replace(src, dst, **folders)

    monkeypatch.setattr(fileio.os, "replace", append_then_replace)
    target = next(e for e in store.entries("user") if e.text == "one")
    store.edit_entry(target, "ONE")
    assert fired and shared.read_text() == "- ONE\n- two\n- appended by Muse\n"
