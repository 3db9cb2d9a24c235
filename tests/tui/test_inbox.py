"""The inbox (SPEC §12) driven by Pilot on the demo data: keys -> files on disk and memtui's
review table in muse.db. The demo leaves three of its auto memories awaiting review: one line
of tools.md (newest) and two conversation rows."""

from __future__ import annotations

import json
import sqlite3

from memtui.core import actions
from memtui.core.actions import open_store
from memtui.core.paths import Paths
from memtui.tui.app import MemtuiApp
from memtui.tui.screens import EditScreen
from memtui.tui.screens.inbox import InboxScreen
from tests.tui.conftest import press_for, screen_text, wait_until

DESTRUCTIVE = "When a command is destructive (rm -rf, force push, DROP TABLE), say so plainly and ask before running it"
TIMERS = "Vitest fake timers do not advance timers scheduled inside promises unless you await vi.runAllTimersAsync()"
CACHE = "部署流水线在构建镜像时缓存失效，原因是 pnpm store 路径每次都变"


def awaiting(paths: Paths) -> list[str]:
    """What a fresh process finds awaiting review (the state on disk, not the app's)."""
    store = open_store(paths)
    try:
        return [e.text for e in actions.unreviewed(store)]
    finally:
        store.close()


async def open_inbox(pilot) -> InboxScreen:
    app = pilot.app
    await wait_until(pilot, lambda: app.loaded and app.inbox is not None, message="the inbox read")
    await press_for(pilot, "i", InboxScreen)
    return app.screen


def listed(screen: InboxScreen) -> list[str]:
    return [item.entry.text for item in screen.items]


async def test_the_header_counts_what_awaits_review_and_i_opens_the_inbox(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_inbox(pilot)
        assert "3 to review (i)" in app.sub_title
        assert screen.sub_title == "Inbox · 3 awaiting review"
        assert listed(screen) == [DESTRUCTIVE, TIMERS, CACHE]  # newest first
        text = screen_text(app)
        assert "“Flaky tests” · 2026-01-01 00:10" in text and "tools.md:16" in text
        # with memory.requireReview off an entry may still be left out (over budget, below its gate)
        assert "a candidate for injection like any memory" in text and "injected like any" not in text, text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, InboxScreen))


async def test_accept_moves_to_the_next_and_survives_a_restart(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_inbox(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: listed(screen) == [TIMERS, CACHE], message="accepted")
        assert screen.selected() is not None and screen.selected().entry.text == TIMERS
        assert "2 to review (i)" in app.sub_title
    assert awaiting(demo_paths) == [TIMERS, CACHE]
    again = MemtuiApp(demo_paths, watch=False)
    async with again.run_test(size=(140, 45)) as pilot:
        screen = await open_inbox(pilot)
        assert listed(screen) == [TIMERS, CACHE]


async def test_u_after_accept_undoes_the_accept_not_an_earlier_change(demo_paths):
    notes = demo_paths.user_root / "preferences.md"
    store = open_store(demo_paths)
    try:  # an unrelated earlier change, already in the undo log
        first = next(e for e in store.entries("user") if e.path == notes)
        store.edit_entry(first, first.text + " (edited)")
    finally:
        store.close()
    edited = notes.read_bytes()
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_inbox(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: listed(screen) == [TIMERS, CACHE], message="accepted")
        await pilot.press("u")
        await wait_until(pilot, lambda: listed(screen) == [DESTRUCTIVE, TIMERS, CACHE], message="back in the inbox")
        assert notes.read_bytes() == edited  # the earlier edit stays
        await pilot.press("A", "y")  # more than one: asked first
        await wait_until(pilot, lambda: listed(screen) == [], message="all accepted")
        await pilot.press("u")
        await wait_until(pilot, lambda: len(listed(screen)) == 3, message="accept all undone")
        assert notes.read_bytes() == edited
    assert awaiting(demo_paths) == [DESTRUCTIVE, TIMERS, CACHE]


async def test_reject_deletes_selects_the_next_and_undo_restores_the_exact_bytes(demo_paths):
    path = demo_paths.user_root / "tools.md"
    before = path.read_bytes()
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_inbox(pilot)
        await pilot.press("x")
        await wait_until(pilot, lambda: DESTRUCTIVE.encode() not in path.read_bytes(), message="rejected")
        await wait_until(pilot, lambda: listed(screen) == [TIMERS, CACHE], message="the inbox without it")
        assert screen.selected().entry.text == TIMERS
        await pilot.press("down", "x")  # a conversation row
        await wait_until(pilot, lambda: listed(screen) == [TIMERS], message="the row rejected")
        conn = sqlite3.connect(demo_paths.db_path)
        assert conn.execute("SELECT count(*) FROM memories WHERE content = ?", (CACHE,)).fetchone() == (0,)
        await pilot.press("u")
        await wait_until(pilot, lambda: CACHE in listed(screen), message="the row back")
        assert conn.execute("SELECT count(*) FROM memories WHERE content = ?", (CACHE,)).fetchone() == (1,)
        conn.close()
        await pilot.press("u")
        await wait_until(pilot, lambda: path.read_bytes() == before, message="undo restores the bytes")
        await wait_until(pilot, lambda: listed(screen) == [DESTRUCTIVE, TIMERS, CACHE], message="back, unreviewed")


async def test_an_edit_in_the_inbox_is_a_review(demo_paths):
    path = demo_paths.user_root / "tools.md"
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_inbox(pilot)
        await press_for(pilot, "e", EditScreen)
        app.screen.query_one("#editor").text = "Say plainly when a command is destructive, and ask first"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: b"Say plainly when a command" in path.read_bytes(), message="saved")
        await wait_until(pilot, lambda: listed(screen) == [TIMERS, CACHE], message="edited = reviewed")
        assert isinstance(app.screen, InboxScreen)
    assert awaiting(demo_paths) == [TIMERS, CACHE]


