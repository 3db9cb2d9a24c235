"""A newcomer's frictions with the TUI (issue 39, item 8): what fills the preview, toasts over
dialogs, keys that seemed to do nothing, and texts cut at a pane's edge."""

from __future__ import annotations

from textual.widgets._collapsible import CollapsibleTitle

from memtui.tui.app import MemtuiApp
from memtui.tui.screens import ConfirmScreen, HelpScreen
from memtui.tui.screens.findings import FindingsScreen
from memtui.tui.screens.inbox import InboxScreen
from tests.tui.conftest import press_for, screen_text, shown, wait_until

BROKEN = b"---\ntags: [unclosed\n---\n- text\n"


async def started(pilot) -> None:
    await wait_until(pilot, lambda: pilot.app.loaded and pilot.app.last_result is not None, message="app loaded")


def toasts(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_four_unreadable_files_take_one_line_and_d_lists_them(demo_paths):
    names = [f"broken-notes-number-{i}.md" for i in range(4)]
    for name in names:
        (demo_paths.project_root / name).write_bytes(BROKEN)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        problems = app.query_one("#problems")
        await wait_until(pilot, lambda: problems.display and "problems" in shown(problems), message="the warning")
        assert "⚠ 4 problems — `memtui status` lists them" in shown(problems, width=problems.size.width)
        await wait_until(pilot, lambda: "4 files skipped — D shows them" in toasts(app), message="the toast")
        text = screen_text(app)
        assert not any(name in text for name in names), text  # no path fills the pane
        assert "memories injected" in text or "injected ·" in text  # the injection stays in view
        assert "Left out" in text
        await wait_until(pilot, lambda: app.findings is not None, message="the doctor's run")
        await press_for(pilot, "D", FindingsScreen)  # the key the line names lists each file
        await wait_until(pilot, lambda: all(name in screen_text(app) for name in names), message="the findings")


async def test_over_a_dialog_a_new_toast_replaces_the_last(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        app.clear_notifications()
        for i in range(3):
            app.say(f"main {i}")
        await wait_until(pilot, lambda: "main 2" in toasts(app), message="the toasts")
        assert toasts(app) == ["main 1", "main 2"]  # over the panes: two at most, the newest
        await press_for(pilot, "question_mark", HelpScreen)
        for i in range(3):
            app.say(f"over the dialog {i}")
        await wait_until(pilot, lambda: "over the dialog 2" in toasts(app), message="the toasts")
        assert toasts(app) == ["over the dialog 2"]


async def test_down_moves_from_the_fold_to_the_lists_below_the_gate_and_back(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: app.query_one("#left-below_gate").display, message="the left-out lists")
        app.query_one("#fold").query_one(CollapsibleTitle).focus()
        await pilot.pause()

        def focused_fold() -> str | None:
            focused = app.focused
            return focused.parent.id if isinstance(focused, CollapsibleTitle) else None

        await pilot.press("down")
        assert focused_fold() == "left-below_gate"
        await pilot.press("enter")  # it opens
        await wait_until(pilot, lambda: not app.query_one("#left-below_gate").collapsed, message="the list open")
        await pilot.press("down")
        assert focused_fold() == "left-archived"
        await pilot.press("down")  # the last: it stays
        assert focused_fold() == "left-archived"
        await pilot.press("up", "up")
        assert focused_fold() == "fold"


async def test_o_without_injection_history_says_the_order_did_not_change(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        assert not app.history
        await pilot.press("o")
        await wait_until(pilot, lambda: any("Sorted by most injected" in t for t in toasts(app)), message="the toast")
        assert any("no injection history yet, order unchanged" in t for t in toasts(app)), toasts(app)
        app.insights.history = {"some-id": (1, 1, ())}
        await pilot.press("o")
        await wait_until(pilot, lambda: any("Sorted by last injected" in t for t in toasts(app)), message="the toast")
        assert not any("last injected: no injection history" in t for t in toasts(app))


async def test_accept_all_asks_first_and_its_toast_says_u_undoes_it(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.inbox is not None, message="the inbox read")
        screen = await press_for(pilot, "i", InboxScreen)
        assert len(screen.items) == 3
        dialog = await press_for(pilot, "A", ConfirmScreen)
        assert "Accept all 3 memories" in str(dialog.body)
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is screen, message="back in the inbox")
        assert len(screen.items) == 3  # nothing accepted
        await press_for(pilot, "A", ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: not screen.items, message="all accepted")
        await wait_until(pilot, lambda: any(t.startswith("Accepted") for t in toasts(app)), message="the toast")
        assert any("Press u to undo" in t for t in toasts(app) if t.startswith("Accepted"))


async def test_an_inbox_row_shortens_a_long_origin_from_the_left(demo_paths):
    origin = "/home/someone/projects/a-very-long-folder-name/another-long-folder/services/AGENTS.md"
    (demo_paths.project_root / "imported.md").write_text(
        f"---\nsource: import\norigin: {origin}\n---\n\n- Run the linter before each commit\n")
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.inbox is not None, message="the inbox read")
        await press_for(pilot, "i", InboxScreen)
        await wait_until(pilot, lambda: "Run the linter" in screen_text(app), message="the row")
        row = next(line for line in screen_text(app).splitlines() if "imported from" in line)
        assert "AGENTS.md · imported.md:" in row, row  # the file name and where it went, in view
        assert "/home/someone" not in row


async def test_the_empty_conversation_pane_wraps_its_hint(demo_paths):
    import sqlite3

    conn = sqlite3.connect(demo_paths.db_path)
    with conn:
        conn.execute("DELETE FROM memories")
    conn.close()
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "No conversation memories" in screen_text(app), message="the hint")
        text = " ".join(line.strip("│ ") for line in screen_text(app).splitlines())
        assert "Muse writes them as you chat." in text, screen_text(app)


