"""The start: the panes and the first preview come from the prepared index `memtui preview`
saved, while the store loads behind them; nothing moves when the store takes over, a write
asked for meanwhile waits for it, and a first run says in the header that it is indexing."""

from __future__ import annotations

import threading

from memtui.core.model import LAYERS
from memtui.core.serve import build_injection
from memtui.core.store import MemoryStore
from memtui.tui import startup
from memtui.tui.app import MemtuiApp
from memtui.tui.widgets import EntryPane
from tests.tui.conftest import wait_until


def held_store(app: MemtuiApp) -> threading.Event:
    """The app's store loads only once the returned event is set."""
    release = threading.Event()
    load = app.store.load

    def held():
        assert release.wait(30), "the test never released the store"
        return load()

    app.store.load = held  # type: ignore[method-assign]
    return release


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
        app.remember("Deploy previews expire after 7 days", "user")
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
        assert "indexing" not in app.sub_title
        assert all(listed(app, layer) for layer in LAYERS)


async def test_a_large_stores_doctor_runs_in_a_child_process_with_the_same_findings(tmp_path, monkeypatch):
    from memtui.core.doctor import findings
    from memtui.tui import app as app_module
    from tests.tui.test_insights import planted

    paths = planted(tmp_path)
    monkeypatch.setattr(app_module, "DOCTOR_IN_PROCESS", 0)  # as if the store were large
    runs = []
    run = app_module.DoctorProcess.run

    def counted(self, p):
        runs.append(p)
        return run(self, p)

    monkeypatch.setattr(app_module.DoctorProcess, "run", counted)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.findings is not None, timeout=60, message="doctor run")
        assert runs == [paths]
        assert sorted(app.findings, key=repr) == sorted(findings(paths), key=repr)
        assert {"stale_reference", "duplicate", "invalid"} <= {f.kind for f in app.findings}
