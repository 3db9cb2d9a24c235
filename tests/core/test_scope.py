"""Scoped memories (SPEC §16): `paths:` globs, the injection's scope step, the files in
context a hook finds in the prompt and in Claude Code's transcript."""

from __future__ import annotations

import json

import pytest

from memtui.core import context, scope
from memtui.core.injection import inject
from memtui.core.model import Entry, Layer
from memtui.core.serve import build_injection
from memtui.core.settings import load_settings
from memtui.core.store import MemoryStore
from memtui.core.workspace_files import list_files
from tests.helpers import enable, write

SCOPED = """\
---
type: knowledge
paths:
  - "src/api/**"
  - "**/*.sql"
---

- API handlers return typed errors, never bare strings
"""
UNSCOPED = "- Use ruff for linting errors\n"


# ---------------------------------------------------------------------- globs
@pytest.mark.parametrize("globs, path, expected", [
    (["src/api/**"], "src/api/x.py", True),
    (["src/api/**"], "src/apis/x.py", False),
    (["**/*.ts"], "a.ts", True),
    (["**/*.ts"], "src/b/a.ts", True),
    (["*.ts"], "src/b/a.ts", True),  # no "/": the name at any depth (gitignore-style)
    (["src/*.ts"], "src/b/a.ts", False),  # one "*" stays in its folder
    (["src/**/*.{ts,tsx}"], "src/a/b.tsx", True),  # braces expand
    (["src/**/*.{ts,tsx}"], "src/a/b.js", False),
    (["src/api"], "src/api/deep/x.py", True),  # a folder: everything below it
    (["./docs/**"], "docs/a.md", True),
    ([".github/**"], ".github/workflows/ci.yml", True),
    ([], "a.py", False),
])
def test_globs_match_as_documented(globs, path, expected):
    assert scope.matches(globs, path) is expected


@pytest.mark.parametrize("value, expected", [
    (["src/**", "lib/*.py"], ("src/**", "lib/*.py")),
    ("src/**, lib/*.py", ("src/**", "lib/*.py")),
    ("src/*.{ts,tsx}, docs/**", ("src/*.{ts,tsx}", "docs/**")),  # a comma in braces does not split
    ("'**/*.ts'", ("**/*.ts",)),
    (None, ()),
    ("", ()),
    ([None, "", "a/**"], ("a/**",)),
])
def test_frontmatter_values_give_globs(value, expected):
    assert scope.globs_of(value) == expected


# ---------------------------------------------------------------------- the injection's step
def _entry(text: str, rel: str, line: int, paths: tuple[str, ...] = ()) -> Entry:
    return Entry(id=f"{rel}:{line}", layer=Layer.PROJECT, text=text, rel_path=rel, line_start=line, paths=paths)


def test_a_scoped_entry_is_out_of_scope_without_its_file_and_a_candidate_with_it(paths):
    enable(paths)
    settings = load_settings(paths)
    entries = [_entry("API handlers return typed errors", "api.md", 5, ("src/api/**",)),
               _entry("Use ruff for linting", "context.md", 0)]
    without = inject({Layer.PROJECT: entries}, settings, "errors")
    assert [c.line for c in without.included] == ["- Use ruff for linting"]
    out = [c for c in without.candidates if c.status == "out_of_scope"]
    assert [c.source for c in out] == ["api.md:6"]
    assert out[0].as_dict()["reason"] == "no file in context matches paths: src/api/**"
    assert without.status_counts() == {"included": 1, "out_of_scope": 1}

    elsewhere = inject({Layer.PROJECT: entries}, settings, "errors", files=["src/web/app.ts"])
    assert [c.status for c in elsewhere.candidates] == ["included", "out_of_scope"]
    assert elsewhere.as_dict()["files"] == ["src/web/app.ts"]

    within = inject({Layer.PROJECT: entries}, settings, "errors", files=["src/api/users.py"])
    assert [c.line for c in within.included] == ["- API handlers return typed errors", "- Use ruff for linting"]
    assert "out_of_scope" not in within.status_counts()


def test_unscoped_memories_never_ask_for_the_files_in_context(paths):
    enable(paths)
    asked = []

    def files():
        asked.append(1)
        return ["src/api/x.py"]

    result = inject({Layer.PROJECT: [_entry("Use ruff", "context.md", 0)]}, load_settings(paths), "ruff", files=files)
    assert result.count == 1 and asked == []
    assert "files" not in result.as_dict()  # §5's JSON, unchanged


def test_paths_are_read_from_the_frontmatter_through_the_store_and_the_prepared_index(paths):
    enable(paths)
    write(paths.project_root / "api.md", SCOPED)
    write(paths.project_root / "context.md", UNSCOPED)
    store = MemoryStore(paths)
    try:
        store.load()
        (scoped,) = [e for e in store.entries() if e.rel_path == "api.md"]
        assert scoped.paths == ("src/api/**", "**/*.sql")
        assert scoped.as_dict()["paths"] == ["src/api/**", "**/*.sql"]  # `list --json` names it
        (plain,) = [e for e in store.entries() if e.rel_path == "context.md"]
        assert "paths" not in plain.as_dict()
    finally:
        store.close()
    for _ in range(2):  # built, then answered from what was saved
        result = build_injection(paths.workspace, "errors", home=paths.home)
        assert result.count == 1
        pieces = json.loads(result.to_json())
        statuses = {c["source"]: (c["status"], c.get("reason")) for c in pieces["candidates"]}
        assert statuses["api.md:8"] == ("out_of_scope", "no file in context matches paths: src/api/**, **/*.sql")
        assert build_injection(paths.workspace, "errors", home=paths.home, files=["db/m.sql"]).count == 2
    write(paths.project_root / "api.md", SCOPED.replace('  - "**/*.sql"\n', ""))  # taken in as it changes
    assert build_injection(paths.workspace, "errors", home=paths.home, files=["db/m.sql"]).count == 1


