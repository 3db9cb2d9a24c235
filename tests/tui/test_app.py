"""The real app driven by Pilot; every behaviour checked on disk."""

from __future__ import annotations

import json

from memtui.core.finding_set import FoundSet
from memtui.core.paths import Paths
from memtui.tui.app import MemtuiApp
from memtui.tui.screens import ConfirmScreen, ConflictScreen, EditScreen, SettingsScreen
from memtui.tui.widgets import EntryPane
from tests.tui.conftest import press_for, screen_text, shown, wait_until


def fold_title(app) -> str:
    return str(app.query_one("#fold").title)


async def started(pilot):
    await wait_until(pilot, lambda: pilot.app.loaded and pilot.app.last_result is not None, message="app loaded")


def select(app, layer: str, predicate) -> None:
    pane = app.query_one(f"#pane-{layer}", EntryPane)
    pane.focus()
    app.main.last_layer = layer
    entry = next((e for e in pane.entries if predicate(e)), None)
    assert entry is not None and pane.select_id(entry.id), "no such entry"


async def open_editor(pilot, layer: str, predicate) -> None:
    """Select the first entry of `layer` matching `predicate` and press e."""
    select(pilot.app, layer, predicate)
    await pilot.press("e")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, EditScreen), message="the editor")


async def open_delete(pilot, layer: str, predicate) -> None:
    """Select the first entry of `layer` matching `predicate` and press d."""
    select(pilot.app, layer, predicate)
    await pilot.press("d")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), message="the confirmation")


async def test_typing_a_query_updates_the_fold(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        assert fold_title(app).startswith("33 memories injected · 834/2000 tokens · truncated")
        await pilot.press("p")
        await pilot.press(*"pnpm")
        await wait_until(pilot, lambda: app.last_result.query == "pnpm", message="preview for the query")
        from memtui.core.serve import build_injection

        expected = build_injection(demo_paths.workspace, "pnpm", home=demo_paths.home)
        assert fold_title(app).startswith(f"{expected.count} memories injected · {expected.tokens}/2000 tokens")
        assert shown(app.query_one("#injected-text")).startswith("## Memory")
        await pilot.press("escape", "f")
        assert app.query_one("#fold").collapsed is False


async def test_edit_and_save_changes_exactly_those_lines(demo_paths):
    path = demo_paths.user_root / "preferences.md"
    before = path.read_text().splitlines(keepends=True)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await open_editor(pilot, "user", lambda e: e.text == "Use vitest, not jest")
        editor = app.screen.query_one("#editor")
        editor.text = "Use vitest (never jest)"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditScreen))
    after = path.read_text().splitlines(keepends=True)
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(after) == len(before)
    assert [after[i] for i in changed][-1] == "- Use vitest (never jest)\n"
    assert all(before[i].startswith("updatedAt:") for i in changed[:-1])


async def test_external_editor_edits_the_selected_entry_and_saves_it(demo_paths, tmp_path, monkeypatch):
    """E hands the entry to $EDITOR (here a real sed process), saves what it left in the file
    (only that entry's lines change) and removes the file. The terminal hand-over itself
    cannot happen headless, so suspending is a no-op here."""
    import contextlib
    import tempfile

    path = demo_paths.user_root / "preferences.md"
    before = path.read_text().splitlines(keepends=True)
    handed = tmp_path / "handed-over"
    handed.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(handed))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "sed -i s/jest/mocha/")
    app = MemtuiApp(demo_paths, watch=False)
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        select(app, "user", lambda e: e.text == "Use vitest, not jest")
        await pilot.press("E")
        await wait_until(pilot, lambda: "- Use vitest, not mocha\n" in path.read_text(), message="the edit saved")
    after = path.read_text().splitlines(keepends=True)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert [after[i] for i in changed][-1] == "- Use vitest, not mocha\n"
    assert all(before[i].startswith("updatedAt:") for i in changed[:-1])
    assert list(handed.iterdir()) == []


async def test_delete_confirm_then_undo_restores_bytes(demo_paths):
    path = demo_paths.project_root / "context.md"
    original = path.read_bytes()
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await open_delete(pilot, "project", lambda e: e.text.startswith("Use PostgreSQL 16"))
        assert "Use PostgreSQL 16" in shown(app.screen.query_one("#confirm-body"))
        await pilot.press("y")
        await wait_until(pilot, lambda: b"Use PostgreSQL 16" not in path.read_bytes(), message="line deleted")
        assert path.read_bytes().replace(b"updatedAt: 20", b"") .count(b"\n") == original.count(b"\n") - 1
        await pilot.press("u")
        await wait_until(pilot, lambda: path.read_bytes() == original, message="undo restores the bytes")
        await wait_until(pilot, lambda: any(e.text.startswith("Use PostgreSQL 16") for e in app.query_one("#pane-project", EntryPane).entries))


