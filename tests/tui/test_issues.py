"""The rough edges a newcomer meets, one Pilot test each (keys in, files and screen out)."""

from __future__ import annotations

import json

from memtui.core import actions
from memtui.core.model import Entry
from memtui.core.serve import build_injection
from memtui.tui.app import MemtuiApp
from memtui.tui.screens import ConflictScreen, EditScreen, SettingsScreen, UndoLogScreen
from memtui.tui.widgets import EntryPane
from memtui.tui.widgets.entry_pane import badge_for, entry_prompt
from memtui.tui.widgets.preview import injected_renderable
from tests.tui.conftest import press_for, screen_text, shown, wait_until
from tests.tui.helpers import CountingApp
from tests.tui.test_app import open_delete, open_editor, started


def messages(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_after_a_delete_the_cursor_stays_at_the_neighbour(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        pane = app.query_one("#pane-project", EntryPane)
        victim = pane.entries[3]
        neighbour = pane.entries[4]
        await open_delete(pilot, "project", lambda e: e.id == victim.id)
        await pilot.press("y")
        await wait_until(pilot, lambda: victim.id not in {e.id for e in pane.entries}, message="deleted")
        await wait_until(pilot, lambda: pane.highlighted_entry is not None)
        assert pane.highlighted_entry.id == neighbour.id
        # the last one: the cursor moves up to the new last entry
        last, before_last = pane.entries[-1], pane.entries[-2]
        await open_delete(pilot, "project", lambda e: e.id == last.id)
        await pilot.press("y")
        await wait_until(pilot, lambda: last.id not in {e.id for e in pane.entries}, message="deleted")
        assert pane.highlighted_entry.id == before_last.id


async def test_undo_names_what_it_undoes_and_the_log_lists_it(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await open_delete(pilot, "project", lambda e: e.text.startswith("Use PostgreSQL 16"))
        await pilot.press("y")
        await wait_until(pilot, lambda: any(m.startswith("Deleted") for m in messages(app)))
        await press_for(pilot, "U", UndoLogScreen)
        log = shown(app.screen.query_one("#undo-log"))
        assert "context.md" in log and "Use PostgreSQL 16" in log and "u undoes" in log
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, UndoLogScreen))
        await pilot.press("u")
        await wait_until(pilot, lambda: any(m.startswith("Undone") for m in messages(app)), message="undo toast")
        toast = next(m for m in messages(app) if m.startswith("Undone"))
        assert "context.md" in toast and "Use PostgreSQL 16" in toast
        await pilot.press("u")
        await wait_until(pilot, lambda: "Nothing to undo." in messages(app))


async def test_conflict_dialog_shows_both_versions_and_can_go_back_to_editing(demo_paths):
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
        texts = [shown(s) for s in app.screen.query("#mine Static, #theirs Static")]
        assert "Shell is nushell" in texts[0] and "Shell is zsh" in texts[1]
        await pilot.press("escape")  # back to editing, nothing lost
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen))
        assert app.screen.query_one("#editor").text == "Shell is nushell"
        await pilot.press("ctrl+s")  # now against the version on disk: saved, theirs replaced
        await wait_until(pilot, lambda: "- Shell is nushell" in path.read_text(), message="kept mine")
        assert "Shell is zsh" not in path.read_text()


async def test_new_refuses_a_near_duplicate_naming_the_existing_entry(demo_paths):
    before = demo_paths.default_file("user").read_bytes() if demo_paths.default_file("user").exists() else None
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await pilot.press("1", "n")
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen))
        await pilot.press(*"use vitest, not  Jest")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(m.startswith("Already remembered") for m in messages(app)))
        note = next(m for m in messages(app) if m.startswith("Already remembered"))
        assert "preferences.md:11" in note and "Use vitest, not jest" in note
        assert app.selected_entry().text == "Use vitest, not jest"
    after = demo_paths.default_file("user").read_bytes() if demo_paths.default_file("user").exists() else None
    assert after == before


async def test_toggle_with_a_broken_workspace_settings_file_says_it_did_not_save(demo_paths):
    demo_paths.workspace_settings.write_text('{"memoryEnabled": true,')
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await pilot.press("t")
        await wait_until(pilot, lambda: any(n.title == "Switch not saved" for n in app._notifications))
        note = next(str(n.message) for n in app._notifications if n.title == "Switch not saved")
        assert "settings.json" in note
    assert demo_paths.workspace_settings.read_text() == '{"memoryEnabled": true,'


