"""Scope carried by import and export (SPEC §16), as the CLI does it: a Cursor rule's globs
become the memtui file's `paths:` (so the rule is injected only for its files), come back as
`globs` on export (byte for byte while nothing changed), and what a format cannot hold is said
on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memtui.core.serve import build_injection
from tests.helpers import enable, write

MEMTUI = str(Path(sys.executable).parent / "memtui")
REACT = ("---\ndescription: React component conventions\nglobs: src/web/**/*.tsx, src/web/**/*.ts\n"
         "alwaysApply: false\n---\n\n- Use function components with hooks\n")
LISTED = '---\ndescription: Styles\nglobs:\n  - "src/**/*.css"\n  - "src/**/*.{scss,sass}"\nalwaysApply: false\n---\n\n- BEM class names\n'
AGENT = "---\ndescription: How to write database migrations\nglobs:\nalwaysApply: false\n---\n\n- Migrations are reversible\n"


def run(paths, *args) -> subprocess.CompletedProcess:
    return subprocess.run([MEMTUI, "--home", str(paths.home), "-w", str(paths.workspace), *args],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_an_imported_cursor_rule_keeps_its_scope_through_import_and_export(paths, tmp_path):
    enable(paths)
    rules = tmp_path / "cursor-rules"
    write(rules / "react.mdc", REACT)
    write(rules / "styles.mdc", LISTED)
    write(rules / "migrations.mdc", AGENT)
    imported = run(paths, "import", "cursor", str(rules))
    assert imported.returncode == 0, imported.stderr
    assert "migrations.mdc: an agent-requested Cursor rule" in imported.stderr  # said, not dropped in silence
    react = (paths.project_root / "imported" / "cursor" / "react.md").read_text(encoding="utf-8")
    assert "\npaths:\n- src/web/**/*.tsx\n- src/web/**/*.ts\n" in react

    # injected only with one of its files in context
    assert "function components" not in build_injection(paths.workspace, "components", home=paths.home).text
    assert "function components" in build_injection(paths.workspace, "components", home=paths.home,
                                                    files=["src/web/App.tsx"]).text
    assert "BEM" in build_injection(paths.workspace, "class names", home=paths.home, files=["src/a/b.scss"]).text

    out = tmp_path / "out"
    exported = run(paths, "export", "cursor", str(out))
    assert exported.returncode == 0, exported.stderr
    assert (out / "react.mdc").read_text(encoding="utf-8") == REACT  # byte for byte
    assert (out / "styles.mdc").read_text(encoding="utf-8") == LISTED

    # the scope edited in memtui is the one exported
    (paths.project_root / "imported" / "cursor" / "react.md").write_text(
        react.replace("- src/web/**/*.ts\n", "- src/api/**\n"), encoding="utf-8")
    again = run(paths, "export", "cursor", str(out), "--json")
    assert again.returncode == 0, again.stderr
    text = (out / "react.mdc").read_text(encoding="utf-8")
    assert "globs: src/web/**/*.tsx, src/api/**\nalwaysApply: false\n" in text


def test_a_scoped_muse_memory_exports_as_a_cursor_glob_and_says_what_other_formats_lose(paths, tmp_path):
    enable(paths)
    write(paths.project_root / "api.md", '---\npaths:\n  - "src/api/**"\n---\n\n- API handlers return typed errors\n')
    out = tmp_path / "cursor"
    r = run(paths, "export", "cursor", str(out))
    assert r.returncode == 0 and "note:" not in r.stderr
    assert "globs: src/api/**\nalwaysApply: false\n" in (out / "api.mdc").read_text(encoding="utf-8")
    agents = run(paths, "export", "agents-md", str(tmp_path / "AGENTS.md"), "--json")
    assert agents.returncode == 0, agents.stderr
    assert "note: api.md: its scope (paths: src/api/**) cannot be carried: agents-md has no per-file scope" in agents.stderr
    assert json.loads(agents.stdout)["scope_notes"] == [
        {"path": "api.md", "note": "its scope (paths: src/api/**) cannot be carried: agents-md has no per-file scope"}]


def test_a_rule_file_imported_by_path_keeps_its_scope_and_says_what_it_loses(paths, tmp_path):
    """Claude Code's `.claude/rules` `paths:`, Copilot's `applyTo` (its `excludeAgent` said),
    Windsurf's `trigger: model_decision` (said, not carried), through `import agents-md FILE`."""
    enable(paths)
    claude = write(tmp_path / ".claude" / "rules" / "api.md",
                   '---\npaths:\n  - "src/api/**/*.ts"\n---\n\n# API rules\n\n- Validate every input\n')
    copilot = write(tmp_path / ".github" / "instructions" / "db.instructions.md",
                    '---\napplyTo: "db/**/*.sql,migrations/**"\nexcludeAgent: "code-review"\n---\n\n'
                    "Migrations are reversible.\n")
    windsurf = write(tmp_path / ".windsurf" / "rules" / "style.md",
                     "---\ntrigger: model_decision\ndescription: Style\n---\n\n- Prefer small functions\n")
    said = {}
    for source in (claude, copilot, windsurf):
        r = run(paths, "import", "agents-md", str(source))
        assert r.returncode == 0, r.stderr
        said[source.name] = r.stderr
    assert "note:" not in said["api.md"]
    assert "Copilot's `excludeAgent: code-review` cannot be carried" in said["db.instructions.md"]
    assert said["style.md"].count("Windsurf's `trigger: model_decision` cannot be carried") == 1
    files = {p.name: p.read_text(encoding="utf-8") for p in (paths.project_root / "imported").rglob("*.md")}
    assert "\npaths:\n- src/api/**/*.ts\n" in files["api.md"]
    assert "\npaths:\n- db/**/*.sql\n- migrations/**\n" in files["db.instructions.md"]
    assert "paths:" not in files["style.md"]
    assert "Validate every input" not in build_injection(paths.workspace, "validate input", home=paths.home).text
    assert "Validate every input" in build_injection(paths.workspace, "validate input", home=paths.home,
                                                     files=["src/api/users.ts"]).text
