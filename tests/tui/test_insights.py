"""The doctor's findings and the injection history in the TUI (SPEC §10, §11)."""

from __future__ import annotations

import threading

from memtui.core.paths import Paths
from memtui.core.serve import build_injection
from memtui.tui.app import MemtuiApp
from memtui.tui.screens import FindingsScreen
from memtui.tui.widgets import EntryPane
from tests.tui.conftest import press_for, screen_text, shown, wait_until


def planted(tmp_path) -> Paths:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    (ws / ".muse" / "settings.json").write_text('{"memoryEnabled": true}\n')
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print()\n")
    (ws / ".muse" / "memory" / "notes.md").write_text(
        "# Notes\n\n- The pool lives in `src/db/pool.ts`\n- Entry point is `src/app.py`\n"
        "- Always run the linter before committing\n")
    (home / "memory" / "prefs.md").write_text("# Prefs\n\n- Always run the linter before committing\n"
                                              "- Prefer small pull requests\n")
    (home / "memory" / "broken.md").write_bytes(b"# Bad\n\n- \xff\xfe not utf-8\n")
    return Paths.resolve(home, ws)


async def loaded(pilot) -> None:
    await wait_until(pilot, lambda: pilot.app.loaded and pilot.app.findings is not None, message="doctor run")


def entry(app, layer: str, start: str):
    pane = app.query_one(f"#pane-{layer}", EntryPane)
    return pane, next(e for e in pane.entries if e.text.startswith(start))


async def test_badges_detail_and_findings_list(tmp_path):
    paths = planted(tmp_path)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await loaded(pilot)
        kinds = {f.kind for f in app.findings}
        assert {"stale_reference", "duplicate", "invalid"} <= kinds
        text = screen_text(app)
        assert "⚑stale" in text and "⚑dup" in text
        assert "The pool lives in" in text  # the badge never hides the text
        pane, stale = entry(app, "project", "The pool lives")
        _, fine = entry(app, "project", "Entry point")
        assert fine.id not in app.findings_by_entry
        pane.focus()
        pane.select_id(stale.id)
        await wait_until(pilot, lambda: "src/db/pool.ts" in shown(app.query_one("#detail-body"))
                         and "⚑ stale" in shown(app.query_one("#detail-body")), message="reason in the detail")
        await press_for(pilot, "D", FindingsScreen)
        # drawn, with the file's name whole however long its folder is (it wrapped inside
        # `broken.md` under a longer temporary folder)
        await wait_until(pilot, lambda: "broken.md" in screen_text(app), message="the findings drawn")
        listing = screen_text(app)
        assert "broken.md" in listing and "invalid" in listing and "dup" in listing
        findings = app.screen.findings
        dup = next(i for i, f in enumerate(findings) if f.kind == "duplicate")
        assert findings[dup].layer == "project"
        pane.select_id(fine.id)
        app.screen.query_one("#findings-list").move_cursor(dup)
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, FindingsScreen), message="jump")
        assert app.main.last_layer == "project"
        assert app.selected_entry().id == findings[dup].entry_id


async def test_history_in_detail_and_sort_by_most_injected(tmp_path):
    paths = planted(tmp_path)
    for _ in range(3):
        result = build_injection(paths.workspace, "small pull requests", home=paths.home, record=True)
        assert result.count
    prefs = paths.user_root / "prefs.md"  # a memory written after those runs, first in its file
    prefs.write_text(prefs.read_text().replace("# Prefs\n\n", "# Prefs\n\n- Brand new, never injected\n"))
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await loaded(pilot)
        injected = [eid for eid, (n, *_) in app.history.items() if n == 3]
        assert injected
        pane = app.query_one("#pane-user", EntryPane)
        target = next(e for e in pane.entries if e.id in injected and e.text.startswith("Prefer small"))
        assert pane.entries[0].text.startswith("Brand new")  # file order first
        pane.focus()
        pane.select_id(target.id)
        await wait_until(pilot, lambda: "injected 3 times" in shown(app.query_one("#detail-body")),
                         message="history in the detail")
        await pilot.press("o")
        assert app.main.order == "most"
        await wait_until(pilot, lambda: pane.entries[-1].text.startswith("Brand new"), message="most injected first")
        assert app.history[pane.entries[0].id][0] == 3
        await pilot.press("o", "o")
        assert app.main.order == "file"
        assert pane.entries[0].text.startswith("Brand new")


