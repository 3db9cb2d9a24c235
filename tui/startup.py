"""The TUI's start, as one object (`StartUp`): the prepared index that `memtui preview` and
the hook answer from (`core.store.prepared`) opens the way they open it, its entries listed
in the panes' order and the first preview injected from its layers; the store then loads in
the background and takes over (the panes' order is the same for both, so nothing moves), and
the watcher starts. Each step's outcome is a message to the main screen."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple

from memtui.core.injection import LayerCandidates
from memtui.core.made_when_asked import MadeWhenAsked
from memtui.core.model import LAYERS, Entry, Layer
from memtui.core.paths import Paths
from memtui.core.settings import Settings
from memtui.core.store import prepared as prepared_index
from memtui.core.store import rows as row_changes
from memtui.core.store.layer_index import LayerIndex
from memtui.core.store.pane_order import conversation_keys
from memtui.core.store.patched_layer import PatchedLayer
from memtui.core.store.prepared import DamagedPreparedIndex, Prepared, cache_path, check_rows, prepare, saved_conversation
from memtui.core.store.saved_rows import SavedEntries

from .messages import IndexBuilding, PreparedOpened, StoreLoaded

if TYPE_CHECKING:
    from memtui.core.watch import StoreWatcher

    from .app import MemtuiApp

log = logging.getLogger("memtui.tui")


@dataclass(frozen=True)
class Tuning:
    """The app's waits (seconds) and thresholds; tests pass their own (a small store as if it
    were large, a first frame that waits as long as it takes)."""

    panes_wait: float = 0.3  # the first frame waits this long for the prepared index, at most (a first run builds it: longer)
    first_paint_wait: float = 2.0  # the store's load waits this long for the first preview to be on screen, at most
    typing_pause: float = 0.4  # the store loads once no key was typed into an input for this long…
    typing_wait: float = 10.0  # …or after this many seconds of typing, whichever comes first
    doctor_in_process: int = 5000  # entries up to which the doctor runs in a thread (milliseconds), else in a child process
    # Left out up to this many candidates, the preview's near misses and lists are found with the
    # injection itself; past it (a large store), once the typing pauses: finding them walks
    # thousands of candidates, more than the injection costs per keystroke.
    left_out_at_once: int = 3000
    # Conversation rows from which the store leaves the layer in the prepared index (each
    # entry made as it is shown: `core.store.saved_rows`) rather than holding every row as an
    # entry (over a kilobyte each: 365,000 rows at ten times the large corpus).
    rows_in_store: int = 50_000


class Opened(NamedTuple):
    """The prepared index, and its panes' entries per layer (in pane order)."""

    prepared: Prepared
    entries: dict[str, Sequence[Entry]]


def open_prepared(paths: Paths, settings: Settings, building: Callable[[list[str]], object]) -> Prepared:
    """The prepared index as `build_injection` opens it (brought up to date, the layers that
    cannot be rebuilt alone); `building(layers)` is told first when none is saved yet (a
    cold first run)."""
    if not any(cache_path(paths, layer).is_file() for layer in LAYERS):
        building([str(layer) for layer in LAYERS])
    try:
        return prepared_index.open_prepared(paths, settings, spawn=True)  # the Markdown layers beside, in a child
    except DamagedPreparedIndex as exc:
        log.warning("%s", exc)
        return prepare(paths, settings)


def pane_order(layer: str, entries: Sequence[Entry]) -> list[Entry]:
    """A layer's entries in the order its pane lists them ("file order", `pane_order.pane_state`):
    Markdown by file (root-relative path) and line, as the store reads them; conversation
    memories by conversation, the one added to last first, each newest first (memories
    without a conversation last)."""
    if layer == Layer.CONVERSATION:
        keys = conversation_keys([(e.conversation_title, e.updated_at, e.id) for e in entries])
        return [entries[i] for i in sorted(range(len(entries)), key=keys.__getitem__)]
    return sorted(entries, key=attrgetter("rel_path", "line_start"))