async def test_delete_can_be_declined(demo_paths):
    path = demo_paths.project_root / "context.md"
    original = path.read_bytes()
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await open_delete(pilot, "project", lambda e: e.text.startswith("Use PostgreSQL 16"))
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
    assert path.read_bytes() == original


async def test_settings_toggle_writes_memory_enabled_and_keeps_other_keys(demo_paths):
    ws_settings = demo_paths.workspace_settings
    ws_settings.write_text(json.dumps({"memoryEnabled": True, "editor": {"tabs": 2}}))
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await press_for(pilot, "s", SettingsScreen)
        app.screen.query_one("#ws-enabled").value = False
        app.screen.query_one("#budget-user").value = "500"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        await wait_until(pilot, lambda: app.last_result.disabled_reason == "switch_off", message="preview shows off")
        assert "memory is off" in fold_title(app)
    assert json.loads(ws_settings.read_text()) == {"memoryEnabled": False, "editor": {"tabs": 2}}
    global_data = json.loads(demo_paths.global_settings.read_text())
    assert global_data["theme"] == "muse-classic" and global_data["memory"]["budget"] == {"user": 500}


async def test_invalid_settings_value_is_not_saved(demo_paths):
    before = demo_paths.global_settings.read_text()
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await press_for(pilot, "s", SettingsScreen)
        app.screen.query_one("#gate-user").value = "7"
        await pilot.press("ctrl+s")
        await pilot.pause(0.1)
        assert isinstance(app.screen, SettingsScreen)
        assert "gate user" in shown(app.screen.query_one("#settings-error"))
    assert demo_paths.global_settings.read_text() == before


async def test_toggle_key_turns_memory_off_and_on(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: app.last_result.disabled_reason == "switch_off")
        assert json.loads(demo_paths.workspace_settings.read_text())["memoryEnabled"] is False
        await pilot.press("t")
        await wait_until(pilot, lambda: app.last_result.count > 0)


async def test_file_written_from_outside_appears_in_its_pane(demo_paths):
    app = MemtuiApp(demo_paths)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: app.startup.watcher is not None)
        (demo_paths.project_root / "outside.md").write_text("- Added from another shell\n")
        pane = app.query_one("#pane-project", EntryPane)
        await wait_until(pilot, lambda: any(e.text == "Added from another shell" for e in pane.entries),
                         message="outside write shown")
        assert pane.border_title == "Project (11)"


async def test_selection_stays_on_the_same_entry_after_reload(demo_paths):
    app = MemtuiApp(demo_paths)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: app.startup.watcher is not None)
        select(app, "user", lambda e: e.text.startswith("Editor is Neovim"))
        target = app.selected_entry().id
        path = demo_paths.user_root / "aaa-first.md"
        path.write_text("- a new first file shifts every row down\n")
        pane = app.query_one("#pane-user", EntryPane)
        await wait_until(pilot, lambda: len(pane.entries) == 28)
        assert app.selected_entry().id == target


async def test_conflict_while_editing_is_resolved_by_the_user(demo_paths):
    path = demo_paths.user_root / "tools.md"
    app = MemtuiApp(demo_paths)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: app.startup.watcher is not None)
        await open_editor(pilot, "user", lambda e: e.text.startswith("Shell is fish"))
        theirs = path.read_text().replace("Shell is fish", "Shell is zsh")
        path.write_text(theirs)
        await wait_until(pilot, lambda: app.screen.conflict, message="conflict banner")
        app.screen.query_one("#editor").text = "Shell is nushell"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConflictScreen))
        assert "Shell is zsh" in shown(app.screen.query_one("#theirs-text"))
        await pilot.press("t")  # take theirs
        await wait_until(pilot, lambda: not isinstance(app.screen, ConflictScreen))
        assert path.read_text() == theirs
        # and "save as new" keeps both
        await open_editor(pilot, "user", lambda e: e.text.startswith("Shell is zsh"))
        path.write_text(theirs.replace("Shell is zsh", "Shell is bash"))
        await wait_until(pilot, lambda: app.screen.conflict)
        app.screen.query_one("#editor").text = "Shell is nushell"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConflictScreen))
        await pilot.press("a")
        await wait_until(pilot, lambda: "- Shell is nushell" in demo_paths.default_file("user").read_text())
        assert "Shell is bash" in path.read_text()


