"""Claude Code auto memory: folder naming, reading the fixture tree exactly, export layout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core import interop
from memtui.core.interop import Memory, claude_code
from memtui.core.interop.claude_code import (
    MAX_INDEX_BYTES,
    MAX_INDEX_LINES,
    WARNING_PREFIX,
)

from .helpers import view

WHY_DB = ("Integration tests must hit a real database, not mocks.\n\n"
          "**Why:** last quarter the mocked tests passed while a broken migration shipped.\n"
          "**How to apply:** under `tests/integration/`, start the Postgres fixture instead of patching the "
          "repository layer.")
FLAKY = ("# CI\n\nDo not add `retry: 2` to CI jobs; fix the flaky test instead. "
         "See [[feedback_real_db|real databases]].\n\n"
         "**Why:** retries hid a race in the queue worker for a month.\n"
         "**How to apply:** when a job is flaky, open an issue and quarantine the test.")
FREEZE = ("Non-critical merges are frozen from 2026-03-05 while mobile cuts the release branch; release managers "
          "watch [[reference-grafana]].\n\n"
          "**Why:** the mobile team needs a stable main for the cut.\n"
          "**How to apply:** flag any non-critical PR scheduled after that date.")

INDEX_LINES = (Path(__file__).parent / "fixtures" / "claude-code" / "memory" / "MEMORY.md").read_text().splitlines()
EXPECTED = [
    ("user", "preference", (), "", "Prefers real databases in tests",
     "Integration tests must hit a real Postgres, never mocks", WHY_DB,
     {"file": "feedback_real_db.md", "type": "feedback", "index_title": "Prefers real databases in tests",
      "index_hook": "integration tests hit Postgres, never mocks", "index_line": INDEX_LINES[0]}),
    ("user", "preference", (), "CI", "flaky-ci", "Retried CI jobs hide real failures", FLAKY,
     {"file": "flaky_ci.md", "type": "feedback", "links": ["feedback_real_db"], "index_title": "Flaky CI",
      "index_hook": "retried jobs hide real failures", "index_line": INDEX_LINES[4]}),
    ("project", "knowledge", (), "", "project-release-freeze",
     "Merge freeze for non-critical PRs from 2026-03-05 (mobile release cut)", FREEZE,
     {"file": "project-release-freeze.md", "type": "project", "links": ["reference-grafana"],
      "index_title": "project-release-freeze", "index_hook": "merge freeze from 2026-03-05 for the mobile cut",
      "index_line": INDEX_LINES[2]}),
    ("project", "knowledge", (), "", "reference-grafana", "Grafana board the on-call engineer watches for API latency",
     "grafana.internal/d/api-latency is the on-call latency dashboard; check it when touching request handling.",
     {"file": "reference-grafana.md", "type": "reference", "index_title": "reference-grafana",
      "index_hook": "on-call latency board", "index_line": INDEX_LINES[3]}),
    ("user", "preference", (), "", "User role", "Senior backend engineer, new to the React side of this repository",
     ("The user is a senior backend engineer (Go, Postgres) and new to React; explain frontend changes in backend "
      "terms."),
     {"file": "user_role.md", "type": "user", "index_title": "User role",
      "index_hook": "senior backend engineer, new to React", "index_line": INDEX_LINES[1]}),
    ("project", "", (), "Build notes", "", "", "`pnpm test --filter api` runs only the API tests", {"file": "MEMORY.md"}),
]


def test_reads_the_fixture_folder_exactly(fixture_copy):
    folder = fixture_copy("claude-code") / "memory"
    os.utime(folder / "user_role.md", (1_767_225_600, 1_767_225_600))
    result = interop.read("claude-code", folder, Path("/nonexistent"), Path("/nonexistent"))
    assert result.problems == []
    assert [view(m) for m in result.memories] == EXPECTED
    role = next(m for m in result.memories if m.name == "User role")
    assert role.updated_at == 1_767_225_600  # no date in a topic file: its mtime
    assert role.origin == str(folder / "user_role.md")


def test_default_source_is_the_sanitised_git_root(tmp_path):
    repo = tmp_path / "my_repo.v2"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    home = tmp_path / "home"
    expected = home / ".claude" / "projects" / str(repo).replace("/", "-").replace("_", "-").replace(".", "-") / "memory"
    assert interop.default_source("claude-code", repo / "src", home) == expected


def test_a_worktree_shares_the_main_repository_folder(tmp_path):
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    (main / ".git" / "worktrees" / "feature" / "commondir").write_text("../..\n")
    worktree = tmp_path / "wt-feature"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'feature'}\n")
    home = tmp_path / "home"
    assert (interop.default_source("claude-code", worktree, home)
            == interop.default_source("claude-code", main, home))
    assert claude_code.git_root(worktree) == main


def test_sanitise_matches_claude_codes_rule():
    assert claude_code.sanitise("/Users/dev/my_project") == "-Users-dev-my-project"
    assert claude_code.sanitise("/home/é/😀") == "-home---" + "--"  # astral: two UTF-16 units, two dashes
    # The suffix is base 36 of the absolute 32-bit string hash: "hello".hashCode() is 99162322.
    assert claude_code._java_hash("hello") == 99162322
    assert claude_code._java_hash("polygenelubricants") == -2147483648
    long_path = "/" + "a" * 250
    name = claude_code.sanitise(long_path)
    assert name.startswith("-" + "a" * 199 + "-")
    assert name == "-" + "a" * 199 + "-" + claude_code._base36(abs(claude_code._java_hash(long_path)))


def test_long_folder_name_is_found_by_its_prefix(tmp_path):
    deep = tmp_path / ("very-long-directory-name-" * 10) / "project"
    (deep / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    prefix = claude_code._dashes(str(deep))[:200]
    assert len(claude_code._dashes(str(deep))) > 200
    # A Claude Code version with another hash made this folder; it is found by its prefix.
    existing = projects / f"{prefix}-zz9qk1" / "memory"
    existing.mkdir(parents=True)
    (existing / "note.md").write_text("---\nname: n\ndescription: d\ntype: project\n---\n\nUse make.\n")
    assert interop.default_source("claude-code", deep, home) == existing
    result = interop.read("claude-code", None, deep, home)
    assert [m.text for m in result.memories] == ["Use make."]
    # Without one, the computed name.
    (existing / "note.md").unlink()
    existing.rmdir()
    existing.parent.rmdir()
    computed = interop.default_source("claude-code", deep, home)
    assert computed.parent.name == claude_code.sanitise(str(deep)) and len(computed.parent.name) > 200


def test_truncated_index_with_warning_line(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    lines = []
    for i in range(230):
        (folder / f"note-{i:03}.md").write_text(
            f"---\nname: note-{i:03}\ndescription: note {i}\nmetadata:\n  type: project\n---\n\nFact number {i}.\n")
        lines.append(f"- [note-{i:03}](note-{i:03}.md) — note {i}")
    text = "\n".join(lines[:200]) + (
        f"\n\n{WARNING_PREFIX} 230 lines (limit: 200). Only part of it was loaded. Keep index entries to one line "
        "under ~200 chars; move detail into topic files.\n")
    (folder / "MEMORY.md").write_text(text)
    result = interop.read("claude-code", folder, tmp_path, tmp_path)
    assert result.problems == []
    assert len(result.memories) == 230  # topic files left out of the index still import
    assert not any("WARNING" in m.text for m in result.memories)
    assert result.memories[5].extra["index_title"] == "note-005"
    assert "index_title" not in result.memories[220].extra


def test_index_link_to_a_missing_file_is_a_problem(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("- [Gone](gone.md) — deleted\n- [Up](../secret.md) — escape\n")
    result = interop.read("claude-code", folder, tmp_path, tmp_path)
    assert result.memories == []
    assert [(p.path, p.reason) for p in result.problems] == [
        (str(folder / "MEMORY.md"), "line 1 links to gone.md, which is not in the folder"),
        (str(folder / "MEMORY.md"), "line 2 links outside the memory folder; ignored"),
    ]


def _memories() -> list[Memory]:
    return [
        Memory(text=WHY_DB, layer="user", name="Prefers real databases in tests", description="Real DB in tests",
               extra={"type": "feedback"}),
        Memory(text="Deploys go out on Tuesdays.", layer="project", category="decision"),
        Memory(text="Tabs, not spaces.\n\n- even in YAML? no", layer="user", category="preference"),
        Memory(text="Same name twice", layer="project", name="Tabs, not spaces"),
    ]


def test_write_then_read_round_trip(tmp_path):
    dest = tmp_path / "export" / "memory"
    written = interop.write("claude-code", _memories(), dest)
    assert [p.name for p in written] == ["prefers-real-databases-in-tests.md", "deploys-go-out-on-tuesdays.md",
                                         "tabs-not-spaces.md", "tabs-not-spaces-2.md", "MEMORY.md"]
    assert (dest / "prefers-real-databases-in-tests.md").read_text(encoding="utf-8") == (
        "---\nname: Prefers real databases in tests\ndescription: Real DB in tests\ntype: feedback\n---\n\n"
        + WHY_DB + "\n")
    assert (dest / "MEMORY.md").read_text(encoding="utf-8") == (
        "- [Prefers real databases in tests](prefers-real-databases-in-tests.md) — Real DB in tests\n"
        "- [deploys-go-out-on-tuesdays](deploys-go-out-on-tuesdays.md) — Deploys go out on Tuesdays.\n"
        "- [tabs-not-spaces](tabs-not-spaces.md) — Tabs, not spaces.\n"
        "- [Tabs, not spaces](tabs-not-spaces-2.md) — Same name twice\n")
    back = interop.read("claude-code", dest, tmp_path, tmp_path)
    assert back.problems == []
    got = {m.text: m for m in back.memories}
    assert set(got) == {m.text for m in _memories()}
    assert [(got[m.text].layer, got[m.text].extra["type"]) for m in _memories()] == [
        ("user", "feedback"), ("project", "project"), ("user", "feedback"), ("project", "project")]
    assert got[WHY_DB].name == "Prefers real databases in tests"
    assert got[WHY_DB].description == "Real DB in tests"


def test_fixture_round_trips_through_export(fixture_copy, tmp_path):
    source = fixture_copy("claude-code") / "memory"
    first = interop.read("claude-code", source, tmp_path, tmp_path)
    dest = tmp_path / "again"
    interop.write("claude-code", first.memories, dest)
    second = interop.read("claude-code", dest, tmp_path, tmp_path)
    assert second.problems == []
    def key(m: Memory) -> tuple:
        return (m.layer, m.text, m.name, m.description, m.extra.get("type"))

    # every topic file comes back as itself, and the MEMORY.md note stays a note of MEMORY.md
    assert sorted(map(key, second.memories)) == sorted(map(key, first.memories))
    assert {p.name for p in dest.iterdir()} == {p.name for p in source.iterdir()}
    assert "## Build notes\n\n- `pnpm test --filter api` runs only the API tests\n" in (dest / "MEMORY.md").read_text()


def test_export_index_stays_within_both_limits(tmp_path):
    many = [Memory(text=f"Memory {i} " + "x" * 150, layer="project", description="d" * 180) for i in range(300)]
    written = interop.write("claude-code", many, tmp_path / "out")
    index = (tmp_path / "out" / "MEMORY.md").read_text(encoding="utf-8")
    lines = index.splitlines()
    assert len(lines) <= MAX_INDEX_LINES and len(index.encode("utf-8")) <= MAX_INDEX_BYTES
    assert lines[-1].startswith(WARNING_PREFIX + " truncated:") and " of 300 memories are listed" in lines[-1]
    assert len(written) == 301  # every topic file is still written
    back = interop.read("claude-code", tmp_path / "out", tmp_path, tmp_path)
    assert back.problems == [] and len(back.memories) == 300


def test_export_refuses_to_overwrite(tmp_path):
    dest = tmp_path / "memory"
    dest.mkdir()
    (dest / "MEMORY.md").write_text("mine\n")
    with pytest.raises(interop.WriteRefused, match="refusing to overwrite"):
        interop.write("claude-code", _memories(), dest)
    assert (dest / "MEMORY.md").read_text() == "mine\n"
    assert sorted(p.name for p in dest.iterdir()) == ["MEMORY.md"]  # nothing else was written


# ---------------------------------------------------------------- taking over an imported MEMORY.md

IMPORTED = ("- [Prefers real databases in tests](feedback_real_db.md) — integration tests hit Postgres\n"
            "- [User role](user_role.md) — senior backend engineer\n")
NOTES_LINE = "- [notes](notes.md) — Answer in British English\n"
WRITES = frozenset({"feedback_real_db.md", "user_role.md", "notes.md", "context.md"})


def adopt(current: str, data: str, rel: str = "MEMORY.md", writable: frozenset[str] = WRITES) -> str:
    return claude_code.adopt(rel, current.encode(), data.encode(), writable)


def test_an_imported_index_with_only_new_topic_lines_at_its_end_may_be_taken_over():
    assert adopt(IMPORTED, IMPORTED + NOTES_LINE) == "not written by memtui; only the line of 1 new topic added at its end"
    two = IMPORTED + NOTES_LINE + "- [context](context.md) — Deploys go through staging\n"
    assert "2 new topics" in adopt(IMPORTED, two)
    assert adopt(IMPORTED.rstrip("\n"), IMPORTED + NOTES_LINE)  # no newline at its end: memtui adds one
    crlf = IMPORTED.replace("\n", "\r\n")
    assert adopt(crlf, crlf + NOTES_LINE)
    assert adopt("", NOTES_LINE)  # an empty MEMORY.md


@pytest.mark.parametrize("current, data, writable", [
    (IMPORTED, IMPORTED.replace("senior", "staff") + NOTES_LINE, WRITES),  # a line changed
    (IMPORTED + "- [CI](ci.md) — CI runs\n", IMPORTED + NOTES_LINE, WRITES),  # a line the person added
    (IMPORTED, IMPORTED + "Some note of memtui's\n", WRITES),  # not an index line
    (IMPORTED, IMPORTED + "## Notes\n" + NOTES_LINE, WRITES),  # a heading
    (IMPORTED, IMPORTED + NOTES_LINE, WRITES - {"notes.md"}),  # its topic file is not memtui's to write
    (IMPORTED, IMPORTED + "- [again](user_role.md) — twice\n", WRITES),  # a topic already listed
    (IMPORTED, IMPORTED + "- [site](https://example.com/notes.md) — a web link\n", WRITES),
    (IMPORTED, IMPORTED + NOTES_LINE.rstrip("\n"), WRITES),  # cut off
    (IMPORTED, IMPORTED, WRITES),  # nothing new (the sync calls that unchanged)
])
def test_any_other_difference_leaves_the_index_alone(current, data, writable):
    assert adopt(current, data, writable=writable) == ""


def test_only_the_index_is_ever_taken_over():
    assert adopt(IMPORTED, IMPORTED + NOTES_LINE, rel="user_role.md") == ""
    assert adopt(IMPORTED, IMPORTED + NOTES_LINE, rel="sub/MEMORY.md") == ""


def test_new_topics_follow_the_order_the_index_there_already_lists_them(tmp_path):
    imported = [Memory(text="The user is a senior backend engineer.", layer="user", name="User role",
                       extra={"file": "user_role.md", "index_line": "- [User role](user_role.md) — engineer",
                              "index": "- [User role](user_role.md) — engineer\n"})]
    new = [Memory(text=text, layer="project", name=name, extra={"memtui_file": f"{name}.md"})
           for name, text in (("alpha", "Alpha first."), ("beta", "Beta second."))]
    index = tmp_path / "MEMORY.md"

    def links() -> list[str]:
        text = claude_code.layout(imported + new, tmp_path)[index]
        return [line.split("](")[1].split(")")[0] for line in text.splitlines()]

    assert links() == ["user_role.md", "alpha.md", "beta.md"]  # no index there yet: memtui's order
    index.write_text("- [User role](user_role.md) — engineer\n- [beta](beta.md) — Beta second.\n", encoding="utf-8")
    assert links() == ["user_role.md", "beta.md", "alpha.md"]  # beta was listed before: alpha comes after it
