"""The main screen: three layer panes with a fuzzy filter, the detail of the selected entry
and the injection preview. Filtering and the preview run in workers; every store change is
one refresh of the layers it touched."""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.events import Resize
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Collapsible, Footer, Header, Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from memtui.core import actions, process_gate
from memtui.core.bounded_reader import read_regular
from memtui.core.display import display_path, escape_name
from memtui.core.doctor import Finding
from memtui.core.injection import InjectionResult
from memtui.core.model import LAYERS, Entry, Layer
from memtui.core.paths import MAX_FILE_BYTES
from memtui.core.serve import inject_from_store, inject_prepared
from memtui.core.settings import load_settings
from memtui.core.store.prepared import DamagedPreparedIndex, Prepared
from memtui.core.store.saved_rows import SavedEntries

from . import forgetting, screens
from .commands import help_rows
from .messages import (
    ContradictionSettled,
    DeleteAsked,
    LeftOutReady,
    MemorySwitched,
    PreparedOpened,
    PreviewReady,
    Result,
    SettingsRefused,
    SettingsSaved,
    StoreLoaded,
    StoreReloaded,
    SwitchRefused,
    UndoLogRead,
)
from .startup import Tuning, pane_order
from .text import LAYER_TITLES, describe
from .widgets import DetailView, EntryPane, PreviewPane
from .widgets.line_input import LineInput
from .widgets.preview import LeftOut, left_out, left_out_counts
from .writes import MemoryWrites

if TYPE_CHECKING:
    from .saved_filter import SavedChoices

log = logging.getLogger("memtui.tui")

FILTER_CUTOFF = 75.0  # rapidfuzz partial_ratio: a typo in a word still matches; unrelated rows score ~50
LEFT_OUT_PAUSE = 0.12  # a large store's near misses are found once the typing pauses this long (`Tuning.left_out_at_once`)
# A preview whose last one cost less than this (CPU seconds: the longest query at the large
# corpus costs 15 ms) is made on the event loop as its key comes, and painted in the key's own
# frame; past it, in a worker, the keys echoed meanwhile (a store ten times larger).
INLINE_COST = 0.025
COMPACT_WIDTH = 100  # below this many columns: one pane at a time (tabs), detail hidden
COMPACT_HEIGHT = 30
# Keys that type a character: not advertised (and not run) while an input has focus.
TYPING_ACTIONS = {"focus_filter", "focus_query", "new", "edit", "edit_external", "delete", "undo", "undo_log",
                  "toggle_fold", "toggle_memory", "settings", "focus_pane", "reload", "help", "quit", "cycle_order", "findings",
                  "inbox"}
TYPING_ACTIONS |= {"pin", "toggle_private", "forecast"}  # SPEC §18 (tui/forgetting.py)