# ---------------------------------------------------------------------- files a prompt names
def test_a_prompt_names_files_by_path_by_at_and_by_a_name_only_one_file_has(tmp_path):
    ws = tmp_path
    for rel in ("src/api/users.py", "src/web/app.ts", "lib/util.py", "tests/util.py", "README.md"):
        write(ws / rel, "x\n")
    prompt = ("Fix @src/api/users.py, then look at src/web/app.ts. Also app.ts, util.py and README.md; "
              "gone/missing.py is not there, nor is e.g. or v1.2")
    found = context.named_in_prompt(prompt, ws)
    assert found == ["src/api/users.py", "src/web/app.ts", "README.md"]  # util.py: two files share the name
    assert context.named_in_prompt(f"see {ws / 'lib' / 'util.py'}", ws) == ["lib/util.py"]
    listed = []
    assert context.named_in_prompt("e.g. v1.2, i.e. 3.14 and a...b", ws, list_names=lambda: listed.append(1) or []) == []
    assert listed == []  # no word read as a file name: the workspace is not listed


def test_a_bare_name_lists_the_workspace_within_its_limits(tmp_path):
    ws = tmp_path
    write(ws / ".gitignore", "build/\n*.log\n")
    write(ws / "build" / "gen.py", "x\n")
    write(ws / "node_modules" / "pkg" / "gen.py", "x\n")
    write(ws / "src" / "gen.py", "x\n")
    write(ws / "src" / "debug.log", "x\n")
    listing = list_files(ws)
    assert listing.complete and sorted(listing.files) == [".gitignore", "src/gen.py"]
    assert context.named_in_prompt("regenerate gen.py", ws) == ["src/gen.py"]
    cut = list_files(ws, limit=1)
    assert not cut.complete and len(cut.files) == 1


# ---------------------------------------------------------------------- Claude Code's transcript
def _line(**data) -> str:
    base = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/w",
            "sessionId": "8c35adc1-0b9e-4c43-9a57-1f0d3b6e2a11", "version": "2.1.12", "gitBranch": "main",
            "timestamp": "2026-11-20T10:00:00.000Z", "uuid": "u"}
    return json.dumps({**base, **data})


def _prompt(text: str) -> str:
    return _line(type="user", message={"role": "user", "content": text})


def _tool(name: str, **given) -> str:
    return _line(type="assistant", requestId="req_1", message={
        "model": "claude-opus-4-5-20251101", "id": "msg_1", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": name, "input": given}],
        "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 25}})


def _result(path: str) -> str:
    return _line(type="user", message={"role": "user", "content": [
        {"tool_use_id": "toolu_1", "type": "tool_result", "content": "     1→x"}]},
        toolUseResult={"type": "text", "file": {"filePath": path, "content": "x", "numLines": 1,
                                                "startLine": 1, "totalLines": 1}})


def write_transcript(path, ws, turns: list[list[str]]) -> None:
    """A Claude Code transcript: per turn a prompt, then tool calls on `files` (Read, Edit, Write in turn)."""
    lines = [json.dumps({"type": "queue-operation", "operation": "dequeue", "timestamp": "2026-11-20T10:00:00.000Z",
                         "sessionId": "8c35adc1-0b9e-4c43-9a57-1f0d3b6e2a11"})]
    tools = [("Read", "file_path"), ("Edit", "file_path"), ("Write", "file_path"), ("NotebookEdit", "notebook_path")]
    for n, files in enumerate(turns):
        lines.append(_prompt(f"prompt {n}"))
        for i, rel in enumerate(files):
            name, key = tools[i % len(tools)]
            given = {key: str(ws / rel)}
            if name == "Edit":
                given.update(old_string="a", new_string="b")
            lines += [_tool(name, **given), _result(str(ws / rel))]
    lines.append(_tool("Bash", command="ls", description="List"))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_transcript_gives_the_files_read_or_edited_in_the_last_turns(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript, ws, [["old/a.py"], ["src/b.py", "src/c.py"], ["src/d.py"], ["nb/e.ipynb", "x/f.py",
                                                                                          "y/g.py", "z/h.ipynb"]])
    found = context.transcript_files(transcript, ws, turns=3)
    assert found == ["z/h.ipynb", "y/g.py", "x/f.py", "nb/e.ipynb", "src/d.py", "src/c.py", "src/b.py"]
    assert context.transcript_files(transcript, ws, turns=1) == ["z/h.ipynb", "y/g.py", "x/f.py", "nb/e.ipynb"]
    assert context.transcript_files(tmp_path / "missing.jsonl", ws) == []
    with transcript.open("a", encoding="utf-8") as fh:  # a torn last line and a path outside
        fh.write(_tool("Read", file_path="/etc/passwd") + "\n" + '{"type": "assist')
    assert "src/d.py" in context.transcript_files(transcript, ws)
    assert all(not f.startswith("/") for f in context.transcript_files(transcript, ws))


def test_only_the_end_of_a_long_transcript_is_read(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript, ws, [["early.py"]] + [[] for _ in range(2000)] + [["late.py"]])
    assert transcript.stat().st_size > context.TAIL_BYTES
    assert context.transcript_files(transcript, ws, turns=10_000) == ["late.py"]  # the start is never read
