"""Live reload: watchdog on both memory roots (recursive) and a `PRAGMA data_version` poll
of muse.db, each burst of changes debounced into one store reload."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from .model import FILE_LAYERS
from .store import MemoryStore

log = logging.getLogger("memtui.watch")

RELEVANT = {"created", "modified", "deleted", "moved", "closed"}


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: StoreWatcher, root: Path):
        self.watcher = watcher
        self.root = root

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in RELEVANT:
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if not raw:
                continue
            path = Path(raw.decode() if isinstance(raw, bytes) else raw)
            try:
                rel = path.relative_to(self.root)
            except ValueError:
                continue
            if any(part.startswith(".") for part in rel.parts):
                continue  # .trash/, temp files of atomic writes, editors' swap files
            if event.is_directory or path.suffix == ".md":
                self.watcher.notify(path)


class StoreWatcher:
    """Watches the store's sources and reloads it; listeners of the store hear the result."""

    def __init__(self, store: MemoryStore, debounce: float = 0.05, max_delay: float = 0.4,
                 poll_interval: float = 0.2):
        self.store = store
        self.debounce = debounce
        self.max_delay = max_delay
        self.poll_interval = poll_interval
        self._cond = threading.Condition()
        self._pending: set[Path] = set()
        self._first = 0.0
        self._last = 0.0
        self._stopping = False
        self._observer: BaseObserver | None = None
        self._watched: dict[Path, ObservedWatch] = {}
        self._threads: list[threading.Thread] = []
        self._recursive = True  # False once the folders proved too deep for watchdog's walk
        self.reloads = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> StoreWatcher:
        observer = Observer()
        observer.daemon = True
        self._observer = observer
        self._schedule_roots()
        try:
            observer.start()
        except RecursionError:  # watchdog walks the folders recursively: 1,000 nested ones are too deep
            log.warning("memory folders are nested too deep to watch each one; changes made outside memtui "
                        "inside them show after the next reload")
            self._recursive = False
            observer = self._observer = Observer()
            observer.daemon = True
            self._watched.clear()
            self._schedule_roots()
            observer.start()
        for target, name in ((self._debounce_loop, "memtui-debounce"), (self._poll_loop, "memtui-poll")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
        for thread in self._threads:
            thread.join(timeout=2)
        self._threads.clear()

    def __enter__(self) -> StoreWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _schedule_roots(self) -> bool:
        """Watch each memory root that exists (roots created later are picked up by the poll)."""
        added = False
        observer = self._observer
        if observer is None:
            return False
        paths = self.store.paths
        for layer in FILE_LAYERS:
            root = paths.root(layer)
            if root in self._watched or not root.is_dir():
                continue
            if paths.root_problem(layer) is not None:
                continue  # a root that leads out of its workspace (e.g. to ~) is not read, so not watched

            try:
                self._watched[root] = observer.schedule(_Handler(self, root), str(root), recursive=self._recursive)
                added = True
            except OSError as exc:
                log.warning("cannot watch %s: %s", root, exc)
        for root in [r for r in self._watched if not r.is_dir()]:
            try:
                observer.unschedule(self._watched.pop(root))
            except (KeyError, ValueError):
                pass
            added = True
        return added

    # ------------------------------------------------------------------ events
    def notify(self, path: Path) -> None:
        with self._cond:
            now = time.monotonic()
            if not self._pending:
                self._first = now
            self._pending.add(path)
            self._last = now
            self._cond.notify_all()

    def _debounce_loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                now = time.monotonic()
                due = min(self._last + self.debounce, self._first + self.max_delay)
                if now < due:
                    self._cond.wait(due - now)
                    continue
                changed = self._pending
                self._pending = set()
            self._reload(changed)

    def _reload(self, changed: set[Path]) -> None:
        try:
            self.store.reload(changed=changed, conversation=False)
            self.reloads += 1
        except Exception:  # keep watching whatever happened
            log.exception("reload after a file change failed")

    def _poll_loop(self) -> None:
        while True:
            with self._cond:
                if self._cond.wait_for(lambda: self._stopping, timeout=self.poll_interval):
                    return
            try:
                if self._observer is not None and self._schedule_roots():
                    self.notify(self.store.paths.user_root)
                self.store.reload(conversation=None, files=False)
            except Exception:
                log.exception("database poll failed")
