"""The start: the panes and the first preview come from the prepared index `memtui preview`
saved, while the store loads behind them; nothing moves when the store takes over, a write
asked for meanwhile waits for it, and a first run says in the header that it is indexing."""

from __future__ import annotations

import threading

import pytest

from memtui.core.model import LAYERS
from memtui.core.serve import build_injection
from memtui.core.store import MemoryStore
from memtui.tui import startup
from memtui.tui.app import MemtuiApp
from memtui.tui.startup import Tuning
from memtui.tui.widgets import EntryPane
from tests.tui.conftest import screen_text
from tests.tui.helpers import held_store, wait_until


def listed(app: MemtuiApp, layer: str) -> list:
    return list(app.query_one(f"#pane-{layer}", EntryPane).entries)


async def test_panes_and_preview_come_from_the_prepared_index_until_the_store_loads(demo_paths):
    cli = build_injection(demo_paths.workspace, "", home=demo_paths.home)  # `memtui preview` saves the index
    app = MemtuiApp(demo_paths, watch=False)
    release = held_store(app)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.ready.is_set() and app.last_result is not None, message="first preview")
        assert not app.loaded and app.prepared is not None
        assert app.last_result.text == cli.text and app.last_result.count == cli.count
        before = {layer: listed(app, layer) for layer in LAYERS}
        assert all(before.values())
        app.main.query_one("#query").focus()  # the user is already typing when the store arrives
        release.set()
        await wait_until(pilot, lambda: app.loaded, message="store loaded")
        await pilot.pause()
        own = MemoryStore(demo_paths, index=False)
        own.load()
        for layer in LAYERS:
            assert listed(app, layer) == before[layer] == startup.pane_order(layer, own.snapshot(layer))
        own.close()
        assert app.focused is not None and app.focused.id == "query"


async def test_a_write_asked_for_before_the_store_loads_waits_for_it(demo_paths):
    build_injection(demo_paths.workspace, "", home=demo_paths.home)
    app = MemtuiApp(demo_paths, watch=False)
    release = held_store(app)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.ready.is_set(), message="panes")
        app.main.remember("Deploy previews expire after 7 days", "user")
        await pilot.pause(0.2)
        notes = demo_paths.default_file("user")

        def saved() -> bool:
            return notes.is_file() and "Deploy previews expire" in notes.read_text(encoding="utf-8")

        assert not saved()
        release.set()
        await wait_until(pilot, saved,
                         message="the write, once the store loaded")
        await wait_until(pilot, lambda: any(e.text == "Deploy previews expire after 7 days"
                                            for e in listed(app, "user")), message="the new entry listed")


async def test_a_first_run_says_it_is_indexing_until_the_panes_fill(demo_paths, monkeypatch):
    release = threading.Event()
    open_prepared = startup.prepared_index.open_prepared  # what builds the index on a first run

    entered = threading.Event()

    def held(*args, **kwargs):
        entered.set()
        assert release.wait(30), "the test never released the index"
        return open_prepared(*args, **kwargs)

    monkeypatch.setattr(startup.prepared_index, "open_prepared", held)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: "indexing user, project, conversation memories" in app.sub_title,
                         message="the header says it is indexing")
        assert entered.is_set() and not app.ready.is_set()  # the build is held right now
        release.set()
        await wait_until(pilot, lambda: app.ready.is_set() and app.last_result is not None, message="first preview")
        await wait_until(pilot, lambda: "indexing" not in app.sub_title, message="the header cleared as the panes filled")
        assert all(listed(app, layer) for layer in LAYERS)


LARGE = Tuning(doctor_in_process=0)  # as if the store were large


def large_store_doctor(tmp_path, monkeypatch):
    """The planted store, its doctor run as a large store's is (in a child process) when the
    app is given `LARGE`, each run of it counted: (paths, runs)."""
    from memtui.tui import findings as findings_module
    from tests.tui.test_insights import planted

    paths = planted(tmp_path)
    runs = []
    run = findings_module.DoctorProcess.run

    def counted(self, p):
        runs.append(p)
        return run(self, p)

    monkeypatch.setattr(findings_module.DoctorProcess, "run", counted)
    return paths, runs


