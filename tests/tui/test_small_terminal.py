"""The TUI at 80×24 and after a resize: the selected row stays in view, the detail opens full
screen, each dialog's footer shows that dialog's keys, dialogs follow the terminal's size, and
toasts read as sentences. Pilot on the demo's real files."""

from __future__ import annotations

import pytest

from memtui.core.model import Entry
from memtui.tui.app import MemtuiApp
from memtui.tui.main_screen import MainScreen
from memtui.tui.screens import (
    ConfirmScreen,
    ConflictScreen,
    DetailScreen,
    FindingsScreen,
    HelpScreen,
    SettingsScreen,
)
from memtui.tui.widgets import EntryPane
from tests.tui.conftest import press_for, screen_text, wait_until


def footer_line(app) -> str:
    lines = screen_text(app).splitlines()
    return lines[-1] if lines else ""  # a screen just pushed may not be drawn yet


async def loaded(pilot) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.loaded and app.last_result is not None and app.findings is not None,
                     message="app loaded and doctor run")


SIZES = [(140, 45), (80, 24)]
MAIN_KEYS = ("On/off", "Quit", "Settings")  # the main screen's footer, never a dialog's


def cursor_on_screen(pane: EntryPane) -> bool:
    """The highlighted row is inside the pane's visible rows, and the screen shows it there."""
    top, height = int(pane.scroll_offset.y), pane.scrollable_content_region.height
    return pane.display and pane.cursor is not None and top <= pane.cursor < top + height


def pane_lines(app, pane: EntryPane) -> list[str]:
    region = pane.region
    return [line[region.x: region.right] for line in screen_text(app).splitlines()[region.y: region.bottom]]


async def jump_to_stale(pilot) -> Entry:
    """D, then Enter on the doctor's stale finding (the demo's patterns.md:7)."""
    app = pilot.app
    await press_for(pilot, "D", FindingsScreen)
    stale = next(i for i, f in enumerate(app.findings) if f.kind == "stale_reference")
    app.screen.query_one("#findings-list").move_cursor(stale)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), message="back on the main screen")
    pane = app.main.current_pane()
    await wait_until(pilot, lambda: pane.highlighted_entry is not None
                     and pane.highlighted_entry.id == app.findings[stale].entry_id, message="the entry selected")
    entry = pane.highlighted_entry
    assert entry is not None
    return entry


# ---------------------------------------------------------------- 1. the selected row stays on screen
async def test_a_jump_from_the_doctor_at_80x24_scrolls_the_selected_row_into_view(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        entry = await jump_to_stale(pilot)
        pane = app.main.current_pane()
        assert entry.source_ref.endswith("patterns.md:7") and pane.cursor is not None
        assert pane.cursor >= pane.scrollable_content_region.height, "the demo no longer tests a hidden row"
        await wait_until(pilot, lambda: cursor_on_screen(pane), timeout=3, message="the selected row in view")
        await pilot.pause()
        assert any("patterns.md:7" in line for line in pane_lines(app, pane)), pane_lines(app, pane)


async def test_a_resize_to_80x24_keeps_the_selected_row_in_view(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await loaded(pilot)
        pane = app.query_one("#pane-user", EntryPane)
        await pilot.press("1", *["down"] * 10)
        await wait_until(pilot, lambda: pane.cursor == 10, message="row 11 selected")
        assert cursor_on_screen(pane)
        selected = pane.highlighted_entry
        assert selected is not None
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: app.screen.has_class("compact"), message="the compact layout")
        assert pane.cursor >= pane.scrollable_content_region.height, "the row would fit without scrolling"
        await wait_until(pilot, lambda: cursor_on_screen(pane), timeout=3, message="the selected row in view")
        await pilot.pause()
        assert any(selected.source_ref in line for line in pane_lines(app, pane)), pane_lines(app, pane)


# ---------------------------------------------------------------- 2. the detail at 80×24
async def test_enter_on_a_row_at_80x24_shows_the_full_text_and_the_doctors_reason(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        entry = await jump_to_stale(pilot)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen), message="the detail")
        await pilot.pause()
        dialog = app.screen.query_one("#detail-dialog")
        assert dialog.region.width == 80 and dialog.region.height >= 22, dialog.region
        text = screen_text(app)
        assert "not found in the workspace" in text, text  # the doctor's reason
        assert "patterns.md, line 7" in text and entry.text.split()[0] in text, text
        assert "esc Close" in footer_line(app) and "Quit" not in footer_line(app), footer_line(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen), message="the main screen again")
        assert app.main.selected_entry() == entry


