"""A newcomer's first look at the TUI, at 140×45 and 80×24 (issue: first contact). Keys in,
files and screen out; Pilot on real files."""

from __future__ import annotations

import threading

from memtui.core import actions
from memtui.core.paths import Paths
from memtui.tui.app import MemtuiApp
from memtui.tui.screens import ConfirmScreen, EditScreen, SettingsScreen
from memtui.tui.widgets import EntryPane
from tests.helpers import enable, write
from tests.tui.conftest import press_for, screen_text, shown, wait_until
from tests.tui.test_app import select, started


def messages(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


def stale_workspace(paths: Paths) -> None:
    """A project memory of three lines that names a file the workspace no longer has."""
    enable(paths)
    (paths.workspace / "src").mkdir()
    write(paths.project_root / "notes.md",
          "# Notes\n\n- The connection pool lives in `src/db/pool.ts`,\n  sized from the CPU count,\n"
          "  and drained on shutdown\n- Always run the linter\n")


async def test_the_detail_shows_the_doctors_reason_at_140x45(paths):
    stale_workspace(paths)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.findings is not None, message="doctor run")
        select(app, "project", lambda e: e.text.startswith("The connection pool"))
        await pilot.pause()
        assert "src/db/pool.ts" in shown(app.query_one("#detail-body"))
        detail = app.query_one("#detail")
        visible = "\n".join(line[detail.region.x: detail.region.right]
                            for line in screen_text(app).splitlines()[detail.region.y: detail.region.bottom])
        assert "⚑" in visible and "not found in the workspace" in visible, visible


async def test_at_80x24_the_new_dialog_fills_the_screen_and_its_footer_shows_its_keys(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: "q Quit" in screen_text(app).splitlines()[-1], message="q Quit in the footer")
        await press_for(pilot, "n", EditScreen)
        await pilot.pause()
        dialog = app.screen.query_one("#edit-dialog")
        assert dialog.region.width == 80 and dialog.region.height >= 22, dialog.region
        footer = screen_text(app).splitlines()[-1]
        assert "Save" in footer and "Cancel" in footer and "Delete" not in footer, footer


async def test_at_80x24_every_setting_is_on_screen_and_switches_read_without_colour(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await press_for(pilot, "s", SettingsScreen)
        await pilot.pause()
        form = app.screen.query_one("#settings-form")
        assert form.max_scroll_y == 0, "the form scrolls"
        used = max(child.region.bottom for child in form.children if child.display)
        assert used < form.region.bottom, "no spare line for one more setting"
        for widget in (*app.screen.query("Input"), app.screen.query_one("#theme")):
            assert widget.region.height and widget.region.bottom <= 23, (widget.id, widget.region)
        text = screen_text(app)
        assert "on   Memory for this workspace" in text
        where = str(demo_paths.workspace_settings)
        assert any(line.strip().endswith(where) or where.replace(str(demo_paths.home.parent), "") in line
                   for line in text.splitlines()), text  # the path on one line, never broken
        await pilot.press("space")  # the workspace switch has focus: off, and it says so
        await pilot.pause()
        assert "off  Memory for this workspace" in screen_text(app)


async def test_gauges_and_fold_say_what_they_mean(paths):
    enable(paths, {"memory": {"maxItemChars": 40}})
    write(paths.user_root / "notes.md", "- " + "a long memory about the deploy pipeline " * 3 + "\n- short one\n")
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        gauges = shown(app.query_one("#gauges"))
        assert "+" not in gauges, gauges  # `Proj 212/1264+464` read as 1264 plus 464
        title = str(app.query_one("#fold").title)
        assert "1 clipped" in title and "truncated" not in title, title  # nothing was left out


async def test_delete_works_out_its_warning_off_the_event_loop(demo_paths, monkeypatch):
    seen: list[bool] = []
    real = actions.plan_delete

    def spy(store, entries):
        seen.append(threading.current_thread() is threading.main_thread())
        return real(store, entries)

    monkeypatch.setattr(actions, "plan_delete", spy)
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        select(app, "project", lambda e: e.text.startswith("Use PostgreSQL 16"))
        await press_for(pilot, "d", ConfirmScreen)
        assert seen == [False], "the warning was computed on the event loop"
        assert "Use PostgreSQL 16" in shown(app.screen.query_one("#confirm-body"))


async def test_help_lists_each_key_once_and_r_says_what_it_reloaded(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        keys = [key for key, _ in app.main.help_rows()]
        assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
        await pilot.press("r")
        await wait_until(pilot, lambda: any(m.startswith("Reloaded:") for m in messages(app)), message="reload toast")
        toast = next(m for m in messages(app) if m.startswith("Reloaded:"))
        assert "27 user" in toast and "10 project" in toast and "12 conversation" in toast, toast


async def test_empty_panes_say_how_to_fill_them(paths):
    enable(paths)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await pilot.pause()
        text = screen_text(app)
        assert "press n to write one" in text and "memtui import" in text, text
        assert "Muse writes them" in text
        write(paths.user_root / "notes.md", "- one memory\n")
        await pilot.press("r")
        await wait_until(pilot, lambda: app.query_one("#pane-user", EntryPane).total == 1, message="reload")
        await pilot.press("slash", *"zzzzqqq")
        await wait_until(pilot, lambda: "matches the filter" in screen_text(app), message="filter hint")


async def test_new_while_memory_is_off_says_it_will_not_be_used(paths):
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await press_for(pilot, "n", EditScreen)
        assert "won't use it until you turn memory on" in shown(app.screen.query_one("#edit-note"))
        await pilot.press(*"deploys go out on tuesdays", "ctrl+s")
        await wait_until(pilot, lambda: any(m.startswith("Added to") for m in messages(app)), message="saved")
        toast = next(m for m in messages(app) if m.startswith("Added to"))
        assert "Memory is off" in toast and "won't use it" in toast
    assert "- deploys go out on tuesdays" in paths.default_file("user").read_text()


def test_no_key_is_bound_twice_on_a_screen_nor_listed_twice_in_help(demo_paths):
    from textual.binding import Binding
    from textual.screen import Screen

    from memtui.tui import screens
    from memtui.tui.main_screen import MainScreen
    from memtui.tui.screens.inbox import InboxScreen

    classes = {MainScreen, InboxScreen, *(c for c in vars(screens).values()
                                         if isinstance(c, type) and issubclass(c, Screen))}
    for cls in classes:
        keys = [key.strip() for b in cls.BINDINGS if isinstance(b, Binding) for key in b.key.split(",")]
        assert len(keys) == len(set(keys)), (cls.__name__, keys)
    listed = [key for key, _ in MemtuiApp(demo_paths, watch=False).main.help_rows()]
    assert len(listed) == len(set(listed)), listed
