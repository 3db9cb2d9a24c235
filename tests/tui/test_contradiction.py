"""The contradiction dialog (SPEC §17), reached from the doctor's findings: both memories side
by side; keep left, keep right (the other is superseded, undone by u), keep both (never
reported again), or edit one."""

from __future__ import annotations

import pytest

from memtui.core.markdown import parse_text
from memtui.core.paths import Paths
from memtui.core.supersession import listed
from memtui.tui.app import MemtuiApp
from memtui.tui.screens import ContradictionScreen, EditScreen, FindingsScreen
from tests.tui.conftest import press_for, screen_text, wait_until

BODY = "# Server\n\n- The API server listens on port 8080\n- Prefer small pull requests\n"


def planted(tmp_path) -> Paths:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    (ws / ".muse" / "settings.json").write_text('{"memoryEnabled": true}\n')
    (ws / ".muse" / "memory" / "context.md").write_text(BODY)
    (home / "memory" / "notes.md").write_text("- The API server listens on port 9090\n")
    return Paths.resolve(home, ws)


async def open_dialog(pilot) -> ContradictionScreen:
    app = pilot.app
    await wait_until(pilot, lambda: app.loaded and app.findings is not None, message="doctor run")
    await press_for(pilot, "D", FindingsScreen)
    at = next(i for i, f in enumerate(app.screen.findings) if f.kind == "contradiction" and f.source == "context.md:3")
    app.screen.query_one("#findings-list").move_cursor(at)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, ContradictionScreen), message="the contradiction dialog")
    return app.screen


async def test_both_sides_are_shown_and_keep_left_supersedes_the_right_until_undone(tmp_path):
    paths = planted(tmp_path)
    project = paths.project_root / "context.md"
    user = paths.user_root / "notes.md"
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        dialog = await open_dialog(pilot)
        assert dialog.left.text == "The API server listens on port 8080"
        assert dialog.right.text == "The API server listens on port 9090"
        text = screen_text(app)
        assert "port 8080" in text and "port 9090" in text and "notes.md:1" in text
        before = user.read_bytes()
        await pilot.press("l")
        await wait_until(pilot, lambda: user.read_bytes() != before, message="the right one superseded")
        assert project.read_text() == BODY  # the kept one's file is untouched
        meta = parse_text(user.read_text()).meta
        assert listed(meta) == [("The API server listens on port 9090", "project:context.md",
                                 "The API server listens on port 8080")]
        await wait_until(pilot, lambda: any(e.superseded_by for e in app.store.entries()), message="the store reloaded")
        await wait_until(pilot, lambda: app.findings is not None
                         and not any(f.kind == "contradiction" for f in app.findings), message="no contradiction left")
        await pilot.press("u")
        await wait_until(pilot, lambda: user.read_bytes() == before, message="undone")


async def test_keep_right_supersedes_the_left(tmp_path):
    paths = planted(tmp_path)
    project = paths.project_root / "context.md"
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await open_dialog(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: project.read_text() != BODY, message="the left one superseded")
        assert project.read_text().endswith(BODY)
        assert [item[0] for item in listed(parse_text(project.read_text()).meta)] == [
            "The API server listens on port 8080"]


async def test_keep_both_is_remembered_and_never_reported_again_until_undone(tmp_path):
    paths = planted(tmp_path)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await open_dialog(pilot)
        await pilot.press("b")
        await wait_until(pilot, lambda: app.findings is not None
                         and not any(f.kind == "contradiction" for f in app.findings), message="not reported again")
        assert (paths.project_root / "context.md").read_text() == BODY
    again = MemtuiApp(paths, watch=False)  # remembered across runs, until undone
    async with again.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: again.loaded and again.findings is not None, message="doctor run")
        assert not any(f.kind == "contradiction" for f in again.findings)
        await pilot.press("u")
        await wait_until(pilot, lambda: again.findings is not None
                         and any(f.kind == "contradiction" for f in again.findings), message="reported again")
    again = MemtuiApp(paths, watch=False)
    async with again.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: again.loaded and again.findings is not None, message="doctor run")
        assert any(f.kind == "contradiction" for f in again.findings)


@pytest.mark.parametrize(("key", "text"), [("e", "The API server listens on port 8080"),
                                           ("E", "The API server listens on port 9090")])
async def test_edit_opens_the_editor_on_that_side(tmp_path, key, text):
    paths = planted(tmp_path)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await open_dialog(pilot)
        editor = await press_for(pilot, key, EditScreen)
        assert text in screen_text(app) and editor is app.screen


async def test_escape_changes_nothing(tmp_path):
    paths = planted(tmp_path)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await open_dialog(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ContradictionScreen), message="closed")
        assert (paths.project_root / "context.md").read_text() == BODY
        assert (paths.user_root / "notes.md").read_text() == "- The API server listens on port 9090\n"
