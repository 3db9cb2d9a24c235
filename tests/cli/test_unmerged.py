"""SPEC §8 "Unmerged files": a memory file left half-merged by a real `git merge` (no memtui
driver installed). The entries outside the conflict region inject as usual; the region's lines
are never entries (list, preview, the hook); the doctor reports `conflict` with the file and its
lines; memtui changes no byte of the file until the merge is finished."""

from __future__ import annotations

import json

import pytest

from memtui.core import markdown as md

from ..helpers import enable
from .run import entries, memtui
from .test_git_merge import FM, Repo, _init, git
from .test_hook import HOOK, hook_input, run_hook

BASE = FM + "## Team\n\n- Alice owns billing\n- Search has no owner yet\n- Dan owns infra\n\nDeploys go out on Tuesdays.\n"
OURS = BASE.replace("Search has no owner yet", "Bob owns search")
THEIRS = BASE.replace("Search has no owner yet", "Carol owns search")
QUERY = "who owns billing search infra deploys"


@pytest.fixture
def half_merged(tmp_path) -> Repo:
    repo = _init(tmp_path)
    merge = repo.diverge({"context.md": BASE}, {"context.md": OURS}, {"context.md": THEIRS})
    assert merge.returncode == 1 and "CONFLICT" in merge.stdout, merge.stdout
    data = repo.read().decode()
    assert "<<<<<<< HEAD\n- Bob owns search\n=======\n- Carol owns search\n>>>>>>> theirs\n" in data
    enable(repo.paths)
    return repo


def marker_free(text: str) -> bool:
    return not any(mark in text for mark in ("<<<<<<<", "=======", ">>>>>>>", "Bob owns", "Carol owns"))


def region(repo: Repo) -> tuple[int, int]:
    lines = repo.read().decode().splitlines()
    return lines.index("<<<<<<< HEAD") + 1, next(i for i, line in enumerate(lines) if line.startswith(">>>>>>>")) + 1


def test_list_preview_and_hook_leave_the_marked_region_out(half_merged):
    repo = half_merged
    listed = entries(repo.paths, "--layer", "project")
    assert [e["text"] for e in listed] == ["Alice owns billing", "Dan owns infra", "Deploys go out on Tuesdays."]
    assert all(e["section"] == "Team" for e in listed)

    shown = json.loads(memtui(repo.paths, "preview", QUERY, "--json").stdout)
    assert "- Alice owns billing" in shown["text"] and "- Dan owns infra" in shown["text"]
    assert marker_free(shown["text"]) and all(marker_free(c["line"]) for c in shown["candidates"])

    done = run_hook(repo.paths.home, hook_input(repo.root, QUERY), cmd=HOOK)
    out = done.stdout.decode()
    assert done.returncode == 0 and "- Alice owns billing" in out and "- Deploys go out on Tuesdays." in out
    assert marker_free(out)


def test_the_doctor_reports_the_conflict_with_the_file_and_its_lines(half_merged):
    first, last = region(half_merged)
    result = memtui(half_merged.paths, "doctor", "--json")
    assert result.returncode == 1
    found = [f for f in json.loads(result.stdout)["findings"] if f["kind"] == "conflict"]
    assert [(f["source"], f["layer"]) for f in found] == [(f"context.md:{first}-{last}", "project")]
    assert f"lines {first}-{last}" in found[0]["reason"]
    assert json.loads(result.stdout)["counts"]["conflict"] == 1


def test_memtui_changes_no_byte_of_a_half_merged_file(half_merged):
    repo = half_merged
    before = repo.read()
    alice = next(e["id"] for e in entries(repo.paths) if e["text"] == "Alice owns billing")
    for args in (("edit", alice, "Alice owns billing and invoices"), ("delete", alice, "--yes"),
                 ("remember", "--project", "Eve owns the docs")):
        result = memtui(repo.paths, *args)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert "half-merged" in result.stderr and f"lines {region(repo)[0]}-{region(repo)[1]}" in result.stderr
        assert repo.read() == before


def test_finishing_the_merge_brings_the_entries_back(half_merged):
    repo = half_merged
    git(repo.root, "checkout", "--theirs", ".muse/memory/context.md")
    texts = [e["text"] for e in entries(repo.paths, "--layer", "project")]
    assert texts == ["Alice owns billing", "Carol owns search", "Dan owns infra", "Deploys go out on Tuesdays."]
    result = memtui(repo.paths, "doctor", "--json")
    assert not [f for f in json.loads(result.stdout)["findings"] if f["kind"] == "conflict"]


@pytest.mark.parametrize(("text", "expected"), [
    # `=======` would make "Alice owns billing" a heading (no entry), the markers a paragraph
    ("Alice owns billing\n<<<<<<< HEAD\nBob owns search\n=======\nCarol owns search\n>>>>>>> theirs\n\n- Dan\n",
     ["Alice owns billing", "Dan"]),
    # the line after a region is no lazy continuation of the item before it; an item spanning it is none
    ("- a\n<<<<<<< HEAD\n- b\n=======\n- c\n>>>>>>> theirs\n  more\n- d\n", ["d"]),
    ("- a\n<<<<<<< ours\n- b\n=======\n- c\n>>>>>>> theirs\n- d\n\ntext\n", ["a", "d", "text"]),
    # an opening with no closing line: the rest of the file is the region
    ("- a\n- b\n<<<<<<< HEAD\n- c\n", ["a", "b"]),
    # a file read as one entry (no list) gives none while it is half-merged
    ("---\nname: Team\n---\n\nAlice\n<<<<<<< HEAD\nBob\n=======\nCarol\n>>>>>>> theirs\n", []),
    # no conflict: `=======` is a heading underline, `>>>>>>>` a quote, both Markdown as before
    ("Title\n=======\n\n- a\n\n>>>>>>> quoted\n", ["a", ">>>>>>> quoted"]),
])
def test_which_lines_are_entries_in_a_half_merged_file(text, expected):
    parsed = md.parse_text(text)
    assert [e.text for e in parsed.entries] == expected
    assert bool(parsed.conflicts) == ("<<<<<<<" in text)


def test_markers_in_the_frontmatter_make_the_file_invalid_with_that_reason(tmp_path):
    repo = _init(tmp_path)
    base = "---\ntype: knowledge\ntags: [team]\n---\n\n- Alice owns billing\n"
    merge = repo.diverge({"context.md": base}, {"context.md": base.replace("[team]", "[team, ops]")},
                         {"context.md": base.replace("[team]", "[team, dev]")})
    assert merge.returncode == 1
    enable(repo.paths)
    result = memtui(repo.paths, "doctor", "--json")
    invalid = [f for f in json.loads(result.stdout)["findings"] if f["kind"] == "invalid"]
    assert len(invalid) == 1 and "git conflict markers in the frontmatter" in invalid[0]["reason"]
    assert entries(repo.paths, "--layer", "project") == []


def test_a_file_without_markers_splits_as_before():
    """A file without markers splits exactly as before (SPEC §5's worked example file)."""
    text = "- 数据库连接池配置过小，高并发时超时\n- Use PostgreSQL + pgbouncer\n\nSome paragraph here.\n"
    parsed = md.parse_text(text)
    assert parsed.conflicts == ()
    assert [(e.text, e.line_start, e.line_end) for e in parsed.entries] == [
        ("数据库连接池配置过小，高并发时超时", 0, 1), ("Use PostgreSQL + pgbouncer", 1, 2), ("Some paragraph here.", 3, 4)]
