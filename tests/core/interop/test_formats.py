"""AGENTS.md-style files, Cursor rules, Cline's memory bank and JSON Lines: exact reads and round trips."""

from __future__ import annotations

import json

import pytest

from memtui.core import interop
from memtui.core.interop import Memory, cursor

from .helpers import view


def _read(fmt, path, tmp_path):
    return interop.read(fmt, path, tmp_path / "ws", tmp_path / "home")


# ----------------------------------------------------------------------------- agents-md


def test_agents_md_reads_every_instructions_file_of_a_workspace(fixture_copy, tmp_path):
    ws = fixture_copy("agents")
    result = interop.read("agents-md", None, ws, tmp_path)
    assert result.problems == []
    assert [(m.section, m.text, m.extra["file"], m.layer) for m in result.memories] == [
        ("Setup commands", "Install deps: `pnpm install`", "AGENTS.md", "project"),
        ("Setup commands", "Start dev server: `pnpm dev`", "AGENTS.md", "project"),
        ("Code style", "TypeScript strict mode", "AGENTS.md", "project"),
        ("Code style", "Single quotes, no semicolons", "AGENTS.md", "project"),
        ("Commands", "`make test` runs the whole suite", "CLAUDE.md", "project"),
        ("", "Prefer small pull requests with one concern each.", "GEMINI.md", "project"),
        ("", "We use Go 1.22 and PostgreSQL. Write table-driven tests.", ".github/copilot-instructions.md", "project"),
        ("", "You are an expert in Go and React.", ".cursorrules", "project"),
        ("", "Return errors, never panic in handlers", ".cursorrules", "project"),
    ]
    # what `claude /init` opens CLAUDE.md with is not knowledge: left out, and said so
    assert [(m.section, m.extra["file"]) for m in result.boilerplate] == [("CLAUDE.md", "CLAUDE.md")]


def test_agents_md_given_one_file(fixture_copy, tmp_path):
    result = _read("agents-md", fixture_copy("agents") / "GEMINI.md", tmp_path)
    assert [(m.text, m.section) for m in result.memories] == [("Prefer small pull requests with one concern each.", "")]


def test_agents_md_folder_without_any_file_is_a_problem(tmp_path):
    (tmp_path / "empty").mkdir()
    result = _read("agents-md", tmp_path / "empty", tmp_path)
    assert result.memories == [] and "holds none of" in result.problems[0].reason


AWKWARD = [
    Memory(text="Unsectioned first"),
    Memory(text="Two paragraphs\n\nsecond one", section="Notes"),
    Memory(text="Code:\n\n```sh\nmake test\n```", section="Commands"),
    Memory(text="1. ordered inside", section="Notes"),
    Memory(text="Run:\n\n    make test\nafter", section="Commands"),
    Memory(text="数据库连接池配置过小", section="数据库"),
]


def test_agents_md_round_trip(tmp_path):
    written = interop.write("agents-md", AWKWARD, tmp_path / "out")
    assert written == [tmp_path / "out" / "AGENTS.md"]
    assert written[0].read_text(encoding="utf-8").startswith("- Unsectioned first\n\n## Notes\n\n- Two paragraphs\n\n  second one\n")
    back = _read("agents-md", written[0], tmp_path)
    assert back.problems == []
    expected = sorted(((m.section, m.text) for m in AWKWARD), key=lambda p: [m.section for m in AWKWARD].index(p[0]))
    assert [(m.section, m.text) for m in back.memories] == expected


def test_agents_md_round_trip_of_one_line_memories(tmp_path):
    memories = [m for m in AWKWARD if "\n" not in m.text]
    [path] = interop.write("agents-md", memories, tmp_path / "AGENTS.md")
    assert path.read_text(encoding="utf-8") == (
        "- Unsectioned first\n\n## Notes\n\n- 1. ordered inside\n\n## 数据库\n\n- 数据库连接池配置过小\n")
    back = _read("agents-md", path, tmp_path)
    assert [(m.section, m.text) for m in back.memories] == [(m.section, m.text) for m in memories]


# ----------------------------------------------------------------------------- cursor