async def test_create_in_the_focused_layer(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await pilot.press("2", "n")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen))
        await pilot.press(*"Ship on Fridays")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditScreen))
    assert (demo_paths.project_root / "context.md").read_text().endswith("- Ship on Fridays\n")


async def test_memory_off_says_so_and_how_to_turn_it_on(tmp_path):
    paths = Paths(tmp_path / "home", tmp_path / "ws")
    (tmp_path / "ws").mkdir()
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        assert "memory is off" in fold_title(app)
        assert "press t" in shown(app.query_one("#left-out")).lower()
        assert "memory OFF" in app.sub_title


async def test_fuzzy_filter_narrows_every_pane(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await pilot.press("slash", *"pgbouncer")
        await wait_until(pilot, lambda: app.query_one("#pane-project", EntryPane).border_title.startswith("Project (1 of"))
        texts = [e.text for e in app.query_one("#pane-project", EntryPane).entries]
        assert texts == ["Use PostgreSQL 16 + pgbouncer in transaction mode; prepared statements are off"]


async def test_help_screen_lists_the_keys(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.1)
        from memtui.tui.screens import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        text = app.export_screenshot()  # what is on the screen
        for key in ("Delete", "Undo", "Settings", "$EDITOR"):
            assert key in text


async def test_changes_elsewhere_in_the_file_are_no_conflict(demo_paths):
    path = demo_paths.user_root / "tools.md"
    app = MemtuiApp(demo_paths)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: app.startup.watcher is not None)
        await open_editor(pilot, "user", lambda e: e.text.startswith("Shell is fish"))
        outside = path.read_text().replace("## Tools\n", "## Tools\n\n- Added above it from another shell\n")
        path.write_text(outside)
        await wait_until(pilot, lambda: any(e.text.startswith("Added above it") for e in app.store.entries("user")))
        assert not app.screen.conflict
        app.screen.query_one("#editor").text = "Shell is nushell"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "- Shell is nushell\n" in path.read_text(), message="saved in place")
        assert not isinstance(app.screen, ConflictScreen)
    import datetime

    expected = []
    for line in outside.splitlines(keepends=True):
        if line.startswith("- Shell is fish"):
            line = "- Shell is nushell\n"
        elif line.startswith("updatedAt:"):
            line = f"updatedAt: {datetime.date.today().isoformat()}\n"
        expected.append(line)
    assert path.read_text() == "".join(expected)  # the outside change is kept, only our entry changed


async def test_a_failing_load_is_reported_not_hidden(demo_paths, monkeypatch):
    from memtui.core.store import MemoryStore

    def broken(self):
        raise OSError("disk on fire")

    monkeypatch.setattr(MemoryStore, "load", broken)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.loaded, message="load reported")
        await wait_until(pilot, lambda: any("disk on fire" in str(n.message) for n in app._notifications))
        assert not any(p.loading for p in app.query(EntryPane))


def test_help_names_every_key_of_the_inbox(demo_paths):
    from textual.binding import Binding

    from memtui.tui.screens.inbox import InboxScreen

    row = dict(MemtuiApp(demo_paths, watch=False).main.help_rows())["i"]
    keys = [b.key for b in InboxScreen.BINDINGS if isinstance(b, Binding) and b.action != "close"]
    assert keys and all(f"({key}" in row or f"; {key} " in row or f" {key}:" in row for key in keys), (keys, row)


async def test_insights_that_arrive_while_the_app_closes_are_dropped(demo_paths):
    """The doctor's worker can finish after the screen has removed its panes (on exit):
    its message must not raise in the closing app."""
    from memtui.tui.messages import InsightsReady

    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: app.findings is not None and not app.insights.running,
                         message="first insights")
        for pane in app.query(EntryPane):
            await pane.remove()
        app.post_message(InsightsReady(FoundSet(), {}))
        await pilot.pause()
        assert app.findings == []