async def test_a_large_stores_doctor_runs_in_a_child_process_with_the_same_findings(tmp_path, monkeypatch):
    from memtui.core.doctor import findings

    paths, runs = large_store_doctor(tmp_path, monkeypatch)
    app = MemtuiApp(paths, watch=False, tuning=LARGE)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.findings is not None, timeout=60, message="doctor run")
        assert runs == [paths]
        assert sorted(app.findings, key=repr) == sorted(findings(paths), key=repr)
        assert {"stale_reference", "duplicate", "invalid"} <= {f.kind for f in app.findings}


async def test_a_large_stores_doctor_starts_before_the_store_loads_and_runs_again_if_memories_moved(tmp_path, monkeypatch):
    """The doctor's child process starts as the panes list the prepared index, not once the
    store has loaded behind the first preview. What it read is compared with what the store
    read: a file changed in between (before any watcher) has the doctor run again."""
    paths, runs = large_store_doctor(tmp_path, monkeypatch)
    release = threading.Event()
    load = MemoryStore.load

    def held(self):
        assert release.wait(60), "the store's load was never let go"
        return load(self)

    monkeypatch.setattr(MemoryStore, "load", held)
    app = MemtuiApp(paths, watch=False, tuning=LARGE)
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            await wait_until(pilot, lambda: app.findings is not None, timeout=60, message="the early doctor's findings")
            assert not app.loaded and len(runs) == 1  # found while the store's load was held
            assert "⚑stale" in screen_text(app)  # its badges on the prepared index's rows
            notes = paths.project_root / "notes.md"  # a memory changes before the store reads it
            notes.write_text(notes.read_text() + "- Prefer small pull requests\n")
            release.set()
            await wait_until(pilot, lambda: app.loaded and len(runs) == 2 and not app.insights.running, timeout=60,
                             message="the doctor run again")
            added = next(e for e in app.store.entries("project") if e.text == "Prefer small pull requests")
            assert "duplicate" in [f.kind for f in app.findings_by_entry.get(added.id, ())], app.findings
    finally:
        release.set()


@pytest.mark.parametrize("findings_in", ["before the load", "after the load"])
async def test_after_an_outside_edit_the_early_doctor_is_not_run_again_for_the_index_the_load_brought_in_step(
        tmp_path, monkeypatch, findings_in):
    """A file edited outside since the store last loaded (by an editor, or Muse: `memtui
    preview` and the hook index nothing): the early doctor, in its child, finds the search
    index out of step with it; the store's load then indexes it. Only those findings are
    found again (from the store, in their place), not the doctor's whole run: the findings
    are a fresh doctor's after the load, from one child process. Its findings come in while
    the store's load is held, or are held until the store has loaded."""
    from memtui.core.doctor import findings
    from memtui.tui import findings as findings_module

    paths, runs = large_store_doctor(tmp_path, monkeypatch)
    indexed = MemoryStore(paths)  # the index in step with the files, as a last start left it
    indexed.load()
    indexed.close()
    notes = paths.project_root / "notes.md"
    notes.write_text(notes.read_text() + "- Keep the database pool at twenty connections\n")
    assert any(f.kind == "index" for f in findings(paths))  # out of step until a store loads
    child_done, loaded = threading.Event(), threading.Event()
    load, run = MemoryStore.load, findings_module.DoctorProcess.run

    def held_load(self):
        assert child_done.wait(60), "the doctor's child never ended"  # it read the index out of step
        try:
            return load(self)
        finally:
            loaded.set()

    def held_run(self, p):
        try:
            return run(self, p)
        finally:
            child_done.set()
            if findings_in == "after the load":
                assert loaded.wait(60), "the store never loaded"

    monkeypatch.setattr(MemoryStore, "load", held_load)
    monkeypatch.setattr(findings_module.DoctorProcess, "run", held_run)
    app = MemtuiApp(paths, watch=False, tuning=LARGE)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.findings is not None and not app.insights.running,
                         timeout=60, message="the doctor's findings and the store")
        await pilot.pause()
        assert len(runs) == 1  # the doctor's child ran once
        assert list(app.findings) == findings(paths)  # in the doctor's order
        assert not any(f.kind == "index" for f in app.findings)
        added = next(e for e in app.store.entries("project") if e.text == "Keep the database pool at twenty connections")
        assert app.findings_by_entry.get(added.id, ()) == ()


