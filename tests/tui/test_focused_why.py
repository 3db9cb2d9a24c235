"""SPEC §15 in the TUI: the settings screen switches the injection mode, and the preview shows
why each injected line is in (its `why`), and a left-out line's score beside the cut."""

from __future__ import annotations

import json

from memtui.tui.app import MemtuiApp
from memtui.tui.screens import SettingsScreen
from memtui.tui.widgets.preview import PreviewPane
from tests.helpers import enable, write
from tests.tui.conftest import press_for, shown, wait_until


async def test_settings_switch_to_focused_and_the_preview_shows_why(paths):
    enable(paths)
    write(paths.project_root / "db.md", "- The database is PostgreSQL 16 behind pgbouncer\n- Use pnpm for packages\n"
                                        "- Standup is at ten\n")
    write(paths.user_root / "always.md", "---\nalwaysApply: true\n---\n\n- Answer in English\n")
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None, message="app loaded")
        await press_for(pilot, "s", SettingsScreen)
        assert app.screen.query_one("#injection").value == "muse"
        app.screen.query_one("#injection").value = "focused"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        assert json.loads(paths.global_settings.read_text())["memory"]["injection"] == "focused"
        query = "postgresql pgbouncer"
        app.query_one("#query").value = query
        await wait_until(pilot, lambda: app.last_result is not None and app.last_result.query == query
                         and app.last_result.included and app.last_result.included[0].why is not None,
                         message="focused preview", timeout=30)
        assert [c.entry.text for c in app.last_result.included] == [
            "Answer in English", "The database is PostgreSQL 16 behind pgbouncer"]
        pane = app.query_one(PreviewPane)
        await wait_until(pilot, lambda: "Why these" in shown(pane.query_one("#problems")), message="why shown")
        why = shown(pane.query_one("#problems"))
        assert "pinned" in why and "keyword 1.00" in why
        await press_for(pilot, "s", SettingsScreen)
        assert app.screen.query_one("#injection").value == "focused"