async def test_thousands_of_findings_are_walked_by_keys_and_a_cut_one_is_shown_whole(demo_paths):
    """A large store has thousands of findings: the list renders a line each (cut to fit),
    the highlighted one is shown whole below it when its line is cut, and enter chooses it."""
    from memtui.core.doctor import Finding

    many = [Finding("duplicate", f"notes-{i:04d}.md:{i}", f"repeats notes-{i + 1:04d}.md:{i + 1}" + " and more" * 8,
                    entry_id=f"id-{i}", layer="user") for i in range(3000)]
    app = MemtuiApp(demo_paths, watch=False)
    chosen: list[Finding | None] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        app.push_screen(FindingsScreen(many), chosen.append)
        await wait_until(pilot, lambda: isinstance(app.screen, FindingsScreen) and app.screen.query("#findings-list"),
                         message="the findings")
        rows = app.screen.query_one("#findings-list")
        await pilot.press("end")
        await wait_until(pilot, lambda: "notes-3000.md:3000 and more and more" in screen_text(app).replace("\n", " "),
                         message="the last finding whole")
        assert rows.cursor == 2999
        top = int(rows.scroll_offset.y)
        assert top <= 2999 < top + rows.scrollable_content_region.height
        listed = [line for line in screen_text(app).splitlines() if "notes-" in line]
        assert all("…" in line for line in listed[:-2])  # the list's lines are cut to fit
        await pilot.press("enter")
        await wait_until(pilot, lambda: chosen != [], message="chosen")
    assert chosen == [many[-1]]


async def test_a_half_merged_file_is_marked_on_its_entries_and_in_the_detail(tmp_path):
    """SPEC §8 "Unmerged files": the TUI marks a file holding git conflict markers; its marked
    region's lines are no entries."""
    paths = planted(tmp_path)
    (paths.project_root / "team.md").write_text(
        "- Alice owns billing\n<<<<<<< HEAD\n- Bob owns search\n=======\n- Carol owns search\n>>>>>>> theirs\n"
        "- Dan owns infra\n")
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await loaded(pilot)
        pane, alice = entry(app, "project", "Alice owns")
        assert not [e for e in pane.entries if "owns search" in e.text or "=======" in e.text]
        await wait_until(pilot, lambda: "⚑merge" in screen_text(app), message="the file marked in the pane")
        pane.focus()
        pane.select_id(alice.id)
        await wait_until(pilot, lambda: "⚑ merge" in shown(app.query_one("#detail-body"))
                         and "lines 2-6" in shown(app.query_one("#detail-body")), message="the conflict in the detail")


async def test_quitting_does_not_wait_for_a_doctor_still_running_in_the_app(demo_paths, monkeypatch):
    """A doctor that takes its time in the app's own process (a store under the child process's
    size) is left behind at `q`: the process ends with the app, not seconds after its screen."""
    from memtui.tui import findings as tui_findings

    started, release = threading.Event(), threading.Event()
    real = tui_findings.findings

    def slow(*args, **kwargs):
        started.set()
        release.wait(timeout=60)
        return real(*args, **kwargs)

    monkeypatch.setattr(tui_findings, "findings", slow)
    app = MemtuiApp(demo_paths, watch=False)
    try:
        async with app.run_test(size=(140, 45)) as pilot:
            await wait_until(pilot, started.is_set, message="the doctor running")
            await pilot.press("q")
        doctors = [t for t in threading.enumerate() if t.name == "memtui-doctor"]
        assert doctors and all(t.daemon and t.is_alive() for t in doctors)  # the app is gone; exit would not join it
    finally:
        release.set()
        for thread in threading.enumerate():
            if thread.name == "memtui-doctor":
                thread.join(timeout=60)  # not left running under the next test


async def test_a_doctor_that_fails_says_so_and_runs_again_when_asked(demo_paths, monkeypatch):
    from memtui.tui import findings as tui_findings

    calls: list[int] = []

    def failing(*args, **kwargs):
        calls.append(1)
        raise OSError("disk on fire")

    monkeypatch.setattr(tui_findings, "findings", failing)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.findings is not None and not app.insights.running, message="the failed run")
        assert [f.reason for f in app.findings] == ["the doctor could not run: disk on fire"]
        app.insights.refresh()  # not stuck as running: a change runs it again
        await wait_until(pilot, lambda: len(calls) == 2 and not app.insights.running, message="a second run")