class PaneListing(MadeWhenAsked[Entry]):
    """A prepared layer's entries in pane order, each made from its saved row when first
    asked for: the pane shows a screenful, so the first frame makes a few dozen entries, not
    tens of thousands. The order and the conversation pane's groups (`groups`: title and
    count) were saved with the layer (or found from the rows laid over it). Iterating makes
    every entry at once (`entries`), as the filter and the store's load need them. They are
    the store's entries field for field but for their terms (the panes never read those)."""

    def __init__(self, index: LayerCandidates):
        self.source = index
        self.order, groups = index.pane()  # type: ignore[attr-defined]
        self.groups = [(title, count) for title, _, count in groups]
        self._all: list[Entry] | None = None

    def __len__(self) -> int:
        return len(self.order)

    def item_at(self, i: int) -> Entry:
        every = self._all
        if every is not None:
            return every[i]
        return self.source.entry(self.order[i])  # (a negative i counts from the end, as a list's)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries())

    def entries(self) -> list[Entry]:
        """Every entry, in pane order (made once; the ones made already are taken)."""
        if self._all is None:
            made = self.source.all_entries()  # type: ignore[attr-defined]
            self._all = [made[pos] for pos in self.order]
        return self._all


def prepared_entries(index: LayerCandidates) -> Sequence[Entry]:
    """A prepared layer's entries in pane order: a `PaneListing` of a saved layer (its rows
    checked first, so that none fails later, as the panes page through them), the entries
    themselves for a layer indexed here from the memories."""
    if isinstance(index, (LayerIndex, PatchedLayer)):
        check_rows(index)
        return PaneListing(index)
    return pane_order(index.layer, [index.entry(pos) for pos in range(index.size)])


