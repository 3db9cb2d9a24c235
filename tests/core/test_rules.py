"""`memtui scope PATH` and the doctor's `never_fires` (SPEC §16) on a workspace holding each
assistant's rule files in the shapes those tools write them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core import doctor, rules
from memtui.core.workspace_files import list_files
from tests.helpers import enable, write

MEMTUI = str(Path(sys.executable).parent / "memtui")

# Each tool's files as that tool (or its docs) writes them.
FILES = {
    # Claude Code: CLAUDE.md, .claude/rules/*.md with a `paths:` YAML list, nested CLAUDE.md
    "CLAUDE.md": "# Project\n\n- Run `npm test` before committing\n",
    ".claude/rules/api.md": '---\npaths:\n  - "src/api/**/*.ts"\n---\n\n# API Development Rules\n\n'
                            "- All API endpoints must include input validation\n",
    ".claude/rules/testing.md": "# Testing\n\n- Use vitest\n",
    ".claude/rules/quoted.md": '---\npaths: "src/**/*.ts"\n---\n\n- A string, not a list\n',
    ".claude/rules/broken.md": "---\npaths: [src/**\n---\n\n- Unclosed flow list\n",
    ".claude/rules/nothing.md": '---\npaths:\n  - "legacy/**/*.rb"\n---\n\n- Ruby rules\n',
    "packages/web/CLAUDE.md": "# Web package\n\n- Next.js app router\n",
    # Cursor: .cursor/rules/*.mdc with description / globs (bare, comma-separated) / alwaysApply
    ".cursor/rules/react.mdc": "---\ndescription: React component conventions\nglobs: src/web/**/*.tsx,src/web/**/*.ts\n"
                               "alwaysApply: false\n---\n\n- Use function components\n",
    ".cursor/rules/always.mdc": "---\ndescription:\nglobs:\nalwaysApply: true\n---\n\n- Answer in English\n",
    ".cursor/rules/agent.mdc": "---\ndescription: How to write database migrations\nglobs:\nalwaysApply: false\n---\n\n"
                               "- Migrations are reversible\n",
    ".cursor/rules/manual.mdc": "---\ndescription:\nglobs:\nalwaysApply: false\n---\n\n- Release checklist\n",
    ".cursor/rules/string.mdc": '---\ndescription:\nglobs:\nalwaysApply: "true"\n---\n\n- Quoted true\n',
    ".cursor/rules/notes.md": "---\nalwaysApply: true\n---\n\n- A .md, not a .mdc\n",
    ".cursor/rules/ts.mdc": "---\ndescription: TypeScript\nglobs: **/*.ts\nalwaysApply: false\n---\n\n- strict mode\n",
    # Copilot: copilot-instructions.md, *.instructions.md with applyTo "a,b" and excludeAgent
    ".github/copilot-instructions.md": "This is a TypeScript monorepo.\n",
    ".github/instructions/api.instructions.md": '---\napplyTo: "src/api/**/*.ts,src/api/**/*.js"\n'
                                                'excludeAgent: "code-review"\n---\n\nReturn typed errors.\n',
    ".github/instructions/style.md": '---\napplyTo: "**"\n---\n\nNot an .instructions.md file.\n',
    # Windsurf: .windsurf/rules/*.md with trigger (+ globs)
    ".windsurf/rules/tests.md": "---\ntrigger: glob\nglobs: **/*.test.ts\n---\n\n- Tests use vitest\n",
    ".windsurf/rules/always.md": "---\ntrigger: always_on\n---\n\n- Be brief\n",
    ".windsurf/rules/db.md": "---\ntrigger: model_decision\ndescription: Database work\n---\n\n- Use the pool\n",
    ".windsurf/rules/typo.md": "---\ntrigger: alwayson\n---\n\n- A trigger Windsurf does not know\n",
    # Cline: .clinerules/ with a `paths:` list
    ".clinerules/web.md": '---\npaths:\n  - "src/web/**"\n---\n\n# Web\n\n- Tailwind only\n',
    ".clinerules/general.md": "# General\n\n- Small commits\n",
    # Codex and Gemini CLI: nested AGENTS.md / GEMINI.md
    "AGENTS.md": "# Agents\n\n- pnpm, not npm\n",
    "packages/web/AGENTS.md": "# Web agents\n",
    "packages/web/AGENTS.override.md": "# Web override\n",
    "GEMINI.md": "# Gemini\n",
    "packages/api/GEMINI.md": "# API package\n",
    # the code
    "src/api/users.ts": "export {}\n",
    "src/web/App.tsx": "export {}\n",
    "src/web/App.test.ts": "export {}\n",
    "packages/web/index.ts": "export {}\n",
    "packages/api/main.py": "print()\n",
}


@pytest.fixture
def ws(paths):
    for rel, text in FILES.items():
        write(paths.workspace / rel, text)
    write(paths.project_root / "api.md", '---\npaths:\n  - "src/api/**"\n---\n\n- API memory\n')
    write(paths.project_root / "gone.md", '---\npaths: ["old/**"]\n---\n\n- About code that was deleted\n')
    write(paths.project_root / "context.md", "- Always here\n")
    enable(paths)
    return paths


def states(workspace: Path, path: str) -> dict[tuple[str, str], str]:
    listing = list_files(workspace)
    muse = [(".muse/memory/api.md", ("src/api/**",)), (".muse/memory/context.md", ())]
    answer = rules.report(workspace, path, listing, muse)
    return {(d.rule.assistant, d.rule.file): d.state for d in answer.decisions}


def test_each_assistant_loads_what_its_documentation_says_for_a_file(ws):
    got = states(ws.workspace, "src/api/users.ts")
    assert got == {
        ("muse", ".muse/memory/api.md"): "loaded",
        ("muse", ".muse/memory/context.md"): "loaded",
        ("claude-code", "CLAUDE.md"): "loaded",
        ("claude-code", "packages/web/CLAUDE.md"): "not_loaded",
        ("claude-code", ".claude/rules/api.md"): "loaded",
        ("claude-code", ".claude/rules/broken.md"): "ignored",
        ("claude-code", ".claude/rules/nothing.md"): "not_loaded",
        ("claude-code", ".claude/rules/quoted.md"): "ignored",
        ("claude-code", ".claude/rules/testing.md"): "loaded",
        ("cursor", ".cursor/rules/agent.mdc"): "model_decides",
        ("cursor", ".cursor/rules/always.mdc"): "loaded",
        ("cursor", ".cursor/rules/manual.mdc"): "manual",
        ("cursor", ".cursor/rules/notes.md"): "ignored",
        ("cursor", ".cursor/rules/react.mdc"): "not_loaded",
        ("cursor", ".cursor/rules/string.mdc"): "ignored",
        ("cursor", ".cursor/rules/ts.mdc"): "loaded",
        ("cursor", "AGENTS.md"): "loaded",
        ("cursor", "packages/web/AGENTS.md"): "not_loaded",
        ("copilot", ".github/copilot-instructions.md"): "loaded",
        ("copilot", ".github/instructions/api.instructions.md"): "loaded",
        ("copilot", ".github/instructions/style.md"): "ignored",
        ("windsurf", ".windsurf/rules/always.md"): "loaded",
        ("windsurf", ".windsurf/rules/db.md"): "model_decides",
        ("windsurf", ".windsurf/rules/tests.md"): "not_loaded",
        ("windsurf", ".windsurf/rules/typo.md"): "ignored",
        ("windsurf", "AGENTS.md"): "loaded",
        ("windsurf", "packages/web/AGENTS.md"): "not_loaded",
        ("cline", ".clinerules/general.md"): "loaded",
        ("cline", ".clinerules/web.md"): "not_loaded",
        ("cline", "AGENTS.md"): "loaded",
        ("cline", "packages/web/AGENTS.md"): "not_loaded",
        ("codex", "AGENTS.md"): "loaded",
        ("codex", "packages/web/AGENTS.override.md"): "not_loaded",  # the override wins in its folder
        ("gemini", "GEMINI.md"): "loaded",
        ("gemini", "packages/api/GEMINI.md"): "not_loaded",
    }
    below = states(ws.workspace, "packages/web/index.ts")
    assert below[("claude-code", "packages/web/CLAUDE.md")] == "loaded"
    assert below[("codex", "packages/web/AGENTS.override.md")] == "loaded"
    assert below[("muse", ".muse/memory/api.md")] == "not_loaded"
    assert below[("claude-code", ".claude/rules/api.md")] == "not_loaded"
    web = states(ws.workspace, "src/web/App.test.ts")
    assert web[("cursor", ".cursor/rules/react.mdc")] == "loaded"
    assert web[("windsurf", ".windsurf/rules/tests.md")] == "loaded"
    assert web[("cline", ".clinerules/web.md")] == "loaded"


def test_the_reasons_name_the_glob_the_folder_or_the_problem(ws):
    listing = list_files(ws.workspace)
    answer = rules.report(ws.workspace, "src/api/users.ts", listing)
    why = {(d.rule.assistant, d.rule.file): d.why for d in answer.decisions}
    assert why[("claude-code", ".claude/rules/api.md")] == "glob matched: src/api/**/*.ts"
    assert why[("cursor", "AGENTS.md")] == "always"
    assert "YAML list" in why[("claude-code", ".claude/rules/quoted.md")]
    assert "is a string" in why[("cursor", ".cursor/rules/string.mdc")]
    copilot = next(d for d in answer.decisions if d.rule.file == ".github/instructions/api.instructions.md")
    assert copilot.rule.notes == ("`excludeAgent: code-review`: Copilot's code-review does not read it",)
    nested = rules.decide(next(d.rule for d in answer.decisions if d.rule.file == "packages/web/CLAUDE.md"),
                          "packages/web/x.ts")
    assert nested.why == "nested folder: packages/web/"


NEVER = {  # one of each kind: ignored as written, or matching no file of the workspace
    ".claude/rules/quoted.md": "claude-code: `paths:` is not a YAML list",
    ".claude/rules/broken.md": "claude-code: its frontmatter cannot be read",
    ".claude/rules/nothing.md": "claude-code: no file of the workspace matches legacy/**/*.rb",
    ".cursor/rules/notes.md": "cursor: a `.md` file in .cursor/rules",
    ".cursor/rules/string.mdc": 'cursor: `alwaysApply: "true"` is a string',
    ".github/instructions/style.md": "copilot: Copilot reads `NAME.instructions.md` files only",
    ".windsurf/rules/typo.md": "windsurf: `trigger: alwayson` is not",
    "gone.md:5": "scoped memory: no file of the workspace matches old/**",
}


def test_the_doctor_names_every_rule_that_never_fires(ws):
    found = {f.source: f.reason for f in doctor.findings(ws, ("never_fires",))}
    assert set(found) == set(NEVER)
    for source, start in NEVER.items():
        assert found[source].startswith(start), (source, found[source])


def test_memtui_scope_prints_the_same_answer(ws):
    def run(*args):
        return subprocess.run([MEMTUI, "--home", str(ws.home), "-w", str(ws.workspace), "scope", *args],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)

    r = run("src/api/users.ts", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["path"] == "src/api/users.ts"
    assert list(data["assistants"]) == list(rules.ASSISTANTS)
    muse = {d["file"]: (d["state"], d["why"]) for d in data["assistants"]["muse"]}
    assert muse[".muse/memory/api.md"] == ("loaded", "glob matched: src/api/**")
    assert muse[".muse/memory/gone.md"] == ("not_loaded", "no glob matches: old/**")
    assert {n["file"] for n in data["never_fires"]} >= {".cursor/rules/notes.md", ".muse/memory/gone.md"}
    text = run("src/api/users.ts").stdout
    assert "glob matched: src/api/**/*.ts" in text and "never fires" in text
    assert run("/etc/passwd").returncode == 2