async def test_enter_at_140x45_leaves_the_detail_where_it_is(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await loaded(pilot)
        await pilot.press("1", "enter", "down")
        await wait_until(pilot, lambda: app.query_one("#pane-user", EntryPane).cursor == 1, message="the next row")
        assert isinstance(app.screen, MainScreen)


# ---------------------------------------------------------------- 3. a dialog's footer shows its keys
async def open_confirm(pilot) -> None:
    await pilot.press("1", "d")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), message="the confirmation")


async def open_help(pilot) -> None:
    await pilot.press("question_mark")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen), message="the help")


async def open_conflict(pilot) -> None:
    app = pilot.app
    entry = app.query_one("#pane-user", EntryPane).entries[0]
    app.main.resolve_conflict(entry, "my version", entry)
    await wait_until(pilot, lambda: isinstance(app.screen, ConflictScreen), message="the conflict dialog")


async def open_settings(pilot) -> None:
    await pilot.press("s")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen), message="the settings")


DIALOGS = {
    "confirm": (open_confirm, ("y Yes", "n No")),
    "help": (open_help, ("esc Close",)),
    "conflict": (open_conflict, ("m Keep mine", "t Take theirs", "a Save as new", "esc Back")),
    "settings": (open_settings, ("^s Save", "esc Cancel")),
}


@pytest.mark.parametrize("size", SIZES, ids=["140x45", "80x24"])
@pytest.mark.parametrize("dialog", DIALOGS)
async def test_a_dialogs_footer_shows_its_own_keys(demo_paths, dialog, size):
    opener, keys = DIALOGS[dialog]
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        await wait_until(pilot, lambda: "Quit" in footer_line(app), message="the main footer")
        await opener(pilot)
        await wait_until(pilot, lambda: all(key in footer_line(app) for key in keys), timeout=3,
                         message=f"{keys} in the footer")
        footer = footer_line(app)
        assert not any(key in footer for key in MAIN_KEYS), footer


# ---------------------------------------------------------------- 4. dialogs follow the terminal's size
async def test_a_dialog_opened_after_shrinking_to_80x24_fills_the_screen(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await loaded(pilot)
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: app.screen.has_class("compact"), message="the compact layout")
        await open_settings(pilot)
        dialog = app.screen.query_one("#settings-dialog")
        await wait_until(pilot, lambda: dialog.region.width == 80 and dialog.region.height >= 22, timeout=3,
                         message="the settings filling the screen")
        save = app.screen.query_one("#save")
        assert save.region.bottom <= 23 and save.region.right <= 80, save.region


async def test_an_open_dialog_follows_a_resize_both_ways(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await loaded(pilot)
        await open_confirm(pilot)
        dialog = app.screen.query_one("#confirm-dialog")
        await wait_until(pilot, lambda: 0 < dialog.region.width < 140, message="a box at 140×45")
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: dialog.region.width == 80 and dialog.region.height >= 22, timeout=3,
                         message="the dialog filling 80×24")
        await pilot.resize_terminal(140, 45)
        await wait_until(pilot, lambda: 0 < dialog.region.width < 140 and dialog.region.height < 40, timeout=3,
                         message="a box again at 140×45")


# ---------------------------------------------------------------- 5. toasts
async def test_a_toast_puts_no_period_after_a_shortened_text(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await loaded(pilot)
        pane = app.query_one("#pane-user", EntryPane)
        long = next(e for e in pane.entries if len(e.text) > 80)
        pane.focus()
        assert pane.select_id(long.id)
        await press_for(pilot, "d", ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: any(n.title == "Deleted" for n in app._notifications), message="the toast")
        message = next(str(n.message) for n in app._notifications if n.title == "Deleted")
        assert "…. " not in message and message.endswith("… Press u to undo."), message


@pytest.mark.parametrize("size", SIZES)
async def test_enter_in_the_filter_goes_to_what_it_found(demo_paths, size):
    """Enter in `/`: the current layer when it lists matches, else the first layer that does
    (at 80×24 its tab comes forward); typing there never lands in the filter."""
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        screen = app.main
        await pilot.press("3")  # the conversation layer
        await pilot.press("slash", *"neovim with lsp")
        conversation = screen.pane("conversation")
        user = screen.pane("user")
        await wait_until(pilot, lambda: "of" in str(conversation.border_title) and not conversation.item_count()
                         and user.item_count() > 0, message="only the user layer matches")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.focused is user, message="the user layer's matches focused")
        assert screen.last_layer == "user" and screen.query_one("#filter").value == "neovim with lsp"
        project = screen.pane("project")
        await pilot.press("2", "slash")  # the project layer current; a word both layers have
        screen.query_one("#filter").value = ""
        await pilot.press(*"pnpm")
        await wait_until(pilot, lambda: project.item_count() > 0 and user.item_count() > 0,
                         message="the user and the project layer both match")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.focused is project, message="the current layer kept, not the first")
