"""SPEC §8: every string from a file or the database is shown literally. Markup in any field
neither crashes the app nor becomes a link or a style; control characters reach the
terminal only as visible escapes."""

from __future__ import annotations

import json

import pytest

from memtui.core.actions import open_store
from memtui.core.paths import Paths
from memtui.tui.app import MemtuiApp
from memtui.tui.screens import ConfirmScreen, EditScreen
from memtui.tui.widgets import EntryPane
from tests.tui.conftest import press_for, screen_text, wait_until

CLICK = "[@click=app.toggle_memory]x[/]"
OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
OSC8 = "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\"
CONTROL = set(chr(c) for c in range(0x20) if c not in (0x09, 0x0A)) | {"\x7f"} | set(chr(c) for c in range(0x80, 0xA0))


def hostile(tmp_path) -> Paths:
    """A workspace whose every field holds markup, and whose text and file names hold escapes."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    (ws / ".muse" / "settings.json").write_text(json.dumps({"memoryEnabled": True}))
    (home / "memory" / "notes.md").write_text(
        "---\ntype: '[bold red]pref[/]'\ntags: ['[/]', '[@click=app.quit]t[/]']\nsource: '[link=https://x]s[/link]'\n"
        "updatedAt: 2026-01-02\n---\n\n## Notes [/]\n\n"
        f"- {CLICK} keep the switch\n- escape {OSC52} in text\n- a link {OSC8} here\n")
    (home / "memory" / "single.md").write_text(
        "---\nname: '[b]name[/b] [/]'\ndescription: '[@click=app.quit]d[/]'\n---\n\n# [red]Heading[/red] [/]\n\n"
        "Whole-file memory about [i]markup[/i]\n")
    (ws / ".muse" / "memory" / "evil[b]\x1b[31mname.md").write_text("- project memory in an escaped file name\n")
    paths = Paths(home, ws)
    store = open_store(paths)
    try:
        store.conversations.ensure_conversation("c1", f"[@click=app.quit]title[/] {OSC52}", str(ws))
        # written as Muse writes it (memtui itself refuses control characters in new text)
        store.conversations.add(f"conversation {CLICK} {OSC52}", conversation_id="c1")
    finally:
        store.close()
    return paths


def screen_segments(app):
    for strip in app.screen._compositor.render_strips():
        yield from strip


def assert_safe(app) -> None:
    for seg in screen_segments(app):
        assert not (CONTROL & set(seg.text)), f"control character reached the screen: {seg.text!r}"
        meta = seg.style.meta if seg.style else {}
        assert "toggle_memory" not in str(meta.get("@click", "")), "memory text became a link"
        assert "quit" not in str(meta.get("@click", "")), "a field became a link"


async def started(pilot):
    await wait_until(pilot, lambda: pilot.app.loaded and pilot.app.last_result is not None, message="app loaded")


@pytest.mark.parametrize("size", [(140, 45), (80, 24)])
async def test_hostile_workspace_is_shown_literally(tmp_path, size):
    paths = hostile(tmp_path)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        user = app.query_one("#pane-user", EntryPane)
        assert len(user.entries) == 4
        for layer in ("user", "project", "conversation"):
            await pilot.press({"user": "1", "project": "2", "conversation": "3"}[layer])
            pane = app.query_one(f"#pane-{layer}", EntryPane)
            for _ in pane.entries:
                await pilot.pause()
                assert_safe(app)
                await pilot.press("down")
        await pilot.press("p", *"keep switch escape link markup")
        await wait_until(pilot, lambda: app.last_result.query == "keep switch escape link markup")
        await pilot.press("escape", "f")
        await pilot.pause()
        assert_safe(app)
        text = screen_text(app)
        assert "\\x1b" in text
        if size[0] >= 100:
            assert CLICK in text  # the memory text, literally
        # nothing flipped the switch
        assert json.loads(paths.workspace_settings.read_text()) == {"memoryEnabled": True}


async def test_detail_and_dialogs_show_fields_literally(tmp_path):
    paths = hostile(tmp_path)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        pane = app.query_one("#pane-user", EntryPane)
        entry = next(e for e in pane.entries if CLICK in e.text)
        pane.select_id(entry.id)
        await pilot.pause()
        text = screen_text(app)
        for literal in (CLICK, "[bold red]pref[/]", "[@click=app.quit]t[/]", "[link=https://x]s[/link]", "Notes [/]"):
            assert literal in text, literal
        assert_safe(app)
        single = next(e for e in pane.entries if e.name)
        pane.select_id(single.id)
        await pilot.pause()
        text = screen_text(app)
        assert "[b]name[/b] [/]" in text and "[@click=app.quit]d[/]" in text
        await press_for(pilot, "e", EditScreen)
        assert_safe(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditScreen))
        await pilot.press("3")
        await press_for(pilot, "d", ConfirmScreen)
        await pilot.pause()
        assert_safe(app)
        assert "[@click=app.quit]title[/]" in screen_text(app)
        await pilot.press("n")


async def test_clicking_memory_text_triggers_nothing(tmp_path):
    paths = hostile(tmp_path)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        pane = app.query_one("#pane-user", EntryPane)
        entry = next(e for e in pane.entries if CLICK in e.text)
        pane.select_id(entry.id)
        await pilot.pause()
        detail = app.query_one("#detail-body")
        for x in range(0, 12):
            await pilot.click(detail, offset=(x, 0))
        await pilot.pause()
        assert app.settings.enabled and app.is_running
    assert json.loads(paths.workspace_settings.read_text()) == {"memoryEnabled": True}
