"""The memtui App: the main screen and the dialogs, key bindings, themes, and the workers
that load the store and run every write (results come back as messages)."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.notifications import Notify
from textual.screen import ModalScreen, Screen
from textual.theme import Theme
from textual.worker import Worker, WorkerState

from memtui.core import actions, history, review
from memtui.core.display import display_path, escape_name
from memtui.core.doctor import Finding, findings, findings_by_entry
from memtui.core.injection import InjectionResult
from memtui.core.model import LAYERS, Entry, Layer
from memtui.core.paths import Paths
from memtui.core.settings import load_settings
from memtui.core.store import MemoryStore, PlannedDelete
from memtui.core.store.prepared import Prepared
from memtui.themes import load_themes

from . import screens
from .forgetting import private_label
from .insights import DoctorProcess
from .main_screen import COMPACT_HEIGHT, COMPACT_WIDTH, MainScreen
from .messages import (
    AcceptRefused,
    AlreadyRemembered,
    ChangeUndone,
    ContradictionSettled,
    DeleteAsked,
    EditConflict,
    EntriesAccepted,
    EntryAdded,
    EntryDeleted,
    EntryEdited,
    EntryRejected,
    InboxReady,
    IndexBuilding,
    InsightsReady,
    MemorySwitched,
    NothingToUndo,
    PreparedOpened,
    Result,
    SettingsRefused,
    SettingsSaved,
    StoreChanged,
    StoreLoaded,
    StoreReloaded,
    SwitchRefused,
    ThemeRemembered,
    UndoLogRead,
    WriteRefused,
)
from .startup import open_prepared, prepared_entries
from .text import LAYER_TITLES, describe, sentence, skipped_summary, snippet, where

if TYPE_CHECKING:
    from memtui.core.watch import StoreWatcher

log = logging.getLogger("memtui.tui")

SETTINGS_POLL = 0.5  # seconds between stats of the two settings files (changed by `memtui disable` elsewhere)
DOCTOR_IN_PROCESS = 5000  # entries up to which the doctor runs in a thread (milliseconds), else in a child process
FIRST_PAINT_WAIT = 2.0  # seconds the store's load waits for the first preview to be on screen, at most
TYPING_PAUSE = 0.4  # the store loads once no key was typed into an input for this long…
TYPING_WAIT = 10.0  # …or after this many seconds of typing, whichever comes first


TOASTS = 2  # shown at once over the main screen (over a dialog: one)


class MemtuiApp(App[None]):
    """The App: the store and its watcher, themes, the settings watch, the one write worker
    and the insights worker; screens and widgets render what it posts. It is longer than a
    screen because every write and background job goes through it, so that none runs on the
    event loop and each store change refreshes the panes once."""

    CSS_PATH = "app.tcss"
    TITLE = "memtui"

    def __init__(self, paths: Paths, demo: bool = False, watch: bool = True, theme: str | None = None) -> None:
        """`theme` overrides the remembered one for this run (screenshots, tests); not saved."""
        super().__init__()
        self.paths = paths
        self.demo = demo
        self.watch_files = watch
        self.store = MemoryStore(paths, index=paths.home.is_dir())  # no Muse home yet: create nothing
        self.settings = load_settings(paths)
        self._settings_stamp = self._stat_settings()
        self.watcher: StoreWatcher | None = None
        self.loaded = False  # the store has loaded (until then the panes show the prepared index)
        self.prepared: Prepared | None = None  # the prepared index the panes start from and the preview answers from
        # the store's changes (and settings reloads) seen, and the count `prepared` was opened at:
        # the preview opens it again, in its worker, once they differ
        self._changes = 0
        self._prepared_at = 0
        self._prepared_lock = threading.Lock()
        self._semantic: Any = None  # §13: the model and its vector cache, once hybrid retrieval asked for them
        self.ready = asyncio.Event()  # set once the panes are populated
        # the prepared index and its panes' entries, opened by a thread from the app's start (`_open`);
        # `_opened_or_building` is set once it is open, failed, or has to be built (then it takes a while)
        self._opened: tuple[Prepared, dict[str, Sequence[Entry]]] | None = None
        self._opened_or_building = threading.Event()
        self._open_done = threading.Event()  # set once it is open or failed
        self._opened_shown = False
        self._store_ready = threading.Event()  # writes wait for the store
        self.first_paint = threading.Event()  # the first preview is on screen: the store may load
        self.last_typed = 0.0  # time.monotonic() of the last key typed into the query or the filter
        self._indexing = ""  # the layers whose prepared index is being built (shown in the header)
        self._unsubscribe: Callable[[], None] | None = None
        themes, self.theme_problems = load_themes()
        for found in themes:
            self.register_theme(found)
        self.theme_names = [t.name for t in themes] + ["textual-dark", "textual-light", "nord", "gruvbox"]
        wanted = theme or self.settings.theme
        self.theme = wanted if wanted in self.available_themes else "memtui-dark"
        self._theme_override = theme
        self.findings: list[Finding] | None = None  # the doctor's, once its first run is done
        self.findings_by_entry: dict[str, tuple[Finding, ...]] = {}
        self.history: dict[str, tuple[Any, ...]] = {}  # entry id -> (times injected, last ms, ((assistant, times), ...))
        self._insights_running = False
        self._insights_again = False
        self._early_doctor = False  # the doctor started before the store loaded (a large store)
        self._doctor_read: tuple[Any, ...] | None = None  # what its last child process read
        self._doctor_ok = True  # its last run found its findings (no error)
        self._doctor = DoctorProcess()
        self.inbox: list[review.Pending] | None = None  # awaiting review (SPEC §12), newest first; None: not read yet
        self.main = MainScreen()

    def get_default_screen(self) -> MainScreen:
        return self.main

    # ------------------------------------------------------------------ the main screen's state
    @property
    def last_result(self) -> InjectionResult | None:
        return self.main.last_result

    def selected_entry(self) -> Entry | None:
        return self.main.selected_entry()

    # ------------------------------------------------------------------ lifecycle
    @property
    def closing(self) -> bool:
        """The app is exiting: its message loop has stopped or its main screen is being
        removed (Textual removes the panes first, while messages are still handled)."""
        return not self.is_running or self.main.gone

    async def _on_message(self, message: Message) -> None:
        """Every worker's and the watcher's result (`messages.Result`) comes here first: one
        that arrives while the app closes is dropped, since its handler would look for panes
        and screens that are gone (the one place that guards them all)."""
        if isinstance(message, Result) and self.closing:
            log.debug("dropped %s: the app is closing", type(message).__name__)
            return
        await super()._on_message(message)

    def on_mount(self) -> None:
        self._size_class(self.size.width, self.size.height)
        self._update_subtitle()
        for problem in self.theme_problems:
            self.notify(escape_name(problem), title="Theme skipped", severity="warning", markup=False)
        self._unsubscribe = self.store.subscribe(lambda change: self.post_message(StoreChanged(change)))
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.set_interval(SETTINGS_POLL, self._check_settings)

    def on_resize(self, event: events.Resize) -> None:
        # the event's size: this handler runs before Textual's own, which updates `self.size`
        self._size_class(event.size.width, event.size.height)

    def _size_class(self, width: int, height: int) -> None:
        """`-small`: dialogs take the whole screen (app.tcss), open ones too; the same bound as
        the main screen's compact layout."""
        self.set_class(width < COMPACT_WIDTH or height < COMPACT_HEIGHT, "-small")

    def on_unmount(self) -> None:
        self._doctor.stop()
        if self.watcher is not None:
            self.watcher.stop()
        if self._unsubscribe:
            self._unsubscribe()
        self.store.close()

    def on_load(self) -> None:
        """Before the terminal is set up and the screen composed: the prepared index starts
        opening beside that (a warm one is open in a few tens of milliseconds, and the main
        screen's first frame then lists it)."""
        threading.Thread(target=self._open, name="memtui-open", daemon=True).start()

    def _open(self) -> None:
        """(In its thread) open the prepared index (`memtui preview`'s) and its panes' entries."""
        def building(layers: list[str]) -> None:
            self._opened_or_building.set()  # a first run: the main screen does not wait for it
            self.post_message(IndexBuilding(layers))

        try:
            prepared = open_prepared(self.paths, self.settings, building)
            self._opened = (prepared, {str(layer): prepared_entries(prepared.indexes[layer]) for layer in LAYERS})
        except Exception as exc:  # the index is derived: the store still loads
            log.warning("prepared index not opened: %s", exc)
        finally:
            self._opened_or_building.set()
            self._open_done.set()

    def show_prepared(self, wait: float = 0.0) -> bool:
        """List the prepared index in the main screen's panes once it is open (waiting up to
        `wait` seconds for it), unless it is listed already or the store has loaded."""
        if wait:
            self._opened_or_building.wait(wait)
        opened = self._opened
        if opened is None or self._opened_shown or self.loaded or not self.main.mounted:
            return False
        self._opened_shown = True
        self.prepared = opened[0]
        self._indexing = ""
        self._update_subtitle()
        self.main.prepared_opened(opened[1])
        self.ready.set()
        if self.findings is None and sum(index.size for index in self.prepared.indexes.values()) > DOCTOR_IN_PROCESS:
            # a large store's doctor runs in a child process, which reads the memories itself: it
            # starts now, on the machine's other core, not once the store has loaded behind the
            # first preview (what it read is compared with the store then: `_doctor_read`)
            self._early_doctor = True
            self.refresh_insights()
        return True

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_store(self) -> None:
        """(Once the main screen is mounted) show the prepared index when it has opened, then
        load the store behind it once the first preview is on screen (or after FIRST_PAINT_WAIT)."""
        prepared_ok = False
        try:
            self._open_done.wait()
            opened = self._opened
            if opened is not None:
                gc.freeze()  # what lives as long as the view: out of the collector's full passes
                prepared_ok = True
                prepared, entries = opened
                self.post_message(PreparedOpened(prepared, entries))  # (shown already if it opened in time)
                conversation = entries[Layer.CONVERSATION]
                del entries, opened
                self.first_paint.wait(FIRST_PAINT_WAIT)
                # the prepared index answers the preview (then and after): loading the store waits
                # for a pause in the typing, the first preview counting as a key (someone who
                # starts typing as it appears has the interpreter to themselves)
                self.last_typed = max(self.last_typed, time.monotonic())
                deadline = time.monotonic() + TYPING_WAIT
                while time.monotonic() < deadline and time.monotonic() - self.last_typed < TYPING_PAUSE:
                    time.sleep(0.05)
                row_gen = prepared.row_gen
                if row_gen is not None:  # the store takes the pane's conversation entries while no row moved
                    self.store.offer_conversation(conversation, row_gen)  # (made now, those not shown yet)
                del conversation
            self.store.load()
            if prepared_ok:  # the panes' order of the store's entries, found here rather than on the event loop
                self.main.order_ahead()
            # Tens of thousands of entries live as long as the app: keep them out of the cyclic
            # collector's full passes, which otherwise stall keystrokes for 100+ ms (they are still
            # freed by reference counting when a reload replaces them).
            gc.freeze()
            if self.watch_files:
                from memtui.core.watch import StoreWatcher  # (watchdog: once the store is loaded)

                self.watcher = StoreWatcher(self.store).start()
        finally:
            self._store_ready.set()
        self.post_message(StoreLoaded())

    def first_painted(self) -> None:
        """The first preview is on screen: the store may load, the collector runs again."""
        self.collector_on()
        self.first_paint.set()

    @staticmethod
    def collector_on() -> None:
        """The cyclic garbage collector back on after the start-up (`memtui` turns it off before
        it imports the app; a no-op when it is on): what start-up made lives as long as the app,
        so it is frozen first."""
        if not gc.isenabled():
            gc.freeze()
            gc.enable()

    def on_index_building(self, message: IndexBuilding) -> None:
        """A first run (or changed memories): the header says what is being read meanwhile."""
        self._indexing = ", ".join(LAYER_TITLES[layer].lower() for layer in message.layers)
        self._update_subtitle()

    def on_prepared_opened(self, _message: PreparedOpened) -> None:
        if self.main.is_attached:  # else the app is closing
            self.show_prepared()

    def on_store_loaded(self, _: StoreLoaded) -> None:
        self.collector_on()  # (on already, unless no preview could be painted)
        if not self.main.is_attached:  # the app is closing: nothing to show it in
            return
        self.loaded = True
        self.main.store_loaded()
        self.ready.set()
        if not self._early_doctor:
            self.call_after_refresh(self.refresh_insights)  # the doctor: after the panes are painted
        elif not self._insights_running and self._early_doctor_stale():
            self.refresh_insights()  # (a running early doctor is checked when its findings come in)
        self.refresh_inbox()
        problems = self.store.problems
        if problems:  # one short line; the doctor's screen (D) lists each file with its reason
            self.say(skipped_summary(problems), title="Skipped", severity="warning", timeout=5)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed says so instead of leaving the panes loading forever."""
        if event.state != WorkerState.ERROR or self.closing:
            return
        self.collector_on()
        error = event.worker.error
        self.say(f"{type(error).__name__}: {escape_name(str(error))}", title=f"{event.worker.group} failed",
                 severity="error", timeout=15)
        if event.worker.group == "load" and not self.loaded:
            self.loaded = True
            self.main.store_loaded()
            self.ready.set()

    def on_store_changed(self, message: StoreChanged) -> None:
        if not self.loaded:
            return
        self._changes += 1  # the next preview opens the prepared index again (what changed is taken in)
        self.main.store_changed(message.change.layers)
        self._check_edit_conflict()
        self.refresh_insights()
        self.refresh_inbox()

    # ------------------------------------------------------------------ the preview's index
    def preview_index(self) -> Prepared | None:
        """(In the preview's worker) the prepared index, opened again when the store changed
        since (what changed is taken in: an edited file spliced, new rows laid over), as
        `memtui preview` would open it now; None when there is none (the preview then answers
        from the store)."""
        if self.prepared is None or not self.paths.home.is_dir():
            return None
        with self._prepared_lock:
            wanted = self._changes
            if self._prepared_at != wanted:
                try:
                    self.prepared = open_prepared(self.paths, self.settings, lambda _layers: None)
                except Exception as exc:  # the index is derived: the store answers from now on
                    log.warning("prepared index not opened again: %s", exc)
                    self.prepared = None
                self._prepared_at = wanted
            return self.prepared

    def current_preview_index(self) -> Prepared | None:
        """(On the event loop) the prepared index if it is already up to date, without waiting:
        None when it is to be opened again first, or is being opened (the worker does that)."""
        if self.prepared is None or self._prepared_at != self._changes or not self.paths.home.is_dir():
            return None
        if not self._prepared_lock.acquire(blocking=False):  # a worker is opening it again
            return None
        try:
            return self.prepared if self._prepared_at == self._changes else None
        finally:
            self._prepared_lock.release()

    def prepared_damaged(self) -> None:
        """A section failed its checksum (its file is removed): open the index again next time."""
        with self._prepared_lock:
            self._prepared_at = -1

    def semantic_session(self) -> Any:
        if self._semantic is None:
            from memtui.core.retrieval import SemanticSession

            self._semantic = SemanticSession(self.paths.home)
        return self._semantic

    # ------------------------------------------------------------------ doctor + history
    def refresh_insights(self) -> None:
        """Run the doctor and read the injection history again, in a thread. Never two runs at
        once: changes during a run ask for one more run after it (a burst of changes costs two)."""
        if self._insights_running:
            self._insights_again = True
            return
        self._insights_running = True
        self._insights_again = False
        self.compute_insights()

    @work(thread=True, group="insights", exit_on_error=False)
    def compute_insights(self) -> None:
        read: tuple[Any, ...] | None = None  # what a child process read (None: this store, or unknown)
        ok = True
        try:
            if self.loaded and sum(len(self.store.snapshot(layer)) for layer in LAYERS) <= DOCTOR_IN_PROCESS:
                found: list[Finding] = findings(self.paths, store=self.store)  # the loaded store, not a reload
            else:  # in a child process at low priority: the panes and the preview keep the interpreter
                found, read = self._doctor.run(self.paths)
        except Exception as exc:  # a doctor that cannot read says so; the panes stay usable
            found = [Finding("invalid", display_path(self.paths.workspace), f"the doctor could not run: {exc}")]
            ok = False
        try:
            stats = (history.stats(self.paths.db_path, self.paths.workspace, by_target=True)
                     if self.paths.db_path.is_file() else {})
        except Exception:  # no history table yet, or a damaged database: nothing to show
            stats = {}
        self.post_message(InsightsReady(found, stats, read, ok))

    def _early_doctor_stale(self) -> bool:
        """(The store just loaded, the early doctor done) whether its findings must be found
        again: it failed, or what it read is not what the store read (a file or a row changed
        in between, before the watcher was there to say so), or nobody can tell; or it found
        the search index out of step, which the store's load has just brought in step."""
        self._early_doctor = False
        held = self.store.read_state()
        stale_index = any(f.kind == "index" for f in self.findings or ())
        return (not self._doctor_ok or stale_index or self._doctor_read is None or held is None
                or self._doctor_read != held)

    def on_insights_ready(self, message: InsightsReady) -> None:
        self._insights_running = False
        self._doctor_read, self._doctor_ok = message.read, message.ok
        self.findings = message.findings
        self.findings_by_entry = findings_by_entry(message.findings or [], self.store.entries)
        self.history = message.stats
        self.main.insights_changed()
        again = self._insights_again
        if self.loaded and self._early_doctor:
            again = self._early_doctor_stale() or again
        elif self.loaded and message.read is not None:  # a child's read against the store's; a change the
            held = self.store.read_state()  # watcher has not brought in yet asks for no run (its own change will)
            again = again or (held is not None and held != message.read)
        if again:
            self.refresh_insights()

    # ------------------------------------------------------------------ the inbox (SPEC §12)
    @work(thread=True, exclusive=True, group="inbox", exit_on_error=False)
    def refresh_inbox(self) -> None:
        """Read what awaits review (the store's entries against memtui's review table)."""
        try:
            items = actions.inbox(self.store)
        except actions.ActionError as exc:
            self.call_from_thread(self.say, escape_name(str(exc)), title="Inbox", severity="warning")
            items = []
        self.post_message(InboxReady(items))

    def on_inbox_ready(self, message: InboxReady) -> None:
        self.inbox = message.items
        self._update_subtitle()
        for screen in self.screen_stack:
            if isinstance(screen, screens.InboxScreen):
                screen.show(self.inbox)

    def accept_memories(self, entries: list[Entry]) -> None:
        self.write(lambda: EntriesAccepted(actions.accept(self.store, entries)), AcceptRefused)

    @on(EntriesAccepted)
    def _accepted(self, message: EntriesAccepted) -> None:
        accepted = message.entries
        if accepted:
            what = describe(accepted[0]) if len(accepted) == 1 else f"{len(accepted)} memories"
            self.say(f"Accepted {what}. Press u to undo.", title="Inbox")
        self.refresh_inbox()

    @on(AcceptRefused)
    def _accept_refused(self, message: AcceptRefused) -> None:
        self._refused(message.error, "Not accepted")
        self.refresh_inbox()

    def reject_memory(self, entry: Entry) -> None:
        def job() -> EntryRejected | None:
            change = actions.reject(self.store, [entry])
            return None if change is None else EntryRejected(entry, change)

        self.write(job, "Not rejected")

    @on(EntryRejected)
    def _rejected(self, message: EntryRejected) -> None:
        entry = message.entry
        self.say(f"Rejected and deleted {describe(entry)}: {sentence(snippet(entry.text))} Press u to undo.",
                 title="Inbox")

    def on_notify(self, _event: Notify) -> None:
        """(Before Textual adds the new toast.) Over a dialog it replaces the one shown;
        elsewhere at most TOASTS are shown, the oldest going first: never a stack of them."""
        shown = list(self._notifications)
        keep = 0 if isinstance(self.screen, ModalScreen) else TOASTS - 1
        for old in shown[:max(0, len(shown) - keep)]:
            self._unnotify(old, refresh=False)

    def say(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None) -> None:
        """A notification whose text is shown literally (it names entries and files)."""
        self.notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    # ------------------------------------------------------------------ settings and theme
    def _stat_settings(self) -> tuple[tuple[int, int, int] | None, ...]:
        stamp: list[tuple[int, int, int] | None] = []
        for path in (self.paths.global_settings, self.paths.workspace_settings):
            try:
                st = path.stat()
                stamp.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                stamp.append(None)
        return tuple(stamp)

    def _check_settings(self) -> None:
        """Settings changed elsewhere (`memtui disable` in another shell) show here too."""
        stamp = self._stat_settings()
        if stamp != self._settings_stamp:
            self.reload_settings()

    def reload_settings(self) -> None:
        self._settings_stamp = self._stat_settings()
        self.settings = load_settings(self.paths)
        self._changes += 1  # other line settings are another prepared index
        self._update_subtitle()
        self.main.schedule_preview()

    def _update_subtitle(self) -> None:
        state = "memory on" if self.settings.enabled else "memory OFF"
        demo = " · demo" if self.demo else ""
        waiting = f" · {len(self.inbox)} to review (i)" if self.inbox else ""
        indexing = f" · indexing {self._indexing} memories…" if self._indexing else ""
        private = private_label(self.settings)  # SPEC §18: and a refresh when it ends by itself
        timer = getattr(self, "_private_timer", None)
        if timer is not None:
            timer.stop()
        if private and self.settings.private_until is not None:
            state = f"{state} · {private}"
            self._private_timer = self.set_timer(max(0.1, self.settings.private_until - time.time()), self.reload_settings)
        self.sub_title = f"{escape_name(self.paths.workspace.name)} · {state}{demo}{waiting}{indexing}"

    def _theme_changed(self, theme: Theme) -> None:
        """A theme chosen in the command palette is remembered (the settings screen saves its own)."""
        if (not self.loaded or theme.name == self.settings.theme or theme.name == self._theme_override
                or isinstance(self.screen, screens.SettingsScreen)):
            return
        def job() -> ThemeRemembered:
            actions.save_theme(self.paths, theme.name)
            return ThemeRemembered(theme.name)

        self.write(job, f"Theme {theme.name} not remembered")

    # ------------------------------------------------------------------ writes
    @work(thread=True, exit_on_error=False, group="write")
    def write(self, job: Callable[[], Message | None],
              refused: str | Callable[[actions.ActionError], Message] = "Not saved") -> None:
        """Run one action off the event loop. `job` returns the typed message that says what
        happened (None: nothing to say); an `ActionError` becomes `refused(error)`, or a
        `WriteRefused` titled `refused`. The store's own change message refreshes the panes (once).
        A write asked for while the store is still loading waits for it."""
        self._store_ready.wait()
        try:
            outcome = job()
        except actions.ActionError as exc:
            outcome = WriteRefused(exc, refused) if isinstance(refused, str) else refused(exc)
        if outcome is not None:
            self.post_message(outcome)

    @on(WriteRefused)
    def _write_refused(self, message: WriteRefused) -> None:
        self._refused(message.error, message.title)

    def _refused(self, error: actions.ActionError, title: str = "Not saved") -> None:
        self.say(escape_name(str(error)), title=title, severity="error", timeout=10)

    # -- new
    def remember(self, text: str, layer: str) -> None:
        """Save `text` as a new memory in `layer` (in the worker); the pane selects it."""
        def job() -> Message | None:
            done = actions.remember(self.store, text, layer, check_enabled=False)
            if done.duplicate_of is not None:
                return AlreadyRemembered(done.duplicate_of, layer)
            return None if done.entry is None else EntryAdded(done.entry)

        self.write(job)

    @on(AlreadyRemembered)
    def _already_remembered(self, message: AlreadyRemembered) -> None:
        existing = message.existing
        self.main.select_after_reload(message.layer, existing.id)
        self.say(f"Already remembered in {describe(existing)}: {snippet(existing.text)}",
                 title="Not added", severity="warning", timeout=8)

    @on(EntryAdded)
    def _entry_added(self, message: EntryAdded) -> None:
        entry = message.entry
        self.main.select_after_reload(entry.layer, entry.id)
        if self.settings.enabled:
            self.say(f"Added to {describe(entry)}", title="Saved")
        else:
            self.say(f"Added to {describe(entry)}. Memory is off for this workspace: Muse won't use it "
                     "until you turn memory on (t).", title="Saved · memory off", severity="warning", timeout=8)

    # -- edit
    def edit_memory(self, entry: Entry | None, text: str | None = None, banner: str | None = None) -> None:
        """The editor on `entry` (with `text` in place of its own; `banner`: why saving it
        did not work the last time)."""
        if entry is None:
            self.say("Select a memory first.", severity="warning")
            return
        screen = screens.EditScreen(f"Edit · {describe(entry)}", entry.text if text is None else text, entry=entry)
        if banner:
            screen.mark_conflict(banner)
        self.push_screen(screen, lambda new: self.save_edit(entry, new))

    def save_edit(self, entry: Entry, text: str | None) -> None:
        if text is None or text.strip() == entry.text:
            return
        if not text.strip():
            self.say("A memory can't be empty; use d to delete it.", severity="error")
            return
        self.write(lambda: self._edit_job(entry, text))

    def _edit_job(self, entry: Entry, text: str) -> Message | None:
        """In the worker: save, or on a conflict reload that file and find the version on disk
        (and, when the file cannot be read now, why)."""
        current = self.store.get(entry.id) or entry  # same text, maybe moved by changes around it
        try:
            new = actions.edit(self.store, current, text)
        except actions.Conflict:
            self.store.reload(changed=[entry.path] if entry.path else None, conversation=entry.layer == Layer.CONVERSATION)
            problem = self.store.problem_of(entry.path) if entry.path else None
            return EditConflict(entry, text, actions.on_disk_now(self.store, entry),
                                problem.message if problem else None)
        return None if new is None else EntryEdited(new)

    @on(EntryEdited)
    def _entry_edited(self, message: EntryEdited) -> None:
        new = message.entry
        self.main.select_after_reload(new.layer, new.id)
        self.say(f"Saved {describe(new)}", title="Saved")

    @on(EditConflict)
    def _edit_conflict(self, message: EditConflict) -> None:
        self.resolve_conflict(message.entry, message.mine, message.theirs, message.unreadable)

    def resolve_conflict(self, entry: Entry, mine: str, theirs: Entry | None, unreadable: str | None = None) -> None:
        """Ask what to keep. When the entry's file cannot be read now, nothing can be saved in
        it: "keep mine" goes back to the editor with the text and the reason; only "save as
        new" (which names its file) writes elsewhere."""
        new_file = "muse.db" if entry.layer == Layer.CONVERSATION else display_path(self.paths.default_file(entry.layer).name)
        file = where(entry).rsplit(":", 1)[0]
        reason = (unreadable or "").split("; skipped")[0]  # what is wrong, without what memtui does about it
        why = f"{file} can't be read now ({reason})"
        if unreadable:
            message = f"{describe(entry)} was changed on disk, and {file} can no longer be read. "
        else:
            message = f"{describe(entry)} was changed by someone else since you opened it. "
        message += f"Save as new adds your text to {new_file}."

        def chosen(choice: str | None) -> None:
            if unreadable and choice in ("mine", "edit"):
                if choice == "mine":
                    self.say(f"Not saved: {why}. Your text is still in the editor.", title="Not saved",
                             severity="warning", timeout=10)
                self.edit_memory(entry, mine, banner=f"Not saved: {why}. Fix the file and save again, or save "
                                                     "and choose Save as new (a).")
            elif choice == "mine":
                if theirs is None:
                    self.remember(mine, entry.layer)
                else:
                    self.save_edit(theirs, mine)
            elif choice == "new":
                self.remember(mine, entry.layer)
            elif choice == "edit":
                self.edit_memory(theirs or entry, mine) if theirs else self.new_after_conflict(entry.layer, mine)
            else:
                self.say("Kept the version on disk; your edit was discarded.", title="Not saved")

        self.push_screen(screens.ConflictScreen(message, mine, theirs.text if theirs else None,
                                                gone=f"{file} can't be read now: {reason}" if unreadable else None),
                         chosen)

    def new_after_conflict(self, layer: str, text: str) -> None:
        def done(new: str | None) -> None:
            if new is not None and new.strip():
                self.remember(new, layer)

        self.push_screen(screens.EditScreen(f"New {LAYER_TITLES[layer].lower()} memory (the original is gone)", text,
                                    layer=layer), done)

    def _check_edit_conflict(self) -> None:
        """An entry's id holds while its text does: a vanished id means the entry itself changed
        on disk (changes elsewhere in its file are no conflict: the splice keeps them)."""
        screen = self.screen
        if (isinstance(screen, screens.EditScreen) and screen.entry is not None and not screen.conflict
                and self.store.get(screen.entry.id) is None):
            problem = self.store.problem_of(screen.entry.path) if screen.entry.path else None
            screen.mark_conflict(f"{where(screen.entry).rsplit(':', 1)[0]} can't be read now ({problem.message}). "
                                 "Saving will ask what to keep." if problem else
                                 "This memory changed on disk. Saving will ask what to keep.")

    # -- delete
    @on(DeleteAsked)
    def _delete_asked(self, message: DeleteAsked) -> None:
        entry, plan = message.entry, message.plan
        warning = actions.delete_warning(plan)
        body = Text.assemble(("This memory will be deleted:\n\n", ""), (snippet(entry.text, 400), "bold"),
                             (f"\n\nfrom {describe(entry)}. You can undo with u.", "dim"))
        if warning:
            body.append(f"\n\n⚠ {escape_name(warning)}", style="bold")

        def answer(yes: bool | None) -> None:
            if yes:
                self.write(lambda: self._delete_job(entry, plan), "Not deleted")

        self.push_screen(screens.ConfirmScreen("Delete memory?", body), answer)

    def _delete_job(self, entry: Entry, plan: PlannedDelete) -> EntryDeleted | None:
        change = actions.delete(self.store, plan)
        return None if change is None else EntryDeleted(entry, change)

    @on(ContradictionSettled)
    def _contradiction_settled(self, message: ContradictionSettled) -> None:
        self.say(message.said, title="Contradiction")
        self.refresh_insights()  # a pair kept apart changes no memory: the doctor is asked again

    @on(EntryDeleted)
    def _entry_deleted(self, message: EntryDeleted) -> None:
        entry = message.entry
        self.say(f"Deleted {describe(entry)}: {sentence(snippet(entry.text))} Press u to undo.", title="Deleted")

    # -- undo
    def undo_last(self) -> None:
        def job() -> ChangeUndone:
            pending = actions.undo_preview(self.store)
            if pending is None:
                raise actions.NotFound("Nothing to undo.")
            return ChangeUndone(actions.undo(self.store, pending.id))

        def refused(error: actions.ActionError) -> Message:
            return NothingToUndo(str(error)) if isinstance(error, actions.NotFound) else WriteRefused(error, "Cannot undo")

        self.write(job, refused)

    @on(NothingToUndo)
    def _nothing_to_undo(self, message: NothingToUndo) -> None:
        self.say(message.reason, title="Undo")

    @on(ChangeUndone)
    def _change_undone(self, message: ChangeUndone) -> None:
        self.say(f"Undone: {escape_name(message.change.summary)}", title="Undo", timeout=8)
        if message.change.reviews:  # an accept: its entries await review again (no memory changed)
            self.refresh_inbox()
        if message.change.action == "keep_both":  # a pair kept apart: the doctor reports it again
            self.refresh_insights()

    @on(UndoLogRead)
    def _undo_log_read(self, message: UndoLogRead) -> None:
        self.push_screen(screens.UndoLogScreen(message.changes, message.pending_id))

    # -- settings
    @on(SwitchRefused)
    def _switch_refused(self, message: SwitchRefused) -> None:
        self.say(f"Memory is still {'off' if message.wanted else 'on'}: {escape_name(str(message.error))}",
                 title="Switch not saved", severity="error", timeout=10)

    @on(MemorySwitched)
    def _memory_switched(self, message: MemorySwitched) -> None:
        self.reload_settings()
        self.say(f"Memory {'on' if self.settings.enabled else 'off'} for this workspace "
                 f"(saved in {display_path(message.path)})", title="Memory")

    @on(SettingsRefused)
    def _settings_refused(self, message: SettingsRefused) -> None:
        self._refused(message.error, "Settings not saved")
        self.theme = self.settings.theme if self.settings.theme in self.available_themes else self.theme

    @on(SettingsSaved)
    def _settings_saved(self, message: SettingsSaved) -> None:
        self.reload_settings()
        self.theme = message.theme
        self.say("Settings saved.", title="Settings")

    @on(ThemeRemembered)
    def _theme_remembered(self, _message: ThemeRemembered) -> None:
        self.reload_settings()

    @on(StoreReloaded)
    def _store_reloaded(self, message: StoreReloaded) -> None:
        counts = message.counts
        shown = ", ".join(f"{counts[layer]['total']} {layer}" for layer in counts)
        problems = len(self.store.problems)
        extra = f"; {problems} file{'s' if problems != 1 else ''} skipped (see D)" if problems else ""
        self.say(f"Reloaded: {shown} memories{extra}.", title="Reload", timeout=4)

    # ------------------------------------------------------------------ help + palette
    def help_rows(self) -> list[tuple[str, str]]:
        names = {"question_mark": "?", "slash": "/", "escape": "esc"}
        longer = {"cycle_order": "Sort each pane: file order → most injected → last injected",
                  "findings": "Doctor's findings: stale paths, duplicates, unreachable, never injected, invalid",
                  "inbox": "Inbox: what the assistant learned, to accept (a; A: all), edit (e) or reject (x); u undoes",
                  "reload": "Reload every memory file, the database and the settings",
                  "undo_log": "Undo log: memtui's changes, newest first",
                  "pin": "Pin or unpin the selected memory: a pinned one does not decay (u undoes it)",
                  "forecast": "Forecast: the memories whose level changes or that expire within 7 days",
                  "toggle_private": "Private mode on for an hour, or off: nothing is injected or recorded meanwhile",
                  "open_detail": "On a small terminal (the detail view hidden): the selected memory in full, "
                                 "with its fields and the doctor's reasons"}
        rows = [(names.get(b.key, b.key), longer.get(b.action, b.description))
                for b in MainScreen.BINDINGS if isinstance(b, Binding)]
        rows += [("↑/↓ j/k, pgup/pgdn", "Move in a pane"),
                 ("tab / shift+tab", "Move between panes and inputs"),
                 ("enter (on the fold)", "Expand or collapse the injected text (also f)"),
                 ("enter (on a reason)", "List the memories left out for that reason"),
                 ("ctrl+t (in the preview)", "Show the injection as Claude Code, Codex or Gemini CLI receives it "
                                             "(cut to what each keeps), then as Muse's own again"),
                 ("ctrl+s (in dialogs)", "Save"), ("ctrl+p", "Command palette (themes are remembered)")]
        return rows

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if not isinstance(screen, MainScreen):
            return
        main = self.main
        yield SystemCommand("New memory", "Create a memory in the focused layer", main.action_new)
        yield SystemCommand("Edit memory", "Edit the selected memory in place", main.action_edit)
        yield SystemCommand("Edit in $EDITOR", "Edit the selected memory in your editor", main.action_edit_external)
        yield SystemCommand("Delete memory", "Delete the selected memory (asks first)", main.action_delete)
        yield SystemCommand("Undo", "Undo the last change (says which)", main.action_undo)
        yield SystemCommand("Undo log", "memtui's changes, newest first", main.action_undo_log)
        yield SystemCommand("Inbox", "Review what the assistant learned: accept, edit or reject", main.action_inbox)
        yield SystemCommand("Toggle memory", "Turn memory on or off for this workspace", main.action_toggle_memory)
        yield SystemCommand("Settings", "Budgets, gates, switches and theme", main.action_settings)
        yield SystemCommand("Preview injection", "Type a message and see what would be injected", main.action_focus_query)
        yield SystemCommand("Filter memories", "Fuzzy filter over all layers", main.action_focus_filter)
        yield SystemCommand("Doctor findings", "Stale paths, duplicates, unreachable and never-injected memories",
                            main.action_findings)
        yield SystemCommand("Sort by injection history", "Cycle file order / most injected / last injected",
                            main.action_cycle_order)
        yield SystemCommand("Reload", "Re-read every memory file, the database and the settings", main.action_reload)


def run(paths: Paths, demo: bool = False) -> None:
    MemtuiApp(paths, demo=demo).run()