class MainScreen(MemoryWrites, forgetting.ForgettingKeys):
    """The three panes, the filter, the detail view and the injection preview, wired by
    messages; its length is the key bindings of the main view and their handlers (a binding
    and its action live here; a write goes to the app's worker, whose typed outcome the app
    handles)."""

    BINDINGS = [
        Binding("question_mark", "help", "Help", id="main.help"),
        # `/` and `p` put the focus in an input, and what comes next is typed there: they are
        # run as the key arrives, before the app hands the next key on. Keys sent in one burst
        # (tmux send-keys, a terminal without bracketed paste, a fast typist on a busy machine)
        # then land in the input: "pdeploy" is not p, then d (delete) and y (its yes) for the
        # pane. A pane key sent just before them stays the pane's (`RowList._on_key`); while an
        # input has focus `check_action` turns them down and they type.
        Binding("slash", "focus_filter", "Filter", id="main.filter", priority=True),
        Binding("p", "focus_query", "Preview", show=False, id="main.preview", priority=True),
        Binding("n", "new", "New", id="main.new"),
        Binding("e", "edit", "Edit", id="main.edit"),
        Binding("E", "edit_external", "$EDITOR", show=False, id="main.edit_external"),
        Binding("d", "delete", "Delete", id="main.delete"),
        Binding("u", "undo", "Undo", id="main.undo"),
        Binding("U", "undo_log", "Undo log", show=False, id="main.undo_log"),
        Binding("f", "toggle_fold", "Fold", id="main.fold"),
        Binding("t", "toggle_memory", "On/off", id="main.toggle"),
        Binding("s", "settings", "Settings", id="main.settings"),
        Binding("i", "inbox", "Inbox", show=False, id="main.inbox"),  # the header says "N to review (i)"
        Binding("1", "focus_pane('user')", "User", show=False, id="main.pane_user"),
        Binding("2", "focus_pane('project')", "Project", show=False, id="main.pane_project"),
        Binding("3", "focus_pane('conversation')", "Conversation", show=False, id="main.pane_conversation"),
        Binding("o", "cycle_order", "Order", show=False, id="main.order"),  # the panes' subtitles say it
        Binding("D", "findings", "Doctor", show=False, id="main.findings"),
        Binding("P", "pin", "Pin", show=False, id="main.pin"),  # SPEC §18: pin / unpin the selected memory
        Binding("F", "forecast", "Forecast", show=False, id="main.forecast"),
        Binding("X", "toggle_private", "Private", show=False, id="main.private"),  # the header says when it is on
        Binding("r", "reload", "Reload", show=False, id="main.reload"),
        Binding("enter", "open_detail", "Detail", show=False, id="main.detail"),  # small terminals: no detail pane
        Binding("escape", "leave_input", "Leave input", id="main.back"),
        Binding("q", "quit", "Quit", id="main.quit"),
    ]

    def __init__(self, tuning: Tuning = Tuning()) -> None:
        super().__init__()
        self.tuning = tuning
        self.filter_text = ""
        self.query_text = ""
        self.last_result: InjectionResult | None = None
        self.last_layer: str = Layer.USER
        self._generation = 0
        self._filter_generation = 0
        self._choices: dict[str, tuple[Sequence[Entry], list[str]]] = {}  # filter strings per layer snapshot
        self._saved_choices: dict[str, SavedChoices] = {}  # …of a layer left in the prepared index
        self._saved_lock = threading.Lock()
        self._ordered: dict[str, tuple[Sequence[Entry], tuple[Entry, ...]]] = {}  # store snapshot -> pane order
        # the prepared index's entries (`startup.PaneListing`: made as they are shown), until the store loads
        self._prepared: dict[str, Sequence[Entry]] = {}
        self._pending_keep: dict[str, str] = {}  # entry to select once the next refresh shows it
        self._last_results: dict[str, tuple[Sequence[Entry], int]] = {}  # each layer's last listing, unsorted
        self.order = "file"  # actions.ENTRY_ORDERS: how each pane is sorted (o cycles)
        self._left_out_timer: Timer | None = None  # a large store's near misses, once the typing pauses
        self._preview_cost = float("inf")  # the last preview's CPU seconds (unknown: the first is the worker's)
        self.context_files: tuple[str, ...] = ()  # the preview's files in context (SPEC §16)
        self.ready = asyncio.Event()  # set once the panes list memories (the prepared index's or the store's)

    @property
    def gone(self) -> bool:
        """The screen is being removed (the app closes; Textual removes the panes first): a
        worker's late result has nothing left to show in."""
        return not self.is_attached or self._pruning

    async def _on_message(self, message: Message) -> None:
        """A worker's result (`messages.Result`) that arrives while the app closes is dropped,
        as the app drops its own: the panes and dialogs its handler would look for are gone."""
        if isinstance(message, Result) and self.memtui.closing:
            return
        await super()._on_message(message)

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield LineInput(placeholder="/ filter all layers (fuzzy)…", id="filter", compact=True)
                yield Static(id="layer-tabs", markup=False)
                for layer in LAYERS:
                    yield EntryPane(layer)
            with Vertical(id="right"):
                yield DetailView(id="detail")
                yield PreviewPane(id="preview")
        yield Footer()

    async def on_mount(self) -> None:
        self._layout_for(self.app.size.width, self.app.size.height)
        self.watch(self.query_one("#query", Input), "value", self.query_changed, init=False)
        self.watch(self.query_one("#context-files", Input), "value", self.context_changed, init=False)
        # a saved prepared index opens in a few tens of milliseconds (begun as the app started):
        # awaited (not blocking the event loop), so that the first frame lists it rather than
        # loading indicators
        opened = await self.memtui.startup.opened(self.tuning.panes_wait)
        if opened is not None:
            self._list_prepared(opened.entries)
        elif not self.memtui.loaded:
            for pane in self.query(EntryPane):
                pane.loading = True

    def on_resize(self, event: Resize) -> None:
        self._layout_for(event.size.width, event.size.height)

    def _layout_for(self, width: int, height: int) -> None:
        """Small terminals (80×24): the panes become tabs (1/2/3) above the preview."""
        compact = width < COMPACT_WIDTH or height < COMPACT_HEIGHT
        self.set_class(compact, "compact")
        footer = self.query_one(Footer)
        changed = footer.show_command_palette == compact
        footer.compact = compact
        footer.show_command_palette = not compact  # ctrl+p still works; the keys need the room
        if changed:  # the footer makes its keys again (else, after a resize, the palette key stays and `q Quit` goes)
            self.refresh_bindings()
        self._show_tabs()

    def _show_tabs(self) -> None:
        tabs = Text()
        for i, pane in enumerate(self.query(EntryPane), start=1):
            current = pane.memory_layer == self.last_layer
            pane.set_class(current, "current")
            label = f" {i} {pane.border_title} "
            tabs.append(label, style="reverse bold" if current else "dim")
            tabs.append(" ")
        try:
            self.query_one("#layer-tabs", Static).update(tabs)
        except NoMatches:
            pass

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While an input has focus, letters and digits type: their bindings are neither shown
        nor run; Esc is shown only then."""
        typing = isinstance(self.focused, Input)
        if action in TYPING_ACTIONS:
            return not typing
        if action == "leave_input":
            return typing
        if action == "open_detail":  # only where the detail view is hidden, and on a row
            return self.has_class("compact") and isinstance(self.focused, EntryPane)
        return True

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, EntryPane):
            self.last_layer = event.widget.memory_layer
            self._show_tabs()
            self.show_detail()
        self.refresh_bindings()

    def on_descendant_blur(self, _event: events.DescendantBlur) -> None:
        self.refresh_bindings()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """This screen's workers (preview, filter, left out) fail as the app's do: said, not
        silent (their state messages do not bubble: sent up to the app's one handler)."""
        if event.state == WorkerState.ERROR:
            self.app.post_message(Worker.StateChanged(event.worker, event.state))

    # ------------------------------------------------------------------ store
    @property
    def showing(self) -> bool:
        """The panes list memories: the store's, or the prepared index's until it loads."""
        return self.memtui.loaded or bool(self._prepared)

    def on_prepared_opened(self, message: PreparedOpened) -> None:
        """(Bubbles on to the app.) Listed unless the mount listed it, or the store has loaded."""
        if message.opened is not None and not self._prepared and not self.memtui.loaded:
            self._list_prepared(message.opened.entries)

    def _list_prepared(self, entries: dict[str, Sequence[Entry]]) -> None:
        """The prepared index's entries, listed while the store loads behind them."""
        self._prepared = dict(entries)
        for pane in self.query(EntryPane):
            pane.loading = False
        self.refresh_panes()
        self.query_one("#pane-user", EntryPane).focus()
        self.ready.set()
        self.schedule_preview()

    def on_store_loaded(self, message: StoreLoaded) -> None:
        """(Bubbles on to the app.) The store's entries take over from the prepared index's."""
        if message.ordered is not None:  # the conversation pane's order, found in the load's thread
            self._ordered = {**self._ordered, Layer.CONVERSATION: message.ordered}
        shown = bool(self._prepared)
        self._prepared = {}
        for pane in self.query(EntryPane):
            pane.loading = False
        self.refresh_panes()
        if not shown:  # else the user may be somewhere already: the focus stays there
            self.query_one("#pane-user", EntryPane).focus()
        self.ready.set()
        self.schedule_preview()

    def store_changed(self, layers: Iterable[str]) -> None:
        self.refresh_panes(layers)
        self.schedule_preview()
        self.check_edit_conflict()

    def select_after_reload(self, layer: str, entry_id: str) -> None:
        """Select `entry_id` now if it is listed, else once the refresh on its way lists it."""
        self._pending_keep[layer] = entry_id
        if self.pane(layer).select_id(entry_id):
            self._pending_keep.pop(layer, None)

    # ------------------------------------------------------------------ panes
    def pane(self, layer: str) -> EntryPane:
        return self.query_one(f"#pane-{layer}", EntryPane)

    def filtered(self, layer: str, text: str) -> tuple[Sequence[Entry], int]:
        """The layer's entries matching `text`, best first; all when empty. Runs in a worker.

        rapidfuzz's partial_ratio scores the best-aligned part of each row, so a word with a
        typo still finds it (WRatio scales partial matches down by the length ratio: a word
        found exactly in a long memory scores only 60)."""
        snapshot = self.layer_entries(layer)
        if not text:
            return snapshot, len(snapshot)
        from rapidfuzz import fuzz, process, utils  # when a filter is first typed, not at start-up

        query = utils.default_process(text)
        if not query:
            return snapshot, len(snapshot)  # (not copied: a prepared layer's entries are made as they are shown)
        if isinstance(snapshot, SavedEntries):  # a large conversation layer: no string per row held
            return self._filtered_saved(layer, snapshot, query), len(snapshot)
        cached = self._choices.get(layer)
        if cached is None or cached[0] is not snapshot:
            # the entries a change kept are the same objects: their strings are taken, not made again
            # (the old snapshot is alive meanwhile, so no new entry has the id() of an old one)
            known = {id(e): choice for e, choice in zip(*cached)} if cached is not None else {}
            choices = [known.get(id(e)) or utils.default_process(
                f"{e.text} {e.section} {' '.join(e.tags)} {e.conversation_title}") for e in snapshot]
            del known
            cached = (snapshot, choices)
            self._choices[layer] = cached
        hits = process.extract(query, cached[1], scorer=fuzz.partial_ratio, processor=None,
                               score_cutoff=FILTER_CUTOFF, limit=None)
        hits.sort(key=lambda h: (-h[1], h[2]))
        return [snapshot[h[2]] for h in hits], len(snapshot)

    def _filtered_saved(self, layer: str, snapshot: SavedEntries, query: str) -> Sequence[Entry]:
        """`filtered` over a conversation layer left in the prepared index (`saved_filter`)."""
        from rapidfuzz import fuzz, utils

        from .saved_filter import SavedChoices, hits

        with self._saved_lock:  # one pass over the rows, whatever the filter workers still running (one per key)
            cached = self._saved_choices.get(layer)
            if cached is None or cached.listing is not snapshot:
                self._saved_choices.pop(layer, None)  # (the old strings gone before the new are made)
                cached = SavedChoices(snapshot, lambda e: utils.default_process(
                    f"{e.text} {e.section} {' '.join(e.tags)} {e.conversation_title}"))
                self._saved_choices[layer] = cached
        return hits(cached, cached.extract(query, fuzz.partial_ratio, FILTER_CUTOFF))

    def layer_entries(self, layer: str) -> Sequence[Entry]:
        """The layer's entries in pane order: the store's once it has loaded, the prepared
        index's before (the same order, so nothing moves when the store takes over)."""
        if not self.memtui.loaded:
            return self._prepared.get(layer, ())
        snapshot = self.memtui.store.snapshot(layer)
        if layer != Layer.CONVERSATION or isinstance(snapshot, SavedEntries):
            return snapshot  # the store reads Markdown in pane order (file, then line); saved rows are in it
        cached = self._ordered.get(layer)
        if cached is None or cached[0] is not snapshot:
            cached = (snapshot, tuple(pane_order(layer, snapshot)))
            self._ordered[layer] = cached
        return cached[1]

    def _ordered_now(self, layer: str) -> bool:
        """Whether the layer's pane order is at hand (else it is found in a worker)."""
        if not self.memtui.loaded or layer != Layer.CONVERSATION:
            return True
        cached = self._ordered.get(layer)
        snapshot = self.memtui.store.snapshot(layer)
        return isinstance(snapshot, SavedEntries) or (cached is not None and cached[0] is snapshot)

    def refresh_panes(self, layers: Iterable[str] | None = None) -> None:
        layers = tuple(LAYERS if layers is None else layers)
        self._filter_generation += 1
        if self.filter_text.strip() or not all(self._ordered_now(layer) for layer in layers):
            self.filter_panes(self.filter_text, layers, self._filter_generation)
            return
        self._show_panes({layer: self.filtered(layer, "") for layer in layers})

    def _show_panes(self, results: dict[str, tuple[Sequence[Entry], int]]) -> None:
        self._last_results = {**self._last_results, **results}
        badges = self.memtui.findings_by_entry
        for pane in self.query(EntryPane):
            pane.badges = badges
            pane.border_subtitle = "" if self.order == "file" else f"o: {actions.ORDER_TITLES[self.order]}"
            if pane.memory_layer in results:
                shown, total = results[pane.memory_layer]
                if self.order != "file":
                    shown = actions.sort_entries(list(shown), self.memtui.history, self.order)
                pane.show(shown, total, keep=self._pending_keep.pop(pane.memory_layer, None))
        self._show_tabs()
        self.show_detail()

    @work(thread=True, exclusive=True, group="filter", exit_on_error=False)
    def filter_panes(self, text: str, layers: tuple[str, ...], generation: int) -> None:
        results = {layer: self.filtered(layer, text) for layer in layers}
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._filtered_ready, results, generation)

    def _filtered_ready(self, results: dict[str, tuple[Sequence[Entry], int]], generation: int) -> None:
        if generation == self._filter_generation and not self.gone:  # a newer filter or reload is on its way otherwise
            self._show_panes(results)

    @on(Input.Changed, "#filter")
    def filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self.memtui.startup.typed()
        if self.showing:
            self.refresh_panes()

    @on(Input.Submitted, "#filter")
    def filter_submitted(self) -> None:
        """Enter in the filter goes to what it found: the current layer when it lists any, else
        the first layer that does (on a small terminal, its tab)."""
        current = self.current_pane()
        found = next((p for p in self.query(EntryPane) if p.item_count()), current)
        self.action_focus_pane((current if current.item_count() else found).memory_layer)

    @on(EntryPane.Highlighted)
    def highlighted(self, event: EntryPane.Highlighted) -> None:
        if event.pane.has_focus:
            self.last_layer = event.pane.memory_layer
        self.show_detail()

    def current_pane(self) -> EntryPane:
        return self.pane(self.last_layer)

    def selected_entry(self) -> Entry | None:
        try:
            return self.current_pane().highlighted_entry
        except NoMatches:  # the panes are gone: the app is closing, and a late worker result came in
            return None

    def insights_changed(self) -> None:
        """New findings or history: badges, detail, and the order when it depends on history."""
        if self.gone:
            return  # the app is closing
        if self.order != "file" and self._last_results:
            self._show_panes(self._last_results)
            return
        badges = self.memtui.findings_by_entry
        for pane in self.query(EntryPane):
            pane.badges = badges
            pane.refresh()
        self.show_detail()

    def action_cycle_order(self) -> None:
        orders = actions.ENTRY_ORDERS
        self.order = orders[(orders.index(self.order) + 1) % len(orders)]
        if self._last_results:
            self._show_panes(self._last_results)
        unchanged = ": no injection history yet, order unchanged" if self.order != "file" and not self.memtui.history else ""
        self.memtui.say(f"Sorted by {actions.ORDER_TITLES[self.order]}{unchanged} (o changes it)", title="Order", timeout=3)

    def jump_to(self, entry: Entry) -> None:
        """Show `entry` in its pane (clearing a filter that hides it)."""
        self.action_focus_pane(entry.layer)
        if not self.pane(entry.layer).select_id(entry.id):
            self._pending_keep[entry.layer] = entry.id
            self.query_one("#filter", Input).value = ""

    def action_open_detail(self) -> None:
        """The selected memory's detail full screen: what the hidden detail view would show."""
        entry = self.selected_entry()
        if entry is None:
            return
        app = self.memtui
        app.push_screen(screens.DetailScreen(entry, app.findings_by_entry.get(entry.id, ()), app.history.get(entry.id)))

    def show_detail(self) -> None:
        entry = self.selected_entry()
        app = self.memtui
        try:
            self.query_one(DetailView).show(entry, app.findings_by_entry.get(entry.id, ()) if entry else (),
                                            app.history.get(entry.id) if entry else None,
                                            forgetting.detail_line(self, entry))
        except NoMatches:  # the screen is being torn down
            pass

    # ------------------------------------------------------------------ preview
    def query_changed(self, value: str) -> None:
        """The query's text changed: its preview. Watched on the input's value rather than
        taken from its Changed message, so that a preview made at once (`schedule_preview`)
        is on screen in the same frame as the key that asked for it."""
        self.query_text = value
        self.memtui.startup.typed()
        self.schedule_preview()

    def context_changed(self, value: str) -> None:
        """The files in context changed (SPEC §16): the preview again, scoped memories decided by them."""
        from memtui.core.scope import typed_files

        files = typed_files(self.memtui.paths.workspace, value)
        if files != self.context_files:
            self.context_files = files
            self.schedule_preview()

    @on(PreviewPane.ScopeAsked)
    def _scope_asked(self) -> None:
        """What each assistant loads for the first file in the files field (SPEC §16)."""
        from .screens.scope import ScopeScreen

        if not self.context_files:
            self.notify("Type a file in the files field first (e.g. src/api/users.py).", severity="warning")
            self.query_one("#context-files", Input).focus()
            return
        self.app.push_screen(ScopeScreen(self.memtui.store, self.context_files[0]))

    def schedule_preview(self) -> None:
        """The preview of the query: made here, on the event loop, when the prepared index is
        up to date and the last preview cost little (`INLINE_COST`): it is then painted with
        the key, with no thread hand-off and no second frame; else in the preview worker (the
        index to open again after a change, hybrid retrieval, the store's path, a costly query),
        and the app stays responsive meanwhile."""
        if not self.showing or self.gone:
            return
        self._generation += 1
        if self._preview_cost <= INLINE_COST and self._preview_now(self.query_text, self._generation):
            return
        self.compute_preview(self.query_text, self._generation)

    def _preview_now(self, query: str, generation: int) -> bool:
        """The preview made on the event loop; False when it is the worker's to make."""
        app = self.memtui
        settings = app.settings
        if settings.enabled and (settings.retrieval == "hybrid" or settings.half_life_days is not None):
            return False  # §13's scores: a model to load, vectors to read
        prepared = app.preview.current()
        if prepared is None:
            return False
        try:
            result, summary = self._preview_of(prepared, query)
        except DamagedPreparedIndex as exc:  # the worker opens it again
            log.warning("%s", exc)
            app.preview.damaged()
            return False
        except Exception:  # the worker makes it again, and says what failed as a failed worker does
            log.debug("preview on the event loop failed", exc_info=True)
            self._preview_cost = float("inf")
            return False
        self.workers.cancel_group(self, "preview")  # a slower one still on its way is older
        self._show_preview(query, result, generation, summary)
        return True

    def _preview_of(self, prepared: Prepared, query: str, session: object = None) -> tuple[InjectionResult, LeftOut | None]:
        """The injection from the prepared index and what it left out; its cost (CPU time of
        the calling thread, whatever else runs) decides where the next one is made."""
        app = self.memtui
        began = time.thread_time()
        result = inject_prepared(app.paths, prepared, app.settings, query, session=session, files=self.context_files)
        summary = self._summary(result)
        self._preview_cost = time.thread_time() - began
        return result, summary

    def _summary(self, result: InjectionResult) -> LeftOut | None:
        if result.disabled_reason == "switch_off":
            return None
        summary = left_out_counts(result)
        if summary.total <= self.tuning.left_out_at_once:
            summary = left_out(result)
        return summary

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def compute_preview(self, query: str, generation: int) -> None:
        """The preview of `query` from the prepared index, as `memtui preview` answers it (opened
        again after a change); from the store when there is none."""
        app = self.memtui
        settings = app.settings
        session = app.semantic_session() if settings.enabled and settings.retrieval == "hybrid" else None
        found = None
        for _ in range(2):
            prepared = app.preview.get()
            if prepared is None:
                break
            try:
                found = self._preview_of(prepared, query, session)
                break
            except DamagedPreparedIndex as exc:  # the damaged file is removed: opened (rebuilt) again
                log.warning("%s", exc)
                app.preview.damaged()
        if found is None:
            result = inject_from_store(app.store, settings, query, files=self.context_files)
            found = (result, self._summary(result))
        if not get_current_worker().is_cancelled:
            self.post_message(PreviewReady(query, found[0], generation, found[1]))

    @work(thread=True, exclusive=True, group="left-out", exit_on_error=False)
    def compute_left_out(self, result: InjectionResult, generation: int) -> None:
        if generation != self._generation:
            return  # typed on
        summary = left_out(result)
        if not get_current_worker().is_cancelled:
            self.post_message(LeftOutReady(result, generation, summary))

    def on_left_out_ready(self, message: LeftOutReady) -> None:
        if message.generation == self._generation and not self.gone:
            try:
                self.query_one(PreviewPane).show(message.result, message.left_out)
            except NoMatches:
                pass

    def on_preview_ready(self, message: PreviewReady) -> None:
        self._show_preview(message.query, message.result, message.generation, message.left_out)

    def _show_preview(self, query: str, result: InjectionResult, generation: int, summary: LeftOut | None) -> None:
        if generation != self._generation or self.gone:
            return  # a newer query is on its way, or the app closes
        self.last_result = result
        try:
            self.query_one(PreviewPane).show(result, summary)
        except NoMatches:
            return
        if self._left_out_timer is not None:
            self._left_out_timer.stop()
            self._left_out_timer = None
        if summary is not None and summary.pending:
            self._left_out_timer = self.set_timer(LEFT_OUT_PAUSE, lambda: self.compute_left_out(result, generation))
        if not self.memtui.startup.painted:
            self.call_after_refresh(self.memtui.startup.first_painted)  # the store's load waits for this

    def action_toggle_fold(self) -> None:
        fold = self.query_one("#fold", Collapsible)
        fold.collapsed = not fold.collapsed

    # ------------------------------------------------------------------ focus
    def action_focus_filter(self) -> None:
        self.set_focus(self.query_one("#filter", Input))  # now, not after the keys already sent

    def action_focus_query(self) -> None:
        self.set_focus(self.query_one("#query", Input))

    def action_focus_pane(self, layer: str) -> None:
        self.last_layer = layer
        self._show_tabs()
        self.set_focus(self.pane(layer))

    def action_leave_input(self) -> None:
        """Esc leaves an input; leaving the filter clears it."""
        focused = self.focused
        if isinstance(focused, Input):
            if focused.id == "filter" and focused.value:
                focused.value = ""
            self.current_pane().focus()

    # ------------------------------------------------------------------ actions (the app's worker runs the writes)
    def action_new(self) -> None:
        app, layer = self.memtui, self.last_layer
        target = display_path(app.paths.default_file(layer).name) if layer != Layer.CONVERSATION else "muse.db"

        def done(text: str | None) -> None:
            if text is not None and text.strip():
                self.remember(text, layer)

        off = None if app.settings.enabled else (
            "Memory is off for this workspace: this memory is saved, but Muse won't use it until you turn "
            "memory on (t).")
        app.push_screen(screens.EditScreen(f"New {LAYER_TITLES[layer].lower()} memory → {target}", layer=layer, note=off),
                        done)

    def action_edit(self) -> None:
        self.edit_memory(self.selected_entry())

    def action_edit_external(self) -> None:
        """Edit the selected entry in $VISUAL/$EDITOR, the terminal handed over (suspended) meanwhile."""
        app, entry = self.memtui, self.selected_entry()
        if entry is None:
            app.say("Select a memory first.", severity="warning")
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        with tempfile.NamedTemporaryFile("w", suffix=".md", prefix="memtui-", delete=False, encoding="utf-8") as tmp:
            tmp.write(entry.text + "\n")
            name = tmp.name
        try:
            with app.suspend():
                process_gate.run_tool([*shlex.split(editor), name], cwd=Path(name).parent, capture=False)
            text = read_regular(name, MAX_FILE_BYTES).decode("utf-8")
        except Exception as exc:  # no terminal to suspend to, editor missing…
            app.say(f"Could not run {escape_name(editor)}: {escape_name(str(exc))}", severity="error")
            return
        finally:
            try:
                os.unlink(name)
            except OSError:
                pass
        self.save_edit(entry, text)

    def action_delete(self) -> None:
        app, entry = self.memtui, self.selected_entry()
        if entry is None:
            app.say("Select a memory first.", severity="warning")
            return
        # the delete is worked out once, off the event loop: the app's DeleteAsked handler asks
        # (with what the confirmation must add) and applies it as worked out
        app.write(lambda: DeleteAsked(entry, actions.plan_delete(app.store, [entry])), "Cannot delete")

    def action_undo(self) -> None:
        self.undo_last()  # the inbox's u too

    def action_undo_log(self) -> None:
        app = self.memtui

        def job() -> UndoLogRead:
            pending = actions.undo_preview(app.store)
            return UndoLogRead(actions.undo_log(app.store), pending.id if pending else None)

        app.write(job, "Undo log")

    def action_toggle_memory(self) -> None:
        app = self.memtui
        value = not app.settings.enabled
        app.write(lambda: MemorySwitched(value, actions.set_enabled(app.paths, value)),
                  lambda error: SwitchRefused(error, value))

    def action_settings(self) -> None:
        app = self.memtui
        app.settings = load_settings(app.paths)
        themes = [t for t in app.theme_names if t in app.available_themes]
        app.push_screen(screens.SettingsScreen(app.paths, app.settings, themes, app.theme), self._apply_settings)

    def _apply_settings(self, choice: screens.SettingsChoice | None) -> None:
        if choice is None:
            return
        app = self.memtui
        current = app.settings

        def job() -> SettingsSaved:
            actions.save_settings(app.paths, current, choice.workspace_enabled, choice.global_enabled,
                                  choice.memory, choice.theme)
            return SettingsSaved(choice.theme)

        app.write(job, SettingsRefused)

    def action_inbox(self) -> None:
        self.app.push_screen(screens.InboxScreen())

    def action_findings(self) -> None:
        app = self.memtui

        def chosen(finding: Finding | None) -> None:
            if finding is None or not finding.entry_id:
                return
            entry = app.store.get(finding.entry_id)
            if entry is None:
                app.say("That memory is gone since the doctor ran.", severity="warning")
                return
            self.jump_to(entry)
            other = app.store.get(finding.other_id) if finding.kind == "contradiction" and finding.other_id else None
            if other is not None:
                app.push_screen(screens.ContradictionScreen(entry, other, finding.reason),
                                lambda choice: self._settle(choice, entry, other))

        app.push_screen(screens.FindingsScreen(app.findings), chosen)

    def _settle(self, choice: str | None, left: Entry, right: Entry) -> None:
        """Carry out what the contradiction dialog chose (SPEC §17): supersede one by the other,
        keep both as not contradicting, or edit one."""
        app = self.memtui
        if choice in ("edit_left", "edit_right"):
            self.edit_memory(left if choice == "edit_left" else right)
            return
        if choice not in ("keep_left", "keep_right", "keep_both"):
            return

        def job() -> ContradictionSettled:
            if choice == "keep_both":
                actions.keep_both(app.store, left, right)
                return ContradictionSettled(f"Kept both: {describe(left)} and {describe(right)} are not reported again.")
            kept, old = (left, right) if choice == "keep_left" else (right, left)
            actions.supersede(app.store, old, kept)
            return ContradictionSettled(f"{describe(old)} is superseded by {describe(kept)}. Press u to undo.")

        app.write(job, "Not settled")

    def action_pin(self) -> None:
        forgetting.toggle_pin(self)

    def action_toggle_private(self) -> None:
        forgetting.toggle_private(self)

    def action_forecast(self) -> None:
        forgetting.open_forecast(self)

    def action_help(self) -> None:
        self.app.push_screen(screens.HelpScreen(self.help_rows()))

    def help_rows(self) -> list[tuple[str, str]]:
        return help_rows(self.BINDINGS)

    def action_reload(self) -> None:
        app = self.memtui
        app.reload_settings()
        app.say("Reloading every memory file, the database and the settings…", title="Reload", timeout=2)

        def job() -> StoreReloaded:
            app.store.reload(full=True)
            return StoreReloaded(actions.layer_counts(app.store.entries()))

        app.write(job, "Reload failed")

    async def action_quit(self) -> None:
        self.app.exit()


__all__ = ["MainScreen", "LAYER_TITLES"]