def collector_on() -> None:
    """The cyclic garbage collector back on after the start (`memtui` turns it off before it
    imports the app; a no-op when it is on): what the start made lives as long as the app, so
    it is frozen first."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


class StartUp:
    """The start, step by step, in one worker on the event loop (`run`), each slow step in a
    thread: the prepared index opens (begun as the app loads, beside the terminal's set-up),
    and the main screen lists it (`PreparedOpened`); once its first preview is painted
    (`first_painted`, or after `first_paint_wait`) and the typing pauses (`typed`), the store
    loads behind it, then the watcher starts (`StoreLoaded`). A first run says what it is
    building (`IndexBuilding`, to the app's header)."""

    def __init__(self, app: MemtuiApp, tuning: Tuning, watch: bool = True) -> None:
        self.app = app
        self.tuning = tuning
        self.watch = watch
        self.loaded = False  # the store has loaded (until then the panes list the prepared index)
        self.painted = False  # the first preview is on screen
        self.last_typed = 0.0  # time.monotonic() of the last key typed into the query or the filter
        self.watcher: StoreWatcher | None = None
        self._stopped = False  # the app closed: a load that ends after starts no watcher
        self._lock = threading.Lock()
        self._opening: asyncio.Future[Opened | None] | None = None
        self._building = asyncio.Event()  # a first run: the index takes a while
        self._painted = asyncio.Event()
        self._loaded = asyncio.Event()

    def begin(self) -> None:
        """(As the app loads) the prepared index starts opening in a thread now (a warm one is
        open in a few tens of milliseconds: the main screen's first frame then lists it)."""
        loop = asyncio.get_running_loop()
        self._opening = loop.run_in_executor(None, self._open, loop)
        self.app.run_worker(self.run(), name="start", group="load", exit_on_error=False)

    def _open(self, loop: asyncio.AbstractEventLoop) -> Opened | None:
        """(In its thread) open the prepared index and its panes' entries; None if it cannot be."""
        app = self.app

        def building(layers: list[str]) -> None:
            loop.call_soon_threadsafe(self._building.set)
            app.post_message(IndexBuilding(layers))

        try:
            prepared = open_prepared(app.paths, app.settings, building)
            opened = Opened(prepared, {str(layer): prepared_entries(prepared.indexes[layer]) for layer in LAYERS})
        except Exception as exc:  # the index is derived: the store still loads
            log.warning("prepared index not opened: %s", exc)
            return None
        app.preview.opened(prepared)
        return opened

    async def opened(self, wait: float) -> Opened | None:
        """(The main screen's mount) the prepared index once it is open, waited for up to `wait`
        seconds, not while a first run builds it; None if it is not open by then."""
        opening = self._opening
        assert opening is not None, "begin() first"
        building = asyncio.ensure_future(self._building.wait())
        try:
            await asyncio.wait((opening, building), timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        finally:
            building.cancel()
        return opening.result() if opening.done() and not opening.cancelled() else None

    def first_painted(self) -> None:
        """The first preview is on screen: the store may load, the collector runs again."""
        collector_on()
        self.painted = True
        self._painted.set()

    def typed(self) -> None:
        """A key was typed into the query or the filter: the store's load waits for a pause."""
        self.last_typed = time.monotonic()

    async def until_loaded(self) -> None:
        await self._loaded.wait()

    async def run(self) -> None:
        """The steps in order; the store's load is said (`StoreLoaded`) even when it failed (the
        worker's failure says why), so that the panes stop waiting for it."""
        assert self._opening is not None
        ordered: tuple[Sequence[Entry], tuple[Entry, ...]] | None = None
        ok = False
        try:
            opened = await self._opening
            self.app.main.post_message(PreparedOpened(opened))
            offer, listed, held = None, opened is not None, None
            if opened is not None:
                gc.freeze()  # what lives as long as the view: out of the collector's full passes
                prepared, conversation = opened.prepared, opened.entries[Layer.CONVERSATION]
                del opened
                await self._quiet()
                if prepared.row_gen is not None and len(conversation) < self.tuning.rows_in_store:
                    # the store takes the pane's conversation entries while no row moved
                    offer = (conversation, prepared.row_gen)  # (made now, those not shown yet)
                elif prepared.row_gen is not None:  # a large layer: the one the pane lists, while no row moved
                    held = prepared.indexes[Layer.CONVERSATION]
                del prepared, conversation
            ordered = await asyncio.to_thread(self._load, offer, listed, held)
            ok = True
        finally:
            self.loaded = True
            collector_on()  # (on already, unless no preview could be painted)
            self._loaded.set()
            self.app.main.post_message(StoreLoaded(ordered, ok=ok))

    async def _quiet(self) -> None:
        """Until the first preview is painted (`first_paint_wait` at most), then until no key
        was typed for `typing_pause` seconds, the first preview counting as a key
        (`typing_wait` at most): the prepared index answers the preview meanwhile, and someone
        who starts typing as it appears has the interpreter to themselves."""
        try:
            await asyncio.wait_for(self._painted.wait(), self.tuning.first_paint_wait)
        except TimeoutError:
            pass
        now = time.monotonic()
        self.last_typed = max(self.last_typed, now)
        deadline = now + self.tuning.typing_wait
        while (now := time.monotonic()) < deadline and (left := self.last_typed + self.tuning.typing_pause - now) > 0:
            await asyncio.sleep(min(left, deadline - now))  # (till the pause would end: a key since moves it)

    def _load(self, offer: tuple[Sequence[Entry], int] | None, listed: bool,
              held: LayerCandidates | None = None) -> tuple[Sequence[Entry], tuple[Entry, ...]] | None:
        """(In a thread) load the store, then start the watcher; the conversation pane's order
        of the store's entries is found here rather than on the event loop (when the panes
        listed the prepared index: the store then takes over with no wait)."""
        store = self.app.store
        if offer is not None:
            store.offer_conversation(*offer)
        else:  # a large conversation layer stays in the prepared index (as its pane lists it already)
            store.rows_from_prepared(self._conversation_of(held), self.tuning.rows_in_store)
        store.load()
        ordered = None
        if listed and not isinstance(store.snapshot(Layer.CONVERSATION), SavedEntries):
            snapshot = store.snapshot(Layer.CONVERSATION)
            ordered = (snapshot, tuple(pane_order(Layer.CONVERSATION, snapshot)))
        # Tens of thousands of entries live as long as the app: keep them out of the cyclic
        # collector's full passes, which otherwise stall keystrokes for 100+ ms (they are still
        # freed by reference counting when a reload replaces them; the app unfreezes as it closes).
        with self._lock:  # the app may have closed while the store loaded: then nothing is left running
            if self._stopped:
                return ordered
            gc.freeze()
            if self.watch:
                from memtui.core.watch import StoreWatcher  # (watchdog: once the store is loaded)

                self.watcher = StoreWatcher(store).start()
        return ordered

    def _conversation_of(self, held: LayerCandidates | None) -> Callable[[], LayerCandidates | None]:
        """What the store takes a large conversation layer from (`rows_from_prepared`): at its
        load, the prepared index's layer that the pane lists (`held`), as it is, if memtui's
        change counter over the rows has not moved since it was opened (its pane's order is
        found once, its saved file opened once and its rows changed since read once: not a
        second time for the store, ≈20 MB at ten times the store with rows added since the
        index was saved); else, and at every reload after, the saved layer brought up to date."""
        app, kept = self.app, [held] if held is not None else []

        def layer_of() -> LayerCandidates | None:
            if kept:
                layer = kept.pop()  # (not held after: a reload opens the layer as it is then)
                if getattr(layer, "row_gen", None) == row_changes.generation(app.paths.db_path):
                    return layer
            return saved_conversation(app.paths, app.settings)

        return layer_of

    def stop(self) -> None:
        """(The app closes) the watcher stops, and a load still running starts none."""
        with self._lock:
            self._stopped = True
            if self.watcher is not None:
                self.watcher.stop()


class PreviewIndex:
    """The prepared index the preview answers from, as `memtui preview` would open it now:
    opened again (in the preview's worker) once the store or the settings changed since
    (what changed is taken in: an edited file spliced, new rows laid over)."""

    def __init__(self, paths: Paths, settings: Callable[[], Settings]) -> None:
        self.paths = paths
        self.settings = settings
        self.prepared: Prepared | None = None  # None: none (the preview then answers from the store)
        self._changes = 0  # the store's changes (and settings reloads) seen…
        self._at = 0  # …and the count `prepared` was opened at
        self._lock = threading.Lock()

    def opened(self, prepared: Prepared) -> None:
        """(The start) the index the panes list."""
        self.prepared = prepared

    def changed(self) -> None:
        """The store or the settings changed: the next preview opens the index again."""
        self._changes += 1

    def damaged(self) -> None:
        """A section failed its checksum (its file is removed): open the index again next time."""
        with self._lock:
            self._at = -1

    def get(self) -> Prepared | None:
        """(In the preview's worker) the index, opened again first if the store changed since."""
        if self.prepared is None or not self.paths.home.is_dir():
            return None
        with self._lock:
            wanted = self._changes
            if self._at != wanted:
                try:
                    self.prepared = open_prepared(self.paths, self.settings(), lambda _layers: None)
                except Exception as exc:  # the index is derived: the store answers from now on
                    log.warning("prepared index not opened again: %s", exc)
                    self.prepared = None
                self._at = wanted
            return self.prepared

    def current(self) -> Prepared | None:
        """(On the event loop) the index if it is already up to date, without waiting: None
        when it is to be opened again first, or is being opened (the worker does that)."""
        if self.prepared is None or self._at != self._changes or not self.paths.home.is_dir():
            return None
        if not self._lock.acquire(blocking=False):  # a worker is opening it again
            return None
        try:
            return self.prepared if self._at == self._changes else None
        finally:
            self._lock.release()