async def test_the_collector_memtui_turns_off_for_the_start_is_on_again_once_the_first_preview_is_painted(demo_paths):
    """`memtui` turns the cyclic garbage collector off before it imports the app; the app turns
    it back on (what the start made frozen) once its first preview is on screen, before the
    store loads behind it."""
    import gc

    build_injection(demo_paths.workspace, "", home=demo_paths.home)
    app = MemtuiApp(demo_paths, watch=False)
    release = held_store(app)
    gc.disable()
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            await wait_until(pilot, lambda: app.startup.painted, message="first preview painted")
            assert gc.isenabled() and app.last_result is not None and not app.loaded
            release.set()
            await wait_until(pilot, lambda: app.loaded, message="store loaded")
    finally:
        gc.enable()
        gc.unfreeze()


async def test_a_first_run_builds_the_markdown_layers_in_a_spawned_child_and_shows_what_preview_shows(
        demo_paths, caplog, monkeypatch):
    """The TUI has threads, so a large store's first run has its Markdown layers built by a
    new interpreter beside the load worker (never a fork); what it shows is what `memtui
    preview` answers from the layers both saved."""
    import logging

    from memtui.core.store import aside
    from memtui.core.store.prepared import cache_path

    monkeypatch.setattr(aside, "SPAWN_DB_BYTES", 0)  # as if muse.db were large
    caplog.set_level(logging.INFO, logger="memtui.prepared")
    assert not any(cache_path(demo_paths, layer).exists() for layer in LAYERS)
    app = MemtuiApp(demo_paths, watch=False)
    release = held_store(app)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.ready.is_set() and app.last_result is not None, message="first preview")
        assert any("user and project layers built by a child process" in r.getMessage() for r in caplog.records)
        assert all(cache_path(demo_paths, layer).is_file() for layer in LAYERS)
        cli = build_injection(demo_paths.workspace, "", home=demo_paths.home)
        assert app.last_result.text == cli.text and app.last_result.count == cli.count
        release.set()
        await wait_until(pilot, lambda: app.loaded, message="store loaded")


async def test_the_first_frame_lists_a_saved_prepared_index(demo_paths, monkeypatch):
    """The app opens the prepared index from its start: the main screen's mount waits for it
    (here without a limit), so no frame with loading indicators goes out before the panes."""
    import time

    build_injection(demo_paths.workspace, "", home=demo_paths.home)
    opening = startup.open_prepared

    def slow(*args, **kwargs):
        time.sleep(0.5)  # (a large index on a busy machine)
        return opening(*args, **kwargs)

    monkeypatch.setattr(startup, "open_prepared", slow)
    app = MemtuiApp(demo_paths, watch=False, tuning=Tuning(panes_wait=60.0))
    frames: list[tuple[bool, bool]] = []
    display = app._display

    def painted(screen, renderable):
        display(screen, renderable)
        if renderable is not None:
            panes = list(app.main.query(EntryPane)) if app.main.is_attached else []
            frames.append((app.ready.is_set(), any(p.loading for p in panes)))

    app._display = painted  # type: ignore[method-assign]
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.last_result is not None, message="first preview")
        assert frames and frames[0] == (True, False), frames[:3]
        assert all(listed(app, layer) for layer in LAYERS)


