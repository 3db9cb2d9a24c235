"""SPEC §18 in the TUI, driven by Pilot on real files and a real muse.db: P pins (and u undoes
it), X switches private mode (the header says until when, the settings file says so too), F
opens the forecast, and the detail shows strength, level and expiry."""

from __future__ import annotations

import json
import time

from memtui.core import forgetting as fg
from memtui.core import forgetting_actions as fa
from memtui.core.paths import Paths
from memtui.tui.app import MemtuiApp
from memtui.tui.forgetting import ForecastScreen
from tests.helpers import enable, write
from tests.tui.conftest import press_for, screen_text, shown, wait_until

NOTES = "---\nupdatedAt: 2020-01-01\n---\n\n- Use vitest, not jest\n- Prefer tabs over spaces\n"
TEMP = "---\nexpires: 2099-01-01\n---\n\n- the staging server is down this week\n"


def setup(paths: Paths) -> None:
    write(paths.user_root / "notes.md", NOTES)
    write(paths.project_root / "temp.md", TEMP)
    enable(paths, {"memory": {"decay": {"halfLifeDays": 30}}})


def detail(app) -> str:
    return shown(app.main.query_one("#detail-body"))


def pinned_ids(paths: Paths) -> set[str]:
    return {entry_id for entry_id, f in fg.read_flags(paths.db_path).items() if f.pinned}


async def test_p_pins_the_selected_memory_and_u_undoes_it(paths: Paths):
    setup(paths)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded, message="the store loaded")
        await pilot.press("1")
        await wait_until(pilot, lambda: app.main.selected_entry() is not None, message="a selected memory")
        entry = app.main.selected_entry()
        await wait_until(pilot, lambda: "strength 0.00 · to evict" in detail(app), message="the level in the detail")
        assert "⚑evict" in screen_text(app)  # the doctor's marker in the pane
        await pilot.press("P")
        await wait_until(pilot, lambda: pinned_ids(paths) == {entry.id}, message="the pin saved")
        await wait_until(pilot, lambda: "strength 1.00 · active · pinned" in detail(app), message="the detail")
        await pilot.press("u")
        await wait_until(pilot, lambda: pinned_ids(paths) == set(), message="the pin undone")


async def test_x_switches_private_mode_and_the_header_says_until_when(paths: Paths):
    setup(paths)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded, message="the store loaded")
        await pilot.press("X")
        await wait_until(pilot, lambda: "PRIVATE until" in app.sub_title, message="the header")
        assert "privateUntil" in json.loads(paths.global_settings.read_text())["memory"]
        await pilot.press("X")
        await wait_until(pilot, lambda: "PRIVATE" not in app.sub_title, message="private mode off")
        assert "privateUntil" not in json.loads(paths.global_settings.read_text())["memory"]
        fa.set_private(paths, time.time() + 1.0)  # set elsewhere, a second left: it ends by itself
        app.reload_settings()
        assert "PRIVATE until" in app.sub_title
        await wait_until(pilot, lambda: "PRIVATE" not in app.sub_title, message="private mode over by itself")


async def test_f_opens_the_forecast(paths: Paths):
    write(paths.user_root / "notes.md", "- Use vitest, not jest\n")
    write(paths.project_root / "temp.md", "---\nexpires: 2000-01-01\n---\n\n- long gone\n")
    soon = fg.iso(time.time() + 3 * fg.DAY)
    write(paths.project_root / "soon.md", f"---\nexpires: {soon}\n---\n\n- the demo build is frozen\n")
    enable(paths)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.loaded, message="the store loaded")
        screen = await press_for(pilot, "F", ForecastScreen)
        assert [i["source"] for i in screen.data["entries"]] == ["soon.md:5"]
        text = screen_text(app)
        assert "soon.md:5" in text and "expired" in text and "Decay is off" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ForecastScreen), message="the forecast closed")