async def test_at_120x40_the_fold_keeps_clipped_in_view(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        assert str(app.query_one("#fold").title).endswith("truncated · 1 clipped")
        await wait_until(pilot, lambda: "1 clipped" in screen_text(app), message="the fold's title")
        await pilot.resize_terminal(100, 30)
        await wait_until(pilot, lambda: "1 clipped" in screen_text(app), message="the fold's title at 100")
        await pilot.resize_terminal(160, 45)
        await wait_until(pilot, lambda: "33 memories injected" in screen_text(app), message="the whole title again")


def test_a_toast_that_arrives_once_the_screens_are_gone_is_dropped(demo_paths):
    """A worker's toast can arrive as the app closes, after its last screen was removed: it is
    dropped rather than raising ScreenStackError out of the app's close."""
    from textual.notifications import Notification, Notify

    app = MemtuiApp(demo_paths, watch=False)  # not running: no screen on the stack yet
    app.on_notify(Notify(Notification("the disk went away")))
    assert list(app._notifications) == []


async def test_a_setting_not_used_is_named_with_its_reason_not_as_a_file_skipped(demo_paths):
    import json

    settings = json.loads(demo_paths.global_settings.read_text(encoding="utf-8"))
    settings.setdefault("memory", {})["budget"] = {"total": "lots"}
    demo_paths.global_settings.write_text(json.dumps(settings), encoding="utf-8")
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(160, 30)) as pilot:
        await started(pilot)
        problems = app.query_one("#problems")
        await wait_until(pilot, lambda: problems.display and "settings.json" in shown(problems), message="the warning")
        line = shown(problems, width=400)
        assert "⚠ settings.json: memory.budget.total" in line and "skipped" not in line, line


async def test_a_screenshot_is_saved_in_the_home_folder_when_there_is_no_downloads_folder(demo_paths, tmp_path, monkeypatch):
    home = tmp_path / "a-home-without-downloads"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(pilot)
        app.action_screenshot()
        def saved() -> bool:  # (written by the driver's thread: whole once it ends with its closing tag)
            return any(f.read_text(encoding="utf-8").rstrip().endswith("</svg>") for f in home.glob("*.svg"))

        await wait_until(pilot, saved, message="the screenshot saved")
        assert not (home / "Downloads").exists()
        assert "<svg" in next(home.glob("*.svg")).read_text(encoding="utf-8")[:2000]