async def test_a_damaged_prepared_index_is_found_at_the_start_and_the_store_fills_the_panes(demo_paths):
    """The panes make their entries from the saved rows as they are shown: every chunk of rows
    is checked as the index opens, so a damaged one is found then (the file removed, the panes
    filled by the store), not while a frame is painted."""
    from memtui.core.settings import load_settings
    from memtui.core.store import prepared, saved_file, saved_layer

    build_injection(demo_paths.workspace, "", home=demo_paths.home)
    saved = saved_layer.open_layer(demo_paths, load_settings(demo_paths), "conversation")
    assert saved is not None and saved.index.size > 0
    offset, _, _ = saved_file.ChunkTable(*saved.saved["sections"][0])[0]  # the first chunk of rows: the rows on screen
    where = saved.sections.base + offset + 3
    saved.close()
    path = prepared.cache_path(demo_paths, "conversation")
    data = bytearray(path.read_bytes())
    data[where] ^= 0xFF
    path.write_bytes(bytes(data))
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None, message="loaded")
        await pilot.pause()
        own = MemoryStore(demo_paths, index=False)
        own.load()
        assert listed(app, "conversation") == startup.pane_order("conversation", own.snapshot("conversation"))
        own.close()
    assert app.return_code in (None, 0)


async def test_an_app_closed_while_its_store_loads_leaves_no_watcher_running(demo_paths):
    """The load's thread outlives the app that closed meanwhile: it starts no watcher and
    freezes nothing once the app has unfrozen what it froze."""
    import gc

    app = MemtuiApp(demo_paths, watch=True)
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()
    store_load = app.store.load

    def held() -> None:
        entered.set()
        assert release.wait(30), "the test never released the store"
        store_load()

    app.store.load = held  # type: ignore[method-assign]
    load = app.startup._load

    def load_then_say(*args):
        try:
            return load(*args)
        finally:
            finished.set()

    app.startup._load = load_then_say  # type: ignore[method-assign]
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, entered.is_set, message="the store loading")
    release.set()
    assert finished.wait(30), "the load never ended"
    assert app.startup.watcher is None
    assert gc.get_freeze_count() == 0


async def test_a_failed_load_runs_neither_the_doctor_nor_the_inbox(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    ran: list[str] = []
    app.insights.loaded = lambda: ran.append("doctor")  # type: ignore[method-assign]
    app.refresh_inbox = lambda: ran.append("inbox")  # type: ignore[method-assign]

    def broken() -> None:
        raise OSError("the disk went away")

    app.store.load = broken  # type: ignore[method-assign]
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.startup.loaded, message="the load said")
        await wait_until(pilot, lambda: "the disk went away" in str([n.message for n in app._notifications]),
                         message="the failure said")
        await pilot.pause()
        assert ran == []


def test_a_doctor_child_stopped_midway_gives_an_error_not_findings(tmp_path, monkeypatch):
    """A child ended before it wrote its findings (the app quitting) is a `DoctorFailed`
    naming how it ended, never partial findings; one asked for after `stop()` starts no child.
    The child here is a real process that cannot finish on its own, so the stop always comes first."""
    import time

    import pytest

    from memtui.core import process_gate
    from memtui.tui import insights
    from memtui.tui.insights import DoctorFailed, DoctorProcess
    from tests.tui.test_insights import planted

    paths = planted(tmp_path)
    start = process_gate.start_python
    monkeypatch.setattr(insights.process_gate, "start_python",
                        lambda args, **kw: start(["-c", "import time; time.sleep(120)"], **kw))
    doctor = DoctorProcess()
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            doctor.run(paths)
        except BaseException as exc:  # (any: the assertion below names it)
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 30
    while doctor._process is None and time.monotonic() < deadline:  # wait for the child, with a deadline
        time.sleep(0.01)
    assert doctor._process is not None, "the child never started"
    doctor.stop()
    worker.join(60)
    assert not worker.is_alive() and len(outcome) == 1
    assert isinstance(outcome[0], DoctorFailed) and "without findings" in str(outcome[0]), outcome
    with pytest.raises(DoctorFailed, match="closing"):
        doctor.run(paths)


def test_a_doctor_child_gives_the_findings_packed(tmp_path):
    from memtui.core.doctor import findings
    from memtui.core.finding_set import FoundSet
    from memtui.tui.insights import DoctorProcess
    from tests.tui.test_insights import planted

    paths = planted(tmp_path)
    found, read = DoctorProcess().run(paths)
    assert isinstance(found, FoundSet) and read is not None
    assert sorted(found, key=repr) == sorted(findings(paths), key=repr)
