"""The preview's files field (SPEC §16): a scoped memory is left out until one of its files is
typed there, and ctrl+o shows what each assistant loads for that file. The real app, Pilot,
real files."""

from __future__ import annotations

from memtui.tui.app import MemtuiApp
from memtui.tui.screens.scope import ScopeScreen
from tests.helpers import enable, write
from tests.tui.conftest import shown, wait_until


async def test_the_files_field_brings_a_scoped_memory_in_and_ctrl_o_explains_the_file(paths):
    write(paths.project_root / "api.md", '---\npaths:\n  - "src/api/**"\n---\n\n- API handlers return typed errors\n')
    write(paths.project_root / "context.md", "- Use ruff for linting errors\n")
    write(paths.workspace / ".cursor" / "rules" / "api.mdc",
          "---\ndescription: API\nglobs: src/api/**/*.py\nalwaysApply: false\n---\n\n- Validate input\n")
    write(paths.workspace / "src" / "api" / "users.py", "x = 1\n")
    enable(paths)
    app = MemtuiApp(paths, watch=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_until(pilot, lambda: pilot.app.loaded and pilot.app.last_result is not None, message="app loaded")
        await pilot.press("p")
        await wait_until(pilot, lambda: str(app.query_one("#fold").title).startswith("1 memory injected"),
                         message="the scoped memory left out")
        await wait_until(pilot, lambda: "1 out of scope" in str(app.query_one("#left-out_of_scope").title),
                         message="the reason counted")

        app.query_one("#context-files").focus()
        await pilot.press(*"src/api/users.py")
        await wait_until(pilot, lambda: str(app.query_one("#fold").title).startswith("2 memories injected"),
                         message="the scoped memory brought in by its file")

        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, ScopeScreen), message="the scope dialog")
        report = app.screen.query_one("#scope-report")
        await wait_until(pilot, lambda: "glob matched" in shown(report, width=300), message="the scope report")
        text = shown(report, width=300)
        assert ".muse/memory/api.md" in text and "glob matched: src/api/**" in text
        assert ".cursor/rules/api.mdc" in text and "glob matched: src/api/**/*.py" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ScopeScreen), message="the dialog closed")