async def test_settings_changed_in_another_shell_show_up(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        assert "memory on" in app.sub_title
        actions.set_enabled(demo_paths, False)  # `memtui disable` elsewhere
        await wait_until(pilot, lambda: "memory OFF" in app.sub_title, message="the switch reloaded")
        await wait_until(pilot, lambda: app.last_result.disabled_reason == "switch_off")


async def test_a_bad_budget_is_reported_where_it_is_typed(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await press_for(pilot, "s", SettingsScreen)
        app.screen.query_one("#budget-user").focus()
        await pilot.press("end", *"99999999")
        await wait_until(pilot, lambda: shown(app.screen.query_one("#budget-user-error")).strip() != "")
        assert "1000000" in shown(app.screen.query_one("#budget-user-error")).replace(",", "")
        await pilot.press(*["backspace"] * 8)
        await wait_until(pilot, lambda: shown(app.screen.query_one("#budget-user-error")).strip() == "")


def test_rows_put_the_text_first_and_shorten_the_path():
    entry = Entry(id="x", layer="user", text="Prefer small pure functions", rel_path="deeply/nested/folder/notes.md",
                  line_start=41, section="Style", tags=("python",))
    wide = entry_prompt(entry, 120).plain
    assert wide.startswith("Prefer small pure functions") and wide.endswith("deeply/nested/folder/notes.md:42")
    narrow = entry_prompt(entry, 50).plain
    assert narrow.startswith("Prefer small pure functions") and len(narrow) == 50
    assert narrow.endswith("notes.md:42") and "…" in narrow and "§" not in narrow


def test_a_badge_takes_its_room_from_the_text_not_from_the_file_name():
    entry = Entry(id="x", layer="project", rel_path="decisions/2026-03-api.md", line_start=9,
                  text="Migrations live in `db/migrations` and run with `pnpm db:migrate`; never edit an applied one")
    for kinds, width in ((["already_loaded"], 66), (["stale_reference", "duplicate"], 60), (["over_limit"], 50)):
        row = entry_prompt(entry, width, badge_for(kinds)).plain
        assert len(row) == width and row.startswith("Migrations live in")
        assert row.endswith("…/2026-03-api.md:10"), row
        assert badge_for(kinds) in row and "_" not in badge_for(kinds)


def test_wrapped_lines_of_a_memory_hang_under_its_text():
    from io import StringIO

    from rich.console import Console

    console = Console(file=StringIO(), width=30, color_system=None)
    console.print(injected_renderable("## Memory\n\n### User Preferences\n- " + "word " * 12))
    lines = console.file.getvalue().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("- "))
    assert lines[first + 1].startswith("  word")


async def test_left_out_lists_near_misses_first_and_counts_the_rest(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await pilot.press("p", *"slow query")
        await wait_until(pilot, lambda: app.last_result.query == "slow query")
        expected = build_injection(demo_paths.workspace, "slow query", home=demo_paths.home)
        left = [c for c in expected.candidates if c.status != "included"]
        near = sorted((c for c in left if c.status in ("budget", "max_items") or c.score > 0),
                      key=lambda c: (-c.score, c.status != "budget"))
        text = shown(app.query_one("#left-out"))
        assert f"Left out ({len(left)})" in text
        rows = text.splitlines()[1:]
        assert len(rows) == min(8, len(near))
        assert [r.split()[0:2] for r in rows][:1] == [["over", "budget"]] or rows[0].split()[0] == "below"
        scores = [float(r.split()[2 if r.split()[0] == "over" else 2]) for r in rows]
        assert scores == sorted(scores, reverse=True)
        below = app.query_one("#left-below_gate")
        rest = sum(1 for c in left if c.status == "below_gate") - sum(1 for c in near[:8] if c.status == "below_gate")
        assert below.display and str(below.title).startswith(f"{rest} more")
        # per-layer gauges agree with the engine
        gauges = shown(app.query_one("#gauges"))
        for layer, short in (("user", "User"), ("project", "Proj"), ("conversation", "Conv")):
            used, allowance, _ = expected.layer_budget[layer]
            assert f"{used}/{allowance}" in gauges.split(short, 1)[1]


async def test_footer_shows_only_keys_that_work_and_esc_clears_the_filter(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await pilot.press("slash", *"f123")
        await wait_until(pilot, lambda: app.main.filter_text == "f123")
        footer = screen_text(app).splitlines()[-1]
        assert "Fold" not in footer and "Delete" not in footer and "Leave input" in footer
        assert app.screen.check_action("toggle_fold", ()) is False
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.main.filter_text == "" and isinstance(app.focused, EntryPane))
        await wait_until(pilot, lambda: "Fold" in screen_text(app).splitlines()[-1])


async def test_filter_tolerates_a_typo_and_leaves_no_horizontal_scrollbar(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await pilot.press("slash", *"pgbuoncer")
        pane = app.query_one("#pane-project", EntryPane)
        await wait_until(pilot, lambda: pane.border_title.startswith("Project (1 of"), message="typo still matches")
        assert pane.entries[0].text.startswith("Use PostgreSQL 16 + pgbouncer")
        await pilot.press("escape")
        await wait_until(pilot, lambda: pane.border_title == "Project (10)")
        assert not any(p.show_horizontal_scrollbar for p in app.query(EntryPane))


async def test_theme_chosen_in_the_palette_is_remembered(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        app.theme = "memtui-light"  # what the palette's theme picker does
        await wait_until(pilot, lambda: json.loads(demo_paths.global_settings.read_text())
                         .get("memtui", {}).get("theme") == "memtui-light", message="theme saved")


async def test_small_terminal_shows_one_pane_the_footer_and_line_numbers(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        assert app.screen.has_class("compact")
        visible = [p for p in app.query(EntryPane) if p.display]
        assert [p.memory_layer for p in visible] == ["user"]
        await wait_until(pilot, lambda: "q Quit" in screen_text(app).splitlines()[-1], message="the footer")
        assert "preferences.md:11" in screen_text(app)
        await pilot.press("2")
        assert [p.memory_layer for p in app.query(EntryPane) if p.display] == ["project"]
        footer = app.screen.query_one("Footer")
        assert footer.region.bottom == 24


async def test_warning_lines_wrap_instead_of_being_cut(demo_paths):
    bad = demo_paths.user_root / ("a-rather-long-file-name-that-will-not-fit-on-one-line-of-the-preview" + ".md")
    bad.write_bytes(b"---\ntags: [unclosed\n---\n- text\n")
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        problems = app.query_one("#problems")
        await wait_until(pilot, lambda: problems.display and problems.size.height > 1, message="wrapped warning")
        assert "⚠" in screen_text(app)
        text = "".join(line.strip() for line in shown(problems, width=problems.size.width).splitlines())
        assert bad.name in text


async def test_a_write_runs_in_a_worker_and_refreshes_once(demo_paths, monkeypatch):
    import threading

    from memtui.core.store import MemoryStore

    threads = []
    real = MemoryStore.delete_entries

    def spy(self, entries):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(self, entries)

    monkeypatch.setattr(MemoryStore, "delete_entries", spy)
    app = CountingApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        before = app.store_changes
        await open_delete(pilot, "project", lambda e: e.text.startswith("Use PostgreSQL 16"))
        await pilot.press("y")
        await wait_until(pilot, lambda: any(m.startswith("Deleted") for m in messages(app)))
        await wait_until(pilot, lambda: app.store_changes > before)
        await pilot.pause()
        assert threads == [False]  # not on the event loop
        assert app.store_changes == before + 1


async def test_keep_mine_on_a_file_made_unreadable_keeps_the_text_and_writes_nowhere(demo_paths):
    """The file of the entry being edited became unreadable from outside (broken frontmatter):
    "Keep mine" cannot save there. It says why, names the file, writes no other file, and
    the text stays in the editor; "Save as new" then saves it where it says."""
    path = demo_paths.user_root / "tools.md"
    default = demo_paths.default_file("user")
    broken = "---\ntags: [unclosed\n---\n" + path.read_text()
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        before = {p: p.read_bytes() for p in demo_paths.user_root.rglob("*.md")}
        await open_editor(pilot, "user", lambda e: e.text.startswith("Shell is fish"))
        path.write_text(broken)
        before[path] = path.read_bytes()
        app.screen.query_one("#editor").text = "Shell is nushell"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConflictScreen), message="the conflict dialog")
        theirs = shown(app.screen.query_one("#theirs-text"))
        assert "tools.md" in theirs and "invalid YAML frontmatter" in theirs, theirs
        await pilot.press("m")  # keep mine
        await wait_until(pilot, lambda: isinstance(app.screen, EditScreen), message="back in the editor")
        await pilot.pause()
        assert app.screen.query_one("#editor").text == "Shell is nushell"
        banner = shown(app.screen.query_one("#conflict-banner"))
        assert "tools.md" in banner and "invalid YAML frontmatter" in banner, banner
        assert any("tools.md" in m and "not saved" in m.lower() for m in messages(app)), messages(app)
        await pilot.pause(0.3)  # a write would have been started by now: none was
        assert {p: p.read_bytes() for p in demo_paths.user_root.rglob("*.md")} == before
        # the file is still broken: saving again asks again, and "Save as new" says where it goes
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConflictScreen), message="asked again")
        assert default.name in shown(app.screen.query_one("#conflict-message"))
        await pilot.press("a")
        await wait_until(pilot, lambda: "- Shell is nushell" in default.read_text(), message="saved as new")
        assert path.read_bytes() == before[path]


async def test_the_open_undo_log_shows_a_change_made_by_the_cli_in_another_shell(demo_paths):
    import asyncio

    from tests.cli.run import memtui

    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await press_for(pilot, "U", UndoLogScreen)
        assert "No changes yet" in shown(app.screen.query_one("#undo-log"))
        done = await asyncio.to_thread(memtui, demo_paths, "remember", "Written from another shell")
        assert done.returncode == 0, done.stderr
        await wait_until(pilot, lambda: "Written from another shell" in shown(app.screen.query_one("#undo-log")),
                         message="the CLI's change listed")
        assert "u undoes" in shown(app.screen.query_one("#undo-log"))
        done = await asyncio.to_thread(memtui, demo_paths, "undo")
        assert done.returncode == 0, done.stderr + done.stdout
        await wait_until(pilot, lambda: "u undoes" not in shown(app.screen.query_one("#undo-log")),
                         message="the CLI's undo shown")