def test_cursor_reads_rules_as_cursor_writes_them(fixture_copy, tmp_path):
    ws = fixture_copy("cursor")
    result = interop.read("cursor", None, ws, tmp_path)
    assert result.problems == []
    assert [view(m) for m in result.memories] == [
        ("project", "", (), "", "always", "", "Run `pnpm lint` before proposing a commit.",
         {"file": "always.mdc", "globs": "", "alwaysApply": True}),
        ("project", "", (), "", "json-schemas", "JSON schema files",
         "Keep `$schema` as the first key of every schema file.",
         {"file": "json-schemas.mdc", "globs": "*.json", "alwaysApply": False}),
        ("project", "", (), "TypeScript", "typescript", "TypeScript conventions for the web app",
         "# TypeScript\n\n- Use `const` over `let`\n- No `any` in exported signatures",
         {"file": "typescript.mdc", "globs": "src/**/*.ts, src/**/*.tsx", "alwaysApply": False}),
        ("project", "", (), "", "db", "Database: always go through the pool",
         "Open connections only through `db.Pool()`; never call `sql.Open` in handlers.",
         {"file": "backend/db.mdc", "globs": "server/**/*.go", "alwaysApply": False}),
    ]


@pytest.mark.parametrize("line, globs", [
    ("globs: '*.ts'", "*.ts"),
    ('globs: ["src/**/*.ts", "*.md"]', "src/**/*.ts, *.md"),
    ("globs:\n  - a/**\n  - b/*.py", "a/**, b/*.py"),
])
def test_cursor_globs_spellings(line, globs):
    meta = cursor.rule_frontmatter(f"description: x\n{line}\nalwaysApply: true\n")
    assert cursor._globs_text(meta["globs"]) == globs


@pytest.mark.parametrize("block", [
    "description: [unclosed\nalwaysApply: false\n",
    "description: x\nname: a: b\n",
    "description: !!python/object/apply:os.system ['true']\n",
])
def test_cursor_yaml_that_is_not_plain_cursor_keys_is_refused(block):
    with pytest.raises(interop._files.SourceError, match="invalid YAML frontmatter"):
        cursor.rule_frontmatter(block)


def test_cursor_alias_elsewhere_is_still_refused():
    with pytest.raises(interop._files.SourceError, match="anchors or aliases"):
        cursor.rule_frontmatter("description: &a x\nother: *a\nglobs: *.ts\n")


def test_cursor_round_trip(tmp_path):
    memories = [
        Memory(text="# TS\n\n- strict mode", description="TypeScript: strict", name="ts",
               extra={"globs": "src/**/*.ts, *.tsx", "alwaysApply": False}),
        Memory(text="Always use pnpm.", description="包管理器"),
        Memory(text="Quote \"this\"", description="#not a comment"),
    ]
    written = interop.write("cursor", memories, tmp_path / "rules")
    assert [p.name for p in written] == ["ts.mdc", "always-use-pnpm.mdc", "quote-this.mdc"]
    assert written[0].read_text(encoding="utf-8") == (
        '---\ndescription: "TypeScript: strict"\nglobs: src/**/*.ts, *.tsx\nalwaysApply: false\n---\n\n# TS\n\n- strict mode\n')
    assert written[1].read_text(encoding="utf-8") == (
        "---\ndescription: 包管理器\nglobs:\nalwaysApply: true\n---\n\nAlways use pnpm.\n")
    back = _read("cursor", tmp_path / "rules", tmp_path)
    assert back.problems == []
    got = {m.text: m for m in back.memories}
    for m in memories:
        assert got[m.text].description == m.description
    assert got["# TS\n\n- strict mode"].extra == {"file": "ts.mdc", "globs": "src/**/*.ts, *.tsx", "alwaysApply": False}
    assert got["Always use pnpm."].extra["alwaysApply"] is True


# ----------------------------------------------------------------------------- cline


