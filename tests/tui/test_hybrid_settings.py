"""SPEC §13 in the TUI: the settings screen switches retrieval and names the model; in hybrid
mode a left-out line shows its keyword and semantic scores."""

from __future__ import annotations

import importlib.util
import json

import pytest

from memtui.core import semantic
from memtui.tui.app import MemtuiApp
from memtui.tui.screens import SettingsScreen
from memtui.tui.widgets.preview import PreviewPane
from tests.tui.conftest import press_for, shown, wait_until

pytestmark = pytest.mark.skipif(importlib.util.find_spec("wordllama") is None, reason="the semantic extra is not installed")


async def test_settings_switch_retrieval_and_the_preview_shows_both_scores(demo_paths):
    app = MemtuiApp(demo_paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded and app.last_result is not None, message="app loaded")
        await press_for(pilot, "s", SettingsScreen)
        info = semantic.locate().info
        assert f"{info.name} {info.version}" in shown(app.screen.query_one("#retrieval-model"))
        app.screen.query_one("#retrieval").value = "hybrid"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        assert json.loads(demo_paths.global_settings.read_text())["memory"]["retrieval"] == "hybrid"
        query = "why is the dashboard query slow in postgres"
        app.query_one("#query").value = query
        await wait_until(pilot, lambda: app.last_result is not None and app.last_result.query == query
                         and app.last_result.retrieval is not None, message="hybrid preview", timeout=30)
        result = app.last_result
        assert result.retrieval == {"mode": "hybrid", "model": info.as_dict()}
        assert any("PostgreSQL 16" in c.line for c in result.included)
        pane = app.query_one(PreviewPane)
        await wait_until(pilot, lambda: "sem " in shown(pane.query_one("#left-out")), message="scores shown")
        assert "kw 0." in shown(pane.query_one("#left-out"))
        assert info.name in shown(pane.query_one("#problems"))
        await press_for(pilot, "s", SettingsScreen)
        assert app.screen.query_one("#retrieval").value == "hybrid"
        assert "model in use" in shown(app.screen.query_one("#retrieval-model"))