async def test_worker_results_that_arrive_while_the_app_closes_are_dropped(demo_paths, monkeypatch):
    """Every kind of worker or watcher result, posted at the worst moment: while the app
    closes and its panes are being removed. None may raise (run_test re-raises what did)."""
    from memtui.core.store import StoreChange
    from memtui.core.store.edits import Change
    from memtui.tui import messages as m
    from memtui.tui.startup import Opened

    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: app.findings is not None and not app.insights.running,
                         message="first insights")
        entry = app.selected_entry()
        assert entry is not None
        change = Change("c1", 0.0, "edit", "edited", str(demo_paths.workspace))
        late = [m.StoreLoaded(), m.PreparedOpened(Opened(app.prepared, {})), m.IndexBuilding(["user"]),
                m.StoreChanged(StoreChange(frozenset({"user"}))), m.InsightsReady([], {}), m.InboxReady([]),
                m.EntryAdded(entry), m.AlreadyRemembered(entry, entry.layer), m.EntryEdited(entry),
                m.EditConflict(entry, "mine", entry), m.DeleteAsked(entry, None), m.EntryDeleted(entry, change),
                m.ChangeUndone(change), m.UndoLogRead([change], None), m.StoreReloaded({}),
                m.MemorySwitched(True, demo_paths.workspace_settings), m.SettingsSaved("memtui-dark")]
        posted: list[bool] = []

        def unmounting(pane) -> None:  # the first pane to go posts every result
            if not posted:
                posted.extend(app.post_message(message) for message in late)
                for message in late:  # the write outcomes' first stop too (refused there, or dropped)
                    app.main.post_message(message)

        monkeypatch.setattr(EntryPane, "on_unmount", unmounting, raising=False)
    assert posted and all(posted)  # they were queued while the app closed, and handled without raising


async def test_a_store_change_that_arrives_before_the_editor_is_composed_still_marks_the_conflict(demo_paths):
    """The entry being edited changes on disk in the same moment the editor opens: the store's
    change is handled before the dialog has composed its banner. The banner shows once it has."""
    path = demo_paths.user_root / "tools.md"
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        select(app, "user", lambda e: e.text.startswith("Shell is fish"))
        entry = app.selected_entry()
        path.write_text(path.read_text().replace("Shell is fish", "Shell is zsh"))
        from memtui.tui.messages import StoreChanged

        app.main.edit_memory(entry)  # pushed, not composed until its task runs…
        change = app.store.reload(changed=[path])
        app.on_store_changed(StoreChanged(change))  # …and the watcher's change handled first
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen) and app.screen.is_mounted,
                         message="the editor")
        await wait_until(pilot, lambda: app.screen.conflict, message="conflict marked")
        await pilot.pause()
        assert app.screen.query_one("#conflict-banner").display
        assert "changed on disk" in shown(app.screen.query_one("#conflict-banner"))


async def test_the_inbox_read_that_arrives_before_its_screen_is_composed_is_shown(demo_paths):
    from memtui.tui.messages import InboxReady
    from memtui.tui.screens.inbox import InboxScreen

    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: app.inbox is not None, message="the inbox read")
        items = list(app.inbox)
        assert items
        screen = InboxScreen()
        app.push_screen(screen)  # not composed until its task runs…
        app.on_inbox_ready(InboxReady(items[:1]))  # …when a newer read is handled
        await wait_until(pilot, lambda: app.screen is screen and screen.is_mounted, message="the inbox screen")
        await pilot.pause()
        assert [item.entry.id for item in screen.items] == [items[0].entry.id]
        assert screen.query_one("#inbox-list").item_count() == 1


async def test_the_settings_screen_shows_invalid_saved_values_as_saved_and_says_why(demo_paths):
    """An invalid saved value is shown as it is saved, marked invalid with the reason, not
    replaced by the default; saving other changes leaves it alone in the file."""
    data = json.loads(demo_paths.global_settings.read_text())
    data.setdefault("memory", {}).setdefault("budget", {})["total"] = -5
    data["memory"]["retrieval"] = "fast"
    data["memory"]["redactSecrets"] = "yes"
    demo_paths.global_settings.write_text(json.dumps(data))
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await press_for(pilot, "s", SettingsScreen)
        await pilot.pause()
        screen = app.screen
        assert screen.query_one("#budget-total").value == "-5"
        assert shown(screen.query_one("#budget-total-error")).strip() == "✗ saved as -5, which is invalid; using 2000"
        assert "saved as \"fast\", which is invalid" in shown(screen.query_one("#retrieval-model"))
        assert "saved as \"yes\", which is invalid (must be true or false)" in screen_text(app)
        screen.query_one("#gate-user").value = "0.5"  # another change: saved; the invalid ones stay as they are
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), message="saved")
        await wait_until(pilot, lambda: json.loads(demo_paths.global_settings.read_text())["memory"]
                         .get("gate", {}).get("user") == 0.5, message="the gate saved")
    memory = json.loads(demo_paths.global_settings.read_text())["memory"]
    assert (memory["budget"]["total"], memory["retrieval"], memory["redactSecrets"]) == (-5, "fast", "yes")