def test_cline_reads_the_memory_bank(fixture_copy, tmp_path):
    ws = fixture_copy("cline")
    result = interop.read("cline", None, ws, tmp_path)
    assert result.problems == []
    got = [(m.tags, m.category, m.section, m.text) for m in result.memories]
    assert got[:4] == [
        (("activeContext",), "knowledge", "Current Focus", "Barcode scanning component (ZXing in a web worker)"),
        (("activeContext",), "knowledge", "Recent Changes", "API integration for stock moves finished last session"),
        (("activeContext",), "knowledge", "Next Steps", "Offline queue for scans"),
        (("activeContext",), "knowledge", "Next Steps", "Conflict handling when two devices edit one item"),
    ]
    assert (("apiNotes",), "knowledge", "API Notes",
            ("# API Notes\n\nStock moves are idempotent: the client sends a UUID per move and the server ignores "
             "repeats.")) in got
    assert (("systemPatterns",), "pattern", "Architecture", "Redux with a normalised store") in got
    assert (("projectbrief",), "knowledge", "Project Brief",
            "Inventory web app for three warehouses with barcode scanning.") in got
    assert len(got) == 17 and {m.layer for m in result.memories} == {"project"}


def test_cline_round_trip(fixture_copy, tmp_path):
    first = interop.read("cline", fixture_copy("cline") / "memory-bank", tmp_path, tmp_path)
    extra = [Memory(text="Prefer composition over inheritance", category="pattern", layer="user"),
             Memory(text="Ship on Fridays? never", category="preference", layer="user")]
    written = interop.write("cline", first.memories + extra, tmp_path / "bank")
    # every entry goes back to the bank file it came from, apiNotes.md included
    assert sorted(p.name for p in written) == sorted({m.extra["file"] for m in first.memories})
    back = interop.read("cline", tmp_path / "bank", tmp_path, tmp_path)
    assert back.problems == []
    got = {(m.tags, m.section, m.text) for m in back.memories}
    assert {(m.tags, m.section, m.text) for m in first.memories} <= got
    assert (("systemPatterns",), "", "Prefer composition over inheritance") in got
    assert (("activeContext",), "", "Ship on Fridays? never") in got
    assert len(back.memories) == len(first.memories) + 2


def test_cline_core_file_without_memories_is_not_written(tmp_path):
    interop.write("cline", [Memory(text="Only one", tags=("progress",))], tmp_path / "bank")
    assert sorted(p.name for p in (tmp_path / "bank").iterdir()) == ["progress.md"]
    back = interop.read("cline", tmp_path / "bank", tmp_path, tmp_path)
    assert [(m.text, m.tags) for m in back.memories] == [("Only one", ("progress",))]


# ----------------------------------------------------------------------------- jsonl


def test_jsonl_reads_the_old_conversation_export(fixture_copy, tmp_path):
    path = fixture_copy("jsonl") / "conversations-export.jsonl"
    result = _read("jsonl", path, tmp_path)
    assert result.problems == []
    first, second = result.memories
    assert (first.id, first.layer, first.category, first.tags, first.text, first.source, first.updated_at,
            first.conversation_id, first.conversation_title) == (
        "m-1", "conversation", "preference", ("postgres", "pool"), "连接池最大 20，超时 5 秒", "auto", 1767229200.0,
        "c-1", "数据库调优")
    assert first.extra == {"created_at": 1767225600000, "conversation": {
        "id": "c-1", "title": "数据库调优", "workspace_path": "/home/dev/shop", "created_at": 1767225000000,
        "updated_at": 1767229200000}}
    assert (second.conversation_id, second.tags, second.conversation_title) == (None, (), "")


def test_jsonl_round_trip_is_lossless(tmp_path):
    memories = [
        Memory(text="Use vitest, not jest\nsecond line", layer="user", category="preference", tags=("testing", "ts"),
               importance="high", status="active", section="Testing", name="Testing", description="one line",
               updated_at=1767225600.123456, origin="/x/preferences.md", extra={"type": "feedback"},
               id="abc123", source="manual", path="preferences.md"),
        Memory(text="数据库连接池配置过小", layer="conversation", conversation_id="c-9", conversation_title="调优",
               updated_at=None, id="m-9", source="auto", origin="conversation:c-9/m-9"),
        Memory(text="archived one", layer="project", status="archived", importance="low", path="sub/dir/x.md",
               origin="/ws/.muse/memory/sub/dir/x.md"),
    ]
    [path] = interop.write("jsonl", memories, tmp_path / "out")
    raw = path.read_text(encoding="utf-8")
    assert "数据库" in raw and "\\u" not in raw
    record = json.loads(raw.splitlines()[0])
    assert record["updated_at"] == "2026-01-01T00:00:00.123456+00:00"
    assert set(record) >= {"id", "layer", "category", "tags", "source", "importance", "status", "section", "name",
                           "description", "text", "updated_at", "path", "conversation_id", "conversation_title"}
    back = _read("jsonl", path, tmp_path)
    assert back.problems == []
    assert back.memories == memories


