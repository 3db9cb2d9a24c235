"""What the panes badge and sort by: the doctor's findings and the injection history, found
in a worker (`Insights.refresh`), a large store's doctor in a child process (`DoctorProcess`)
that may start before the store has loaded."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from memtui.core import history
from memtui.core.display import display_path
from memtui.core.doctor import findings, index_findings
from memtui.core.finding import Finding
from memtui.core.finding_set import FindingIndex, FoundSet
from memtui.core.model import LAYERS

from .insights import DoctorProcess
from .messages import InsightsReady

if TYPE_CHECKING:
    from .app import MemtuiApp


class Insights:
    """The doctor's findings (None until its first run is done), per entry, and the history
    (entry id -> (times injected, last ms, ((assistant, times), ...))). Never two runs at
    once: changes during a run ask for one more run after it (a burst of changes costs two)."""

    def __init__(self, app: MemtuiApp) -> None:
        self.app = app
        self.findings: FoundSet | None = None
        self.by_entry = FindingIndex()
        self.history: dict[str, tuple[Any, ...]] = {}
        self.running = False
        self._again = False
        self._early = False  # the doctor started before the store loaded (a large store)
        self._read: tuple[Any, ...] | None = None  # what its last child process read
        self._ok = True  # its last run found its findings (no error)
        self._doctor = DoctorProcess()

    def early(self, size: int) -> None:
        """(The panes list the prepared index of `size` entries) a large store's doctor runs in
        a child process, which reads the memories itself: it starts now, on the machine's other
        core, not once the store has loaded behind the first preview (what it read is compared
        with the store then)."""
        if self.findings is None and size > self.app.tuning.doctor_in_process:
            self._early = True
            self.refresh()

    def loaded(self) -> None:
        """The store loaded: the doctor's first run, or another if the early one is stale. (An
        early one's findings may have come in between the store's load and this: they were
        judged then, and it is not run again.)"""
        if not self._early:
            if self.findings is None and not self.running:
                self.app.call_after_refresh(self.refresh)  # after the panes are painted
        elif not self.running:  # (a running early doctor is checked when its findings come in)
            shown = self.findings
            if self._early_stale():
                self.refresh()
            elif self.findings is not shown:  # its index findings found again
                self.app.main.insights_changed()

    def refresh(self) -> None:
        """Run the doctor and read the injection history again, in a thread of its own that
        quitting does not wait for (a worker's would be joined at exit: a doctor that takes
        seconds kept the terminal for as long after `q`); a child process it runs is stopped
        with the app (`stop`)."""
        if self.running:
            self._again = True
            return
        self.running = True
        self._again = False
        threading.Thread(target=self._compute, name="memtui-doctor", daemon=True).start()

    def _compute(self) -> None:
        """(The doctor's thread) its findings and the history, sent to the app; whatever fails
        is said as a failed run, never left to stop the thread with `running` still set."""
        try:
            message = self._found()
        except Exception as exc:
            message = InsightsReady(_could_not_run(self.app, exc), {}, None, False)
        try:
            self.app.post_message(message)
        except RuntimeError:  # the app has quit and its event loop is closed: nobody to tell
            pass

    def _found(self) -> InsightsReady:
        app = self.app
        paths, store = app.paths, app.store
        read: tuple[Any, ...] | None = None  # what a child process read (None: this store, or unknown)
        ok = True
        try:
            if app.loaded and sum(len(store.snapshot(layer)) for layer in LAYERS) <= app.tuning.doctor_in_process:
                found = FoundSet(findings(paths, store=store))  # the loaded store, not a reload
            else:  # in a child process at low priority: the panes and the preview keep the interpreter
                found, read = self._doctor.run(paths)
        except Exception as exc:  # a doctor that cannot read says so; the panes stay usable
            found, ok = _could_not_run(app, exc), False
        try:
            stats = history.stats(paths.db_path, paths.workspace, by_target=True) if paths.db_path.is_file() else {}
        except Exception:  # no history table yet, or a damaged database: nothing to show
            stats = {}
        return InsightsReady(found, stats, read, ok)

    def _early_stale(self) -> bool:
        """(The store just loaded, the early doctor done) whether its findings must be found
        again: it failed, or what it read is not what the store read (a file or a row changed
        in between, before the watcher was there to say so), or nobody can tell. When it read
        the same memories but found the search index out of step (a file edited outside since
        the last load: the store's load has just brought the index in step), only those
        findings are found again, from the store, in their place: the doctor is not run a
        second time for them (its child's whole search, at ten times the store, over again).
        They are about files, never an entry's: the findings per entry stay as they are."""
        self._early = False
        held = self.app.store.read_state()
        if not self._ok or self._read is None or held is None or self._read != held:
            return True
        found = self.findings
        if found is not None and found.has_kind("index"):  # (not made one by one)
            self.findings = found.with_kind("index", index_findings(self.app.store))
        return False

    def ready(self, message: InsightsReady) -> None:
        """Take a run's findings; run again if asked meanwhile or if they are stale."""
        app = self.app
        self.running = False
        self._read, self._ok = message.read, message.ok
        self.findings = message.findings
        self.by_entry = FindingIndex(message.findings, app.store.entries)
        self.history = message.stats
        again = self._again
        if app.loaded and self._early:
            again = self._early_stale() or again
        elif app.loaded and message.read is not None:  # a child's read against the store's; a change the
            held = app.store.read_state()  # watcher has not brought in yet asks for no run (its own change will)
            again = again or (held is not None and held != message.read)
        if again:
            self.refresh()

    def stop(self) -> None:
        self._doctor.stop()


def _could_not_run(app: MemtuiApp, exc: Exception) -> FoundSet:
    """A doctor that failed says so, as its one finding; the panes stay usable."""
    return FoundSet([Finding("invalid", display_path(app.paths.workspace), f"the doctor could not run: {exc}")])
