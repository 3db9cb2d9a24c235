"""The memtui app: three layer panes, detail, the injection preview, settings, live reload."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

from rapidfuzz import fuzz, process
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, Input
from textual.worker import Worker, WorkerState, get_current_worker

from memtui.core import actions
from memtui.core.injection import InjectionResult, inject_from_store
from memtui.core.model import Entry
from memtui.core.paths import LAYERS, Paths
from memtui.core.settings import load_settings
from memtui.core.store import MemoryStore
from memtui.core.watch import StoreWatcher
from memtui.themes import load_themes

from .messages import PreviewReady, StoreChanged, StoreLoaded
from .screens import ConfirmScreen, ConflictScreen, EditScreen, HelpScreen, SettingsChoice, SettingsScreen, describe
from .widgets import DetailView, EntryPane, PreviewPane

FILTER_CUTOFF = 60.0


class MemtuiApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "memtui"

    BINDINGS = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("slash", "focus_filter", "Filter", id="app.filter"),
        Binding("p", "focus_query", "Preview", id="app.preview"),
        Binding("n", "new", "New", id="app.new"),
        Binding("e", "edit", "Edit", id="app.edit"),
        Binding("E", "edit_external", "$EDITOR", id="app.edit_external"),
        Binding("d", "delete", "Delete", id="app.delete"),
        Binding("u", "undo", "Undo", id="app.undo"),
        Binding("f", "toggle_fold", "Fold", id="app.fold"),
        Binding("t", "toggle_memory", "On/off", id="app.toggle"),
        Binding("s", "settings", "Settings", id="app.settings"),
        Binding("1", "focus_pane('user')", "User", show=False, id="app.pane_user"),
        Binding("2", "focus_pane('project')", "Project", show=False, id="app.pane_project"),
        Binding("3", "focus_pane('conversation')", "Conversation", show=False, id="app.pane_conversation"),
        Binding("r", "reload", "Reload", show=False, id="app.reload"),
        Binding("escape", "leave_input", "Back", show=False, id="app.back"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(self, paths: Paths, demo: bool = False, watch: bool = True) -> None:
        super().__init__()
        self.paths = paths
        self.demo = demo
        self.watch_files = watch
        self.store = MemoryStore(paths, index=paths.home.is_dir())  # no Muse home yet: create nothing
        self.settings = load_settings(paths)
        self.watcher: StoreWatcher | None = None
        self.loaded = False
        self.filter_text = ""
        self.query_text = ""
        self.last_result: InjectionResult | None = None
        self._generation = 0
        self._last_layer = "user"
        self._choices: dict[str, tuple[tuple[Entry, ...], list[str]]] = {}  # filter strings per layer snapshot
        self._filter_generation = 0
        self.store_changes = 0  # refreshes after a store change (the benchmark watches it)
        self.ready = asyncio.Event()  # set once the panes are populated
        self._unsubscribe = None
        themes, self.theme_problems = load_themes()
        for theme in themes:
            self.register_theme(theme)
        self.theme_names = [t.name for t in themes] + ["textual-dark", "textual-light", "nord", "gruvbox"]
        self.theme = self.settings.theme if self.settings.theme in self.available_themes else "memtui-dark"

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder="/ filter all layers (fuzzy)…", id="filter", compact=True)
                for layer in LAYERS:
                    yield EntryPane(layer)
            with Vertical(id="right"):
                yield DetailView(id="detail")
                yield PreviewPane(id="preview")
        yield Footer()

    def on_mount(self) -> None:
        self.main = self.screen  # the three panes, detail and preview live here, under any dialog
        self._update_subtitle()
        for pane in self.main.query(EntryPane):
            pane.loading = True
        for problem in self.theme_problems:
            self.notify(problem, title="Theme skipped", severity="warning")
        self._unsubscribe = self.store.subscribe(lambda change: self.post_message(StoreChanged(change)))
        self.load_store()

    def on_unmount(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        if self._unsubscribe:
            self._unsubscribe()
        self.store.close()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_store(self) -> None:
        self.store.load()
        if self.watch_files:
            self.watcher = StoreWatcher(self.store).start()
        self.post_message(StoreLoaded())

    def on_store_loaded(self, _: StoreLoaded) -> None:
        self.loaded = True
        for pane in self.main.query(EntryPane):
            pane.loading = False
        self.refresh_panes()
        self.main.query_one("#pane-user", EntryPane).focus()
        self.ready.set()
        self.schedule_preview()
        problems = self.store.problems
        if problems:
            first = problems[0]
            more = f" (+{len(problems) - 1} more; see `memtui status`)" if len(problems) > 1 else ""
            self.notify(f"{first.source}: {first.message}{more}", title="Skipped", severity="warning", timeout=8)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed says so instead of leaving the panes loading forever."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        self.notify(f"{type(error).__name__}: {error}", title=f"{event.worker.group} failed", severity="error",
                    timeout=15)
        if event.worker.group == "load" and not self.loaded:
            self.loaded = True
            for pane in self.main.query(EntryPane):
                pane.loading = False
            self.ready.set()

    def on_store_changed(self, message: StoreChanged) -> None:
        if not self.loaded:
            return
        self.store_changes += 1
        self.refresh_panes(message.change.layers)
        self.schedule_preview()
        self._check_edit_conflict()

    def _update_subtitle(self) -> None:
        state = "memory on" if self.settings.enabled else "memory OFF"
        demo = " · demo" if self.demo else ""
        self.sub_title = f"{self.paths.workspace.name} · {state}{demo}"

    # ------------------------------------------------------------------ panes
    def filtered(self, layer: str, text: str) -> tuple[list[Entry], int]:
        """The layer's entries matching `text` (rapidfuzz WRatio), best first; all when empty.
        Thread-safe: the filter runs in a worker so typing never waits for it."""
        snapshot = self.store.snapshot(layer)
        if not text.strip():
            return list(snapshot), len(snapshot)
        cached = self._choices.get(layer)
        if cached is None or cached[0] is not snapshot:
            choices = [f"{e.text} {e.section} {' '.join(e.tags)} {e.conversation_title}".casefold() for e in snapshot]
            cached = (snapshot, choices)
            self._choices[layer] = cached
        hits = process.extract(text.casefold(), cached[1], scorer=fuzz.WRatio, processor=None,
                               score_cutoff=FILTER_CUTOFF, limit=None)
        hits.sort(key=lambda h: (-h[1], h[2]))
        return [snapshot[h[2]] for h in hits], len(snapshot)

    def refresh_panes(self, layers: Iterable[str] | None = None, keep: dict[str, str] | None = None) -> None:
        """Re-list the entries of `layers` (default: all), keeping each pane's selection (or
        moving it to `keep[layer]`, an entry id)."""
        layers = tuple(LAYERS if layers is None else layers)
        self._filter_generation += 1
        if self.filter_text.strip():
            self.filter_panes(self.filter_text, layers, keep or {}, self._filter_generation)
            return
        self._show_panes({layer: self.filtered(layer, "") for layer in layers}, keep or {})

    def _show_panes(self, results: dict[str, tuple[list[Entry], int]], keep: dict[str, str]) -> None:
        for pane in self.main.query(EntryPane):
            if pane.memory_layer in results:
                shown, total = results[pane.memory_layer]
                pane.show(shown, total, keep=keep.get(pane.memory_layer))
        self.show_detail()

    @work(thread=True, exclusive=True, group="filter", exit_on_error=False)
    def filter_panes(self, text: str, layers: tuple[str, ...], keep: dict[str, str], generation: int) -> None:
        results = {layer: self.filtered(layer, text) for layer in layers}
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._filtered_ready, results, keep, generation)

    def _filtered_ready(self, results: dict[str, tuple[list[Entry], int]], keep: dict[str, str], generation: int) -> None:
        if generation == self._filter_generation:  # a newer filter or reload is on its way otherwise
            self._show_panes(results, keep)

    @on(Input.Changed, "#filter")
    def filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        if self.loaded:
            self.refresh_panes()

    @on(EntryPane.Highlighted)
    def highlighted(self, event: EntryPane.Highlighted) -> None:
        if event.pane.has_focus:
            self._last_layer = event.pane.memory_layer
        self.show_detail()

    def on_descendant_focus(self, event) -> None:
        if isinstance(event.widget, EntryPane) and self.is_running:
            self._last_layer = event.widget.memory_layer
            self.show_detail()

    def current_pane(self) -> EntryPane:
        return self.main.query_one(f"#pane-{self._last_layer}", EntryPane)

    def selected_entry(self) -> Entry | None:
        return self.current_pane().highlighted_entry

    def show_detail(self) -> None:
        try:
            self.main.query_one(DetailView).show(self.selected_entry())
        except NoMatches:  # the screen is being torn down
            pass

    # ------------------------------------------------------------------ preview
    @on(Input.Changed, "#query")
    def query_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value
        self.schedule_preview()

    def schedule_preview(self) -> None:
        if not self.loaded:
            return
        self._generation += 1
        self.compute_preview(self.query_text, self._generation)

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def compute_preview(self, query: str, generation: int) -> None:
        result = inject_from_store(self.store, self.settings, query)
        result.status_counts()  # counted here, off the event loop (the pane shows them)
        if not get_current_worker().is_cancelled:
            self.post_message(PreviewReady(query, result, generation))

    def on_preview_ready(self, message: PreviewReady) -> None:
        if message.generation != self._generation:
            return  # a newer query is on its way
        self.last_result = message.result
        try:
            self.main.query_one(PreviewPane).show(message.result)
        except NoMatches:  # the screen is being torn down
            pass

    def action_toggle_fold(self) -> None:
        fold = self.main.query_one("#fold")
        fold.collapsed = not fold.collapsed

    # ------------------------------------------------------------------ focus
    def action_focus_filter(self) -> None:
        self.main.query_one("#filter", Input).focus()

    def action_focus_query(self) -> None:
        self.main.query_one("#query", Input).focus()

    def action_focus_pane(self, layer: str) -> None:
        self._last_layer = layer
        self.main.query_one(f"#pane-{layer}", EntryPane).focus()

    def action_leave_input(self) -> None:
        if isinstance(self.focused, Input):
            self.current_pane().focus()

    def action_reload(self) -> None:
        self.settings = load_settings(self.paths)
        self._update_subtitle()
        self.run_worker(lambda: self.store.reload(full=True), thread=True, group="reload", exclusive=True)
        self.schedule_preview()

    # ------------------------------------------------------------------ create / edit / delete / undo
    def _guard(self, func, *args, **kwargs):
        """Run an action; a conflict is returned for the caller to resolve, any other
        refusal becomes a clear notification."""
        try:
            return func(*args, **kwargs), None
        except actions.Conflict as exc:
            return None, exc
        except actions.ActionError as exc:
            self.notify(str(exc), title="Not saved", severity="error", timeout=8)
            return None, None

    def action_new(self) -> None:
        layer = self._last_layer
        target = self.paths.default_file(layer).name if layer != "conversation" else "muse.db"

        def done(text: str | None) -> None:
            if text is None or not text.strip():
                return
            done, conflict = self._guard(actions.remember, self.store, text, layer, check_enabled=False)
            if conflict:
                self.notify(str(conflict), title="Not saved", severity="error", timeout=8)
            elif done and done.duplicate_of is not None:
                self.refresh_panes([layer], keep={layer: done.duplicate_of.id})
                self.notify(f"Already remembered in {describe(done.duplicate_of)}", title="Not added")
            elif done and done.entry:
                self.refresh_panes([layer], keep={layer: done.entry.id})
                self.notify(f"Added to {describe(done.entry)}", title="Saved")

        self.push_screen(EditScreen(f"New {layer} memory → {target}"), done)

    def action_edit(self) -> None:
        entry = self.selected_entry()
        if entry is None:
            self.notify("Select a memory first.", severity="warning")
            return
        self.push_screen(EditScreen(f"Edit · {describe(entry)}", entry.text, entry=entry),
                         lambda text: self._save_edit(entry, text))

    def _save_edit(self, entry: Entry, text: str | None) -> None:
        if text is None or text.strip() == entry.text:
            return
        if not text.strip():
            self.notify("A memory can't be empty; use d to delete it.", severity="error")
            return
        entry = self.store.get(entry.id) or entry  # same text, maybe moved by changes around it
        new, conflict = self._guard(actions.edit, self.store, entry, text)
        if conflict is not None:
            self._resolve_conflict(entry, text, f"{describe(entry)} was changed by someone else since you opened it.")
        elif new is not None:
            self.refresh_panes([new.layer], keep={new.layer: new.id})
            self.notify(f"Saved {describe(new)}", title="Saved")

    def _current_version(self, entry: Entry) -> Entry | None:
        same = self.store.get(entry.id)
        if same is not None:
            return same
        if entry.layer == "conversation":
            return None
        return next((e for e in self.store.entries(entry.layer)
                     if e.path == entry.path and e.line_start == entry.line_start), None)

    def _resolve_conflict(self, entry: Entry, mine: str, message: str) -> None:
        self.store.reload(changed=[entry.path] if entry.path else None, conversation=entry.layer == "conversation")
        theirs = self._current_version(entry)

        def chosen(choice: str | None) -> None:
            if choice == "mine":
                current = self._current_version(entry)
                if current is None:
                    self._save_new(entry.layer, mine)
                else:
                    self._save_edit(current, mine)
            elif choice == "new":
                self._save_new(entry.layer, mine)
            else:
                self.notify("Kept the version on disk; your edit was discarded.", title="Not saved")

        self.push_screen(ConflictScreen(message, theirs.text if theirs else None), chosen)

    def _save_new(self, layer: str, text: str) -> None:
        done, conflict = self._guard(actions.remember, self.store, text, layer, check_enabled=False)
        if conflict:
            self.notify(str(conflict), title="Not saved", severity="error", timeout=8)
        elif done and done.duplicate_of is not None:
            self.notify(f"Already remembered in {describe(done.duplicate_of)}", title="Not added")
        elif done and done.entry:
            self.notify(f"Saved as a new memory: {describe(done.entry)}", title="Saved")

    def _check_edit_conflict(self) -> None:
        """An entry's id holds while its text does: a vanished id means the entry itself changed
        on disk (changes elsewhere in its file are no conflict: the splice keeps them)."""
        screen = self.screen
        if isinstance(screen, EditScreen) and screen.entry is not None and not screen.conflict:
            if self.store.get(screen.entry.id) is None:
                screen.mark_conflict("This memory changed on disk. Saving will ask what to keep.")

    def action_edit_external(self) -> None:
        entry = self.selected_entry()
        if entry is None:
            self.notify("Select a memory first.", severity="warning")
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        with tempfile.NamedTemporaryFile("w", suffix=".md", prefix="memtui-", delete=False, encoding="utf-8") as tmp:
            tmp.write(entry.text + "\n")
            name = tmp.name
        try:
            with self.suspend():
                subprocess.run([*shlex.split(editor), name], check=False)
            text = Path(name).read_text(encoding="utf-8")
        except Exception as exc:  # no terminal to suspend to, editor missing…
            self.notify(f"Could not run {editor}: {exc}", severity="error")
            return
        finally:
            try:
                os.unlink(name)
            except OSError:
                pass
        self._save_edit(entry, text)

    def action_delete(self) -> None:
        entry = self.selected_entry()
        if entry is None:
            self.notify("Select a memory first.", severity="warning")
            return
        body = Text.assemble(("This memory will be deleted:\n\n", ""), (" ".join(entry.text.split())[:400], "bold"),
                             (f"\n\nfrom {describe(entry)}. You can undo with u.", "dim"))

        def answer(yes: bool | None) -> None:
            if not yes:
                return
            op, conflict = self._guard(actions.delete, self.store, [entry])
            if conflict:
                self.notify(str(conflict), title="Not deleted", severity="error", timeout=8)
            elif op:
                self.notify(f"Deleted {describe(entry)}. Press u to undo.", title="Deleted")

        self.push_screen(ConfirmScreen("Delete memory?", body), answer)

    def action_undo(self) -> None:
        pending = actions.undo_preview(self.store)
        if pending is None:
            self.notify("Nothing to undo.")
            return
        op, conflict = self._guard(actions.undo, self.store, pending.id)
        if conflict:
            self.notify(str(conflict), title="Cannot undo", severity="error", timeout=10)
        elif op is not None:
            self.notify(f"Undone: {op.summary}", title="Undo")

    # ------------------------------------------------------------------ settings
    def action_toggle_memory(self) -> None:
        value = not self.settings.enabled
        path, problem = self._guard(actions.set_enabled, self.paths, value)
        if problem or path is None:
            if problem:
                self.notify(str(problem), severity="error")
            return
        self.settings = load_settings(self.paths)
        self._update_subtitle()
        self.schedule_preview()
        self.notify(f"Memory {'on' if self.settings.enabled else 'off'} for this workspace "
                    f"(saved in {self.paths.workspace_settings})", title="Memory")

    def action_settings(self) -> None:
        self.settings = load_settings(self.paths)
        themes = [t for t in self.theme_names if t in self.available_themes]
        self.push_screen(SettingsScreen(self.paths, self.settings, themes, self.theme), self._apply_settings)

    def _apply_settings(self, choice: SettingsChoice | None) -> None:
        if choice is None:
            return
        try:
            actions.save_settings(self.paths, self.settings, choice.workspace_enabled, choice.global_enabled,
                                  choice.memory, choice.theme)
        except actions.ActionError as exc:
            self.notify(str(exc), title="Settings not saved", severity="error", timeout=10)
            return
        self.theme = choice.theme
        self.settings = load_settings(self.paths)
        self._update_subtitle()
        self.schedule_preview()
        self.notify("Settings saved.", title="Settings")

    # ------------------------------------------------------------------ help + palette
    def help_rows(self) -> list[tuple[str, str]]:
        rows = []
        for binding in self.BINDINGS:
            key = binding.key.replace("question_mark", "?").replace("slash", "/")
            rows.append((key, binding.description))
        rows += [("tab / shift+tab", "Move between panes and inputs"), ("enter (on the fold)", "Expand or collapse the injected text"),
                 ("ctrl+s (in dialogs)", "Save"), ("ctrl+p", "Command palette")]
        return rows

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_rows()))

    def get_system_commands(self, screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("New memory", "Create a memory in the focused layer", self.action_new)
        yield SystemCommand("Edit memory", "Edit the selected memory in place", self.action_edit)
        yield SystemCommand("Edit in $EDITOR", "Edit the selected memory in your editor", self.action_edit_external)
        yield SystemCommand("Delete memory", "Delete the selected memory (asks first)", self.action_delete)
        yield SystemCommand("Undo", "Undo the last change", self.action_undo)
        yield SystemCommand("Toggle memory", "Turn memory on or off for this workspace", self.action_toggle_memory)
        yield SystemCommand("Settings", "Budgets, gates, switches and theme", self.action_settings)
        yield SystemCommand("Preview injection", "Type a message and see what would be injected", self.action_focus_query)
        yield SystemCommand("Filter memories", "Fuzzy filter over all layers", self.action_focus_filter)


def run(paths: Paths, demo: bool = False) -> None:
    MemtuiApp(paths, demo=demo).run()
