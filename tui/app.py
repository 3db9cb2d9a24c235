"""The memtui App: the services and the configuration the screens use (the store, its start,
the preview's index, the doctor's findings, the inbox, settings and themes) and the one
write worker; the main screen owns what the user does and sees (results come to it as
messages, and bubble on to the app for what it holds)."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from textual import events, on, work
from textual.app import App, ScreenStackError, SystemCommand
from textual.message import Message
from textual.notifications import Notify
from textual.screen import ModalScreen, Screen
from textual.theme import Theme
from textual.worker import Worker, WorkerState

from memtui.core import actions, review
from memtui.core.display import display_path, escape_name
from memtui.core.finding_set import FindingIndex, FoundSet
from memtui.core.injection import InjectionResult
from memtui.core.model import Entry
from memtui.core.paths import Paths
from memtui.core.settings import load_settings
from memtui.core.store import MemoryStore
from memtui.core.store.prepared import Prepared
from memtui.themes import load_themes

from . import screens
from .commands import system_commands
from .findings import Insights
from .forgetting import private_label
from .main_screen import COMPACT_HEIGHT, COMPACT_WIDTH, MainScreen
from .messages import (
    AcceptRefused,
    ChangeUndone,
    ContradictionSettled,
    EntriesAccepted,
    InboxReady,
    IndexBuilding,
    InsightsReady,
    MemorySwitched,
    PreparedOpened,
    Result,
    SettingsRefused,
    SettingsSaved,
    StoreChanged,
    StoreLoaded,
    SwitchRefused,
    ThemeRemembered,
    WriteRefused,
)
from .startup import PreviewIndex, StartUp, Tuning
from .text import LAYER_TITLES, skipped_summary

log = logging.getLogger("memtui.tui")

SETTINGS_POLL = 0.5  # seconds between stats of the two settings files (changed by `memtui disable` elsewhere)
TOASTS = 2  # shown at once over the main screen (over a dialog: one)


class MemtuiApp(App[None]):
    """The App: the store and its start (`StartUp`), themes, the settings watch, the one
    write worker (none runs on the event loop), the doctor's and the inbox's workers, the one
    handler of a failed worker; each store change refreshes the panes once."""

    CSS_PATH = "app.tcss"
    TITLE = "memtui"

    def __init__(self, paths: Paths, demo: bool = False, watch: bool = True, theme: str | None = None,
                 tuning: Tuning = Tuning()) -> None:
        """`theme` overrides the remembered one for this run (screenshots, tests); not saved.
        `tuning`: the start's waits and the thresholds between a small store and a large one."""
        super().__init__()
        self.paths = paths
        self.demo = demo
        self.tuning = tuning
        self.store = MemoryStore(paths, index=paths.home.is_dir())  # no Muse home yet: create nothing
        self.settings = load_settings(paths)
        self._settings_stamp = self._stat_settings()
        self.preview = PreviewIndex(paths, lambda: self.settings)  # the prepared index the preview answers from
        self.startup = StartUp(self, tuning, watch)
        self._semantic: Any = None  # §13: the model and its vector cache, once hybrid retrieval asked for them
        self._indexing = ""  # the layers whose prepared index is being built (shown in the header)
        self._unsubscribe: Callable[[], None] | None = None
        themes, self.theme_problems = load_themes()
        for found in themes:
            self.register_theme(found)
        self.theme_names = [t.name for t in themes] + ["textual-dark", "textual-light", "nord", "gruvbox"]
        wanted = theme or self.settings.theme
        self.theme = wanted if wanted in self.available_themes else "memtui-dark"
        self._theme_override = theme
        self.insights = Insights(self)  # the doctor's findings and the injection history
        self.inbox: Sequence[review.Pending] | None = None  # awaiting review (SPEC §12), newest first; None: not read yet
        self.main = MainScreen(tuning)

    def get_default_screen(self) -> MainScreen:
        return self.main

    # ------------------------------------------------------------------ the start's and the main screen's state
    @property
    def loaded(self) -> bool:
        """The store has loaded (until then the panes list the prepared index)."""
        return self.startup.loaded

    @property
    def ready(self) -> asyncio.Event:
        """Set once the panes are populated."""
        return self.main.ready

    @property
    def prepared(self) -> Prepared | None:
        return self.preview.prepared

    @property
    def findings(self) -> FoundSet | None:
        return self.insights.findings

    @property
    def findings_by_entry(self) -> FindingIndex:
        return self.insights.by_entry

    @property
    def history(self) -> dict[str, tuple[Any, ...]]:
        return self.insights.history

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

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """The palette's screenshot (SVG): into the Downloads folder where there is one, else
        the home folder (Textual's own only tries Downloads, and says no more than that it failed)."""
        if path is None:
            from platformdirs import user_downloads_path

            downloads = user_downloads_path()
            path = str(downloads if downloads.is_dir() else Path.home())
        super().action_screenshot(filename, path)

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
        self.insights.stop()
        self.startup.stop()
        if self._unsubscribe:
            self._unsubscribe()
        self.store.close()
        gc.unfreeze()  # what the start froze goes back to the collector (a test process runs many apps)

    def on_load(self) -> None:
        """Before the terminal is set up and the screen composed: the start begins (the
        prepared index opens beside that)."""
        self.startup.begin()

    def on_index_building(self, message: IndexBuilding) -> None:
        """A first run (or changed memories): the header says what is being read meanwhile."""
        self._indexing = ", ".join(LAYER_TITLES[layer].lower() for layer in message.layers)
        self._update_subtitle()

    def on_prepared_opened(self, message: PreparedOpened) -> None:
        """(After the main screen listed it) the header, and a large store's early doctor."""
        self._indexing = ""
        self._update_subtitle()
        prepared = self.preview.prepared
        if message.opened is not None and prepared is not None and not self.loaded:
            self.insights.early(sum(index.size for index in prepared.indexes.values()))

    def on_store_loaded(self, message: StoreLoaded) -> None:
        """(After the main screen listed the store) the doctor, the inbox, the files skipped;
        after a failed load none of them (they would read an empty store as a healthy one)."""
        if not message.ok:
            return
        self.insights.loaded()
        self.refresh_inbox()
        problems = self.store.problems
        if problems:  # one short line; the doctor's screen (D) lists each file with its reason
            self.say(skipped_summary(problems), title="Skipped", severity="warning", timeout=5)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed says so instead of leaving the panes loading forever."""
        if event.state != WorkerState.ERROR or self.closing:
            return
        error = event.worker.error
        self.say(f"{type(error).__name__}: {escape_name(str(error))}", title=f"{event.worker.group} failed",
                 severity="error", timeout=15)

    def on_store_changed(self, message: StoreChanged) -> None:
        if not self.loaded:
            return
        self.preview.changed()  # the next preview opens the prepared index again (what changed is taken in)
        self.main.store_changed(message.change.layers)
        self.refresh_insights()
        self.refresh_inbox()

    def semantic_session(self) -> Any:
        if self._semantic is None:
            from memtui.core.retrieval import SemanticSession

            self._semantic = SemanticSession(self.paths.home)
        return self._semantic

    def refresh_insights(self) -> None:
        self.insights.refresh()

    def on_insights_ready(self, message: InsightsReady) -> None:
        self.insights.ready(message)
        self.main.insights_changed()

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

    # ------------------------------------------------------------------ what a write changed (after the main screen said it)
    @on(EntriesAccepted)
    def _accepted(self) -> None:
        self.refresh_inbox()

    @on(AcceptRefused)
    def _accept_refused(self, message: AcceptRefused) -> None:
        self._refused(message.error, "Not accepted")
        self.refresh_inbox()

    @on(ContradictionSettled)
    def _contradiction_settled(self) -> None:
        self.refresh_insights()  # a pair kept apart changes no memory: the doctor is asked again

    @on(ChangeUndone)
    def _change_undone(self, message: ChangeUndone) -> None:
        if message.change.reviews:  # an accept: its entries await review again (no memory changed)
            self.refresh_inbox()
        if message.change.action == "keep_both":  # a pair kept apart: the doctor reports it again
            self.refresh_insights()

    def on_notify(self, _event: Notify) -> None:
        """(Before Textual adds the new toast.) Over a dialog it replaces the one shown;
        elsewhere at most TOASTS are shown, the oldest going first: never a stack of them."""
        try:
            keep = 0 if isinstance(self.screen, ModalScreen) else TOASTS - 1
        except ScreenStackError:  # the app is closing: no screen left to show it on
            return
        shown = list(self._notifications)
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
        self.preview.changed()  # other line settings are another prepared index
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
    @work(exit_on_error=False, group="write")
    async def write(self, job: Callable[[], Message | None],
              refused: str | Callable[[actions.ActionError], Message] = "Not saved") -> None:
        """Run one action off the event loop. `job` returns the typed message that says what
        happened (None: nothing to say); an `ActionError` becomes `refused(error)`, or a
        `WriteRefused` titled `refused`. The store's own change message refreshes the panes (once).
        A write asked for while the store is still loading waits for it."""
        await self.startup.until_loaded()
        try:
            outcome = await asyncio.to_thread(job)
        except actions.ActionError as exc:
            outcome = WriteRefused(exc, refused) if isinstance(refused, str) else refused(exc)
        if outcome is not None:
            self.main.post_message(outcome)  # (said there, then bubbles up here)

    @on(WriteRefused)
    def _write_refused(self, message: WriteRefused) -> None:
        self._refused(message.error, message.title)

    def _refused(self, error: actions.ActionError, title: str = "Not saved") -> None:
        self.say(escape_name(str(error)), title=title, severity="error", timeout=10)

    # ------------------------------------------------------------------ settings
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

    # ------------------------------------------------------------------ the palette
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, MainScreen):
            yield from system_commands(screen)


def run(paths: Paths, demo: bool = False) -> None:
    MemtuiApp(paths, demo=demo).run()