def test_jsonl_bad_lines_are_problems_and_the_rest_imports(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join([
        json.dumps({"text": "good", "layer": "user"}),
        "{not json",
        json.dumps(["a list"]),
        json.dumps({"text": "", "layer": "user"}),
        json.dumps({"text": "x", "layer": "team"}),
        json.dumps({"text": "x", "tags": {"a": 1}}),
        json.dumps({"text": "x", "updated_at": "yesterday"}),
        json.dumps({"memory": {"content": "no id"}}),
        "[" * 100_000,
        json.dumps({"text": "also good", "tags": "a, b"}),
    ]) + "\n", encoding="utf-8")
    result = _read("jsonl", path, tmp_path)
    assert [(m.text, m.tags) for m in result.memories] == [("good", ()), ("also good", ("a", "b"))]
    assert [p.path for p in result.problems] == [f"{path}:{n}" for n in (2, 3, 4, 5, 6, 7, 8, 9)]
    assert all(p.reason.startswith("not a memory: ") for p in result.problems)


def test_default_sources(tmp_path):
    ws, home = tmp_path / "ws", tmp_path / "home"
    assert interop.default_source("agents-md", ws, home) == ws
    assert interop.default_source("cursor", ws, home) == ws / ".cursor" / "rules"
    assert interop.default_source("cline", ws, home) == ws / "memory-bank"
    assert interop.default_source("jsonl", ws, home) == ws / "memories.jsonl"
    with pytest.raises(interop.InteropError, match="unknown format 'obsidian'"):
        interop.default_source("obsidian", ws, home)


@pytest.mark.parametrize("fmt", interop.FORMATS)
def test_missing_source_is_a_problem_not_an_exception(fmt, tmp_path):
    result = _read(fmt, tmp_path / "nope", tmp_path)
    assert result.memories == []
    assert [(p.path, p.reason) for p in result.problems] == [(str(tmp_path / "nope"), "does not exist")]


@pytest.mark.parametrize("fmt", interop.FORMATS)
def test_every_writer_refuses_to_overwrite(fmt, tmp_path):
    memories = [Memory(text="one", tags=("progress",))]
    first = interop.write(fmt, memories, tmp_path / "out")
    before = {p: p.read_bytes() for p in first}
    with pytest.raises(interop.WriteRefused, match="refusing to overwrite"):
        interop.write(fmt, [Memory(text="one", tags=("progress",), description="changed")], tmp_path / "out")
    assert {p: p.read_bytes() for p in first} == before
    assert not [p for p in (tmp_path / "out").rglob("*.tmp")]


@pytest.mark.parametrize("fmt", ["agents-md", "cline"])
def test_whitespace_only_lines_inside_a_fence_keep_their_spaces(fmt, tmp_path):
    """Seen in real sources: `a();\\n  \\nb();` inside a fenced block came back as `a();\\n\\nb();`."""
    text = "Run:\n\n```js\na();\n  \nb();\n    \n```"
    memories = [Memory(text=text, tags=("systemPatterns",)), Memory(text="Plain one", tags=("systemPatterns",))]
    written = interop.write(fmt, memories, tmp_path / "out")
    back = interop.read(fmt, written[0], tmp_path, tmp_path)
    assert [m.text for m in back.memories] == [text, "Plain one"]


def test_index_hooks_keep_their_bold():
    from memtui.core.interop._files import first_line

    assert first_line("**Module**: billing owns invoices") == "**Module**: billing owns invoices"
    assert first_line("- **Module**: x\n- y") == "**Module**: x"
    assert first_line("## Heading\n\ntext") == "Heading"
    assert first_line("1. first step") == "first step"