async def test_an_outside_change_to_an_accepted_row_puts_it_back(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_inbox(pilot)
        await pilot.press("A", "y")  # more than one: asked first
        await wait_until(pilot, lambda: listed(screen) == [], message="all accepted")
        assert "to review" not in app.sub_title
        conn = sqlite3.connect(demo_paths.db_path)  # Muse's extractor merges an update into a row
        with conn:
            conn.execute("UPDATE memories SET content = content || ' (also in CI)', updated_at = updated_at + 1 "
                         "WHERE content = ?", (TIMERS,))
        conn.close()
        await pilot.press("escape", "r")
        await wait_until(pilot, lambda: [i.entry.text for i in app.inbox] == [TIMERS + " (also in CI)"],
                         message="the changed row back in the inbox")


async def test_require_review_lists_unreviewed_entries_among_the_left_out(demo_paths):
    settings = json.loads(demo_paths.global_settings.read_text())
    settings["memory"] = {"requireReview": True}
    demo_paths.global_settings.write_text(json.dumps(settings))
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None, message="the preview")
        assert app.last_result.status_counts().get("unreviewed") == 3
        assert DESTRUCTIVE not in app.last_result.text
        fold = app.query_one("#left-unreviewed")
        assert fold.display and str(fold.title).startswith("3 ")
        await open_inbox(pilot)
        assert "not injected (memory.requireReview is on)" in screen_text(app)


async def test_the_settings_switch_turns_require_review_on_and_keeps_other_keys(demo_paths):
    from memtui.tui.screens import SettingsScreen

    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None, message="the preview")
        assert "unreviewed" not in app.last_result.status_counts()
        await press_for(pilot, "s", SettingsScreen)
        await pilot.press("tab", "tab", "tab")
        assert app.screen.focused.id == "require-review"
        await pilot.press("space", "ctrl+s")

        def saved() -> bool:
            return json.loads(demo_paths.global_settings.read_text()).get("memory", {}).get("requireReview") is True

        await wait_until(pilot, saved, message="requireReview saved")
        await wait_until(pilot, lambda: app.last_result.status_counts().get("unreviewed") == 3,
                         message="the preview holding them back")
    assert json.loads(demo_paths.global_settings.read_text())["theme"] == "muse-classic"  # Muse's key kept


async def test_a_file_the_extractor_writes_while_the_app_runs_arrives_in_the_inbox(demo_paths):
    app = MemtuiApp(demo_paths, watch=True)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = await open_inbox(pilot)
        (demo_paths.project_root / "learned.md").write_text(
            "---\nsource: auto\nupdatedAt: 2026-06-01\n---\n\n- The checkout service retries payments three times\n",
            encoding="utf-8")
        await wait_until(pilot, lambda: listed(screen)[:1] == ["The checkout service retries payments three times"],
                         message="the new auto memory listed first (newest)")
        assert screen.sub_title == "Inbox · 4 awaiting review"
        assert screen.selected().entry.text == DESTRUCTIVE  # the selection stays where it was


async def test_at_80_columns_the_footer_shows_every_inbox_key(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_inbox(pilot)
        await pilot.pause()
        footer = screen_text(app).splitlines()[-1]
        for key in ("a Accept", "e Edit", "x Reject", "A Accept all", "u Undo", "esc Back"):
            assert key in footer, (key, footer)


async def test_a_long_inbox_is_walked_by_keys_with_the_highlight_in_view(demo_paths):
    """An inbox of hundreds of entries (Muse can leave every conversation memory of a workspace
    there): the keys move through it, two lines per entry, and the detail follows."""
    conn = sqlite3.connect(demo_paths.db_path)
    conversation = conn.execute("SELECT conversation_id FROM memories WHERE conversation_id IS NOT NULL").fetchone()[0]
    conn.executemany(
        "INSERT INTO memories (id, type, category, content, tags, source, conversation_id, created_at, updated_at)"
        " VALUES (?, 'conversation', 'knowledge', ?, '[]', 'auto', ?, ?, ?)",
        [(f"bulk-{i:04d}", f"Learned fact number {i:04d}", conversation, 1000 + i, 1000 + i) for i in range(400)])
    conn.commit()
    conn.close()
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_inbox(pilot)
        assert len(screen.items) == 403
        rows = screen.query_one("#inbox-list")
        height = rows.scrollable_content_region.height

        def in_view() -> bool:
            top = int(rows.scroll_offset.y)
            return top <= 2 * rows.cursor and 2 * rows.cursor + 1 < top + height

        await pilot.press("end")
        await wait_until(pilot, lambda: screen.selected() is screen.items[-1], message="the last entry")
        assert screen.items[-1].entry.text == "Learned fact number 0000"  # oldest last
        await wait_until(pilot, lambda: "Learned fact number 0000" in screen_text(app), message="its detail shown")
        assert in_view() and int(rows.scroll_offset.y) == 2 * 403 - height  # the end of the list at the bottom
        await pilot.press("pageup")
        moved = 402 - rows.cursor
        assert moved == (height - 1) // 2 and in_view(), (moved, height)
        await pilot.press("home", "down", "down")
        assert rows.cursor == 2 and in_view()
        await pilot.press("a")
        await wait_until(pilot, lambda: len(screen.items) == 402, message="accepted")
        assert rows.cursor == 2 and screen.selected() is screen.items[2]  # the next one took its place
