"""Live reload with real watchdog events and a real muse.db written by another connection."""

from __future__ import annotations

import sqlite3
import threading
import time

from memtui.core.store import MemoryStore
from memtui.core.store.database import Database
from memtui.core.watch import StoreWatcher
from tests.helpers import write


class Events:
    def __init__(self):
        self.items = []
        self.cond = threading.Condition()

    def __call__(self, change):
        with self.cond:
            self.items.append(change)
            self.cond.notify_all()

    def wait_for(self, predicate, timeout=10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.items), timeout=timeout)


def test_outside_write_gives_one_change_event(paths):
    write(paths.user_root / "a.md", "- a\n")
    store = MemoryStore(paths)
    store.load()
    events = Events()
    store.subscribe(events)
    with StoreWatcher(store):
        write(paths.project_root / "new.md", "- written from outside\n")
        assert events.wait_for(lambda items: any("project" in c.layers for c in items))
        assert [e.text for e in store.entries("project")] == ["written from outside"]
        quiet_until = time.monotonic() + 0.6
        events.wait_for(lambda items: len(items) > 1, timeout=max(0.0, quiet_until - time.monotonic()))
        assert len(events.items) == 1


def test_burst_of_writes_is_debounced(paths):
    store = MemoryStore(paths)
    store.load()
    events = Events()
    store.subscribe(events)
    with StoreWatcher(store) as watcher:
        for i in range(200):
            (paths.user_root / f"f{i:03d}.md").write_text(f"- burst {i}\n")
        assert events.wait_for(lambda items: sum(1 for _ in store.entries("user")) == 200 and items)
        assert watcher.reloads < 20
    assert len(events.items) < 20


def test_database_change_from_another_process_is_noticed(paths):
    Database(paths.db_path).ensure_schema()
    store = MemoryStore(paths)
    store.load()
    events = Events()
    store.subscribe(events)
    with StoreWatcher(store):
        other = sqlite3.connect(paths.db_path)
        other.execute("INSERT INTO memories (id, type, category, content, tags, source, created_at, updated_at) "
                      "VALUES ('x', 'conversation', 'knowledge', 'from muse', '[]', 'auto', 1, 1)")
        other.commit()
        other.close()
        assert events.wait_for(lambda items: any("conversation" in c.layers for c in items))
    assert [e.text for e in store.entries("conversation")] == ["from muse"]


def test_memory_root_created_later_is_watched(tmp_path):
    from memtui.core.paths import Paths

    paths = Paths(tmp_path / "h", tmp_path / "w")
    (tmp_path / "w").mkdir()
    store = MemoryStore(paths)
    store.load()
    events = Events()
    store.subscribe(events)
    with StoreWatcher(store):
        write(paths.project_root / "late.md", "- late\n")
        assert events.wait_for(lambda items: [e.text for e in store.entries("project")] == ["late"])
