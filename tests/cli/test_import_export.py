"""`memtui import` / `memtui export` (SPEC §9) through the real CLI, on fixtures written the
way each tool writes its files (tests/core/interop/fixtures)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from memtui.core.paths import Paths

FIXTURES = Path(__file__).resolve().parents[1] / "core" / "interop" / "fixtures"


def cli(paths: Paths, *args: str) -> subprocess.CompletedProcess:
    """memtui in a process of its own (a forked entry point: tests/cli/run.py)."""
    from tests.cli.run import memtui

    return memtui(paths, *args)


def listed(paths: Paths) -> list[dict]:
    r = cli(paths, "list", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["entries"]


def fresh(tmp_path: Path, name: str) -> Paths:
    home, ws = tmp_path / name / "home", tmp_path / name / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    return Paths(home.resolve(), ws.resolve())


def memory_bytes(paths: Paths) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for root in (paths.user_root, paths.project_root) for p in root.rglob("*.md")}


def test_claude_code_import_is_complete_idempotent_and_round_trips(paths, tmp_path):
    source = tmp_path / "claude" / "memory"
    shutil.copytree(FIXTURES / "claude-code" / "memory", source)
    r = cli(paths, "import", "claude-code", str(source), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["added"] >= 5 and report["skipped_invalid"] == 0
    entries = listed(paths)
    named = {e["name"]: e for e in entries if e.get("name")}
    # every topic file is one memory in its layer, with its name and description
    topic_files = [p for p in source.glob("*.md") if p.name != "MEMORY.md"]
    assert len(named) == len(topic_files)
    for e in named.values():
        assert e["description"] and e["layer"] in ("user", "project")
    feedback = next(e for e in named.values() if "**Why:**" in e["text"])
    assert "**How to apply:**" in feedback["text"] and feedback["layer"] == "user"
    # each imported file says where it came from
    for data in memory_bytes(paths).values():
        assert b"source: import" in data and b"origin: " in data

    again = json.loads(cli(paths, "import", "claude-code", str(source), "--json").stdout)
    assert again["added"] == 0 and again["skipped_duplicate"] == report["added"]

    out = tmp_path / "exported"
    r = cli(paths, "export", "claude-code", str(out))
    assert r.returncode == 0, r.stderr
    index = (out / "MEMORY.md").read_text()
    assert len(index.splitlines()) <= 200 and len(index.encode()) <= 25_000
    assert re.search(r"^- \[.+\]\(.+\.md\)", index, re.M)

    empty = fresh(tmp_path, "empty")
    r = cli(empty, "import", "claude-code", str(out), "--json")
    assert r.returncode == 0, r.stderr
    back = {(e["layer"], e["text"]) for e in listed(empty)}
    assert back == {(e["layer"], e["text"]) for e in entries}


def test_dry_run_writes_nothing(paths, tmp_path):
    before = memory_bytes(paths)
    r = cli(paths, "import", "cline", str(FIXTURES / "cline" / "memory-bank"), "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["dry_run"] and report["added"] > 0 and report["files"]
    assert memory_bytes(paths) == before
    assert "No changes logged" in cli(paths, "undo", "--list").stdout


@pytest.mark.parametrize(("fmt", "source"), [
    ("agents-md", "agents/AGENTS.md"),
    ("agents-md", "agents/CLAUDE.md"),
    ("agents-md", "agents/.github/copilot-instructions.md"),
    ("cursor", "cursor/.cursor/rules"),
    ("cline", "cline/memory-bank"),
])
def test_other_formats_import_realistic_files_once(paths, fmt, source):
    r = cli(paths, "import", fmt, str(FIXTURES / source), "--project", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["added"] > 0 and report["skipped_invalid"] == 0, report
    entries = listed(paths)
    assert len(entries) == report["added"] and {e["layer"] for e in entries} == {"project"}
    again = json.loads(cli(paths, "import", fmt, str(FIXTURES / source), "--project", "--json").stdout)
    assert again["added"] == 0


def test_jsonl_export_then_import_into_an_empty_home_gives_the_same_entries(paths, tmp_path):
    src = FIXTURES / "cline" / "memory-bank"
    assert cli(paths, "import", "cline", str(src)).returncode == 0
    assert cli(paths, "remember", "--project", "ignored while memory is off").returncode == 1
    dump = tmp_path / "all.jsonl"
    assert cli(paths, "export", "jsonl", str(dump)).returncode == 0
    empty = fresh(tmp_path, "empty")
    r = cli(empty, "import", "jsonl", str(dump), "--json")
    assert r.returncode == 0, r.stderr

    def key(e: dict) -> tuple:
        return (e["layer"], e["text"], e["section"], tuple(e["tags"]), e["importance"], e["status"], e.get("name"))

    assert sorted(map(key, listed(empty))) == sorted(map(key, listed(paths)))


def test_export_never_replaces_files(paths, tmp_path):
    assert cli(paths, "import", "cline", str(FIXTURES / "cline" / "memory-bank"), "--project").returncode == 0
    out = tmp_path / "bank"
    assert cli(paths, "export", "cline", str(out)).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*")  if p.is_file()}
    r = cli(paths, "export", "cline", str(out))
    assert r.returncode == 1 and "exist" in r.stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_an_import_is_one_undoable_change(paths):
    before = memory_bytes(paths)
    assert cli(paths, "import", "agents-md", str(FIXTURES / "agents" / "AGENTS.md")).returncode == 0
    assert memory_bytes(paths) != before
    r = cli(paths, "undo")
    assert r.returncode == 0 and "import" in r.stdout, r
    assert memory_bytes(paths) == before


def test_format_fields_survive_import_then_export(paths, tmp_path):
    """Cursor's globs/alwaysApply and Claude Code's type are kept through memtui and back."""
    rules = FIXTURES / "cursor" / ".cursor" / "rules"
    assert cli(paths, "import", "cursor", str(rules)).returncode == 0
    out = tmp_path / "cursor-out"
    assert cli(paths, "export", "cursor", str(out)).returncode == 0
    exported = {p.read_text() for p in out.rglob("*.mdc")}
    assert any("globs: src/**/*.ts, src/**/*.tsx" in t and "alwaysApply: false" in t for t in exported), exported

    source = tmp_path / "claude" / "memory"
    shutil.copytree(FIXTURES / "claude-code" / "memory", source)
    types_in = {m.group(1) for p in source.glob("*.md") for m in re.finditer(r"^\s*type: (\w+)", p.read_text(), re.M)}
    assert cli(paths, "import", "claude-code", str(source)).returncode == 0
    cc_out = tmp_path / "cc-out"
    assert cli(paths, "export", "claude-code", str(cc_out)).returncode == 0
    types_out = {m.group(1) for p in cc_out.glob("*.md") for m in re.finditer(r"^\s*type: (\w+)", p.read_text(), re.M)}
    assert types_in <= types_out
