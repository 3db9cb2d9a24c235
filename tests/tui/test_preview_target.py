"""The preview as each assistant receives it (SPEC §11), and the detail naming which
assistants an entry was injected to: the real app, Pilot, real files and a real muse.db."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memtui.core.assistants import Target
from memtui.core.assistants.delivery import for_target
from memtui.core.serve import build_injection
from memtui.tui.app import MemtuiApp
from memtui.tui.widgets import EntryPane, PreviewPane
from tests.helpers import enable, write
from tests.tui.conftest import shown, wait_until

MEMTUI = str(Path(sys.executable).parent / "memtui")


async def started(pilot):
    await wait_until(pilot, lambda: pilot.app.loaded and pilot.app.last_result is not None, message="app loaded")


async def test_ctrl_t_shows_the_preview_as_each_assistant_receives_it(paths):
    write(paths.project_root / "notes.md", "".join(f"- Note {i:03d} about the quokka deploy: {'z' * 120}\n" for i in range(150)))
    enable(paths, {"memory": {"budget": {"total": 6000, "user": 600, "project": 6000, "conversation": 600}}})
    full = build_injection(paths.workspace, "", home=paths.home)
    assert len(full.text) > 10_000
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        pane = app.query_one(PreviewPane)
        assert pane.border_title == "Injection preview"
        await pilot.press("p", "ctrl+t")
        assert pane.border_title == "Injection preview · as Claude Code receives it"
        cut = for_target(full, Target.CLAUDE_CODE)
        assert shown(app.query_one("#injected-text"), width=400).count("Note ") == cut.count < full.count
        assert str(app.query_one("#fold").title).startswith(f"{cut.count} memories injected")
        assert "Cut to the 10000 characters Claude Code keeps" in shown(app.query_one("#problems"))
        await pilot.press("ctrl+t", "ctrl+t")
        assert pane.border_title == "Injection preview · as Gemini CLI receives it"
        assert str(app.query_one("#fold").title).startswith(f"{full.count} memories injected")
        await pilot.press("ctrl+t")
        assert pane.border_title == "Injection preview"


async def test_the_detail_says_which_assistants_received_an_entry(paths):
    write(paths.project_root / "notes.md", "- Deploy with the quokka script\n")
    enable(paths)
    for target, event in (("codex", "UserPromptSubmit"), ("codex", "UserPromptSubmit"), ("gemini", "BeforeAgent")):
        stdin = json.dumps({"hook_event_name": event, "prompt": "quokka", "cwd": str(paths.workspace)}).encode()
        ran = subprocess.run([MEMTUI, "--home", str(paths.home), "hook", target], input=stdin, capture_output=True,
                             timeout=60, env={**os.environ})
        assert ran.returncode == 0 and b"quokka" in ran.stdout
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await started(pilot)
        await wait_until(pilot, lambda: bool(app.history), message="the history read")
        pane = app.query_one("#pane-project", EntryPane)
        pane.focus()
        await pilot.press("2")
        await wait_until(pilot, lambda: "injected 3 times" in shown(app.query_one("#detail-body"), width=300),
                         message="the detail's history row")
        assert "injected 3 times (codex 2, gemini 1)" in shown(app.query_one("#detail-body"), width=300)


async def test_ctrl_t_is_in_the_help_and_in_the_footer_while_in_the_preview(paths):
    """Discoverable at 80×24: the help screen lists ctrl+t, and the footer shows it once the
    preview has focus (it works only there), beside Esc."""
    from memtui.tui.screens import HelpScreen
    from tests.tui.conftest import screen_text

    write(paths.project_root / "notes.md", "- Deploy with the quokka script\n")
    enable(paths)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        assert "^t" not in screen_text(app).splitlines()[-1]  # not in the panes, where it does nothing
        await pilot.press("p")
        await wait_until(pilot, lambda: "^t Assistant" in screen_text(app).splitlines()[-1], message="the footer")
        assert "esc Leave input" in screen_text(app).splitlines()[-1]
        await pilot.press("escape", "question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), message="the help screen")
        rows = dict(app.screen.rows)
        assert "Codex" in rows["ctrl+t (in the preview)"]
