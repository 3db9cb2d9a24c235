"""Round trips through memtui on fixtures written the way each tool writes its files
(tests/core/interop/fixtures/roundtrip): nested rule folders, non-ASCII names, `metadata:`
nesting, YAML-list globs, rules without a description, numbered lists, fences with
whitespace-only lines, bold in index hooks, MEMORY.md grouped under headings, CRLF.

- import -> export gives every source file back byte for byte;
- export -> import (into an empty home) gives the same entries;
- importing the same source again adds nothing.
Real files, the real store and its SQLite index; no mocks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memtui.core import actions
from memtui.core.paths import Paths

ROUND = Path(__file__).parent / "fixtures" / "roundtrip"

CASES = {
    # format: (source inside ROUND, files to compare (glob), export destination name)
    "cursor": ("cursor/.cursor/rules", "**/*.mdc", "rules"),
    "claude-code": ("claude-code/memory", "**/*.md", "memory"),
    "cline": ("cline/memory-bank", "**/*.md", "memory-bank"),
    "agents-md": ("agents/AGENTS.md", None, "AGENTS.md"),
    "agents-md-crlf": ("agents/crlf/AGENTS.md", None, "AGENTS.md"),
}


def fresh(root: Path, name: str) -> Paths:
    home, ws = root / name / "home", root / name / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    return Paths(home.resolve(), ws.resolve())


def files_of(where: Path, pattern: str | None) -> dict[str, bytes]:
    if pattern is None:
        return {where.name: where.read_bytes()}
    return {p.relative_to(where).as_posix(): p.read_bytes() for p in sorted(where.glob(pattern)) if p.is_file()}


def entries(paths: Paths) -> list[tuple[str, str, str]]:
    store = actions.open_store(paths)
    return sorted((str(e.layer), e.section, e.text) for e in store.entries() if e.layer != "conversation")


def _fmt(case: str) -> str:
    return "agents-md" if case.startswith("agents-md") else case


@pytest.mark.parametrize("case", sorted(CASES))
def test_import_then_export_gives_every_file_back_byte_for_byte(case, tmp_path):
    rel, pattern, dest_name = CASES[case]
    source = tmp_path / "source" / Path(rel).name
    if pattern is None:
        source.parent.mkdir(parents=True)
        shutil.copy2(ROUND / rel, source)
    else:
        shutil.copytree(ROUND / rel, source)
    paths = fresh(tmp_path, "store")
    report = actions.import_memories(actions.open_store(paths), _fmt(case), source, user_home=tmp_path)
    assert report.invalid == [] and report.duplicates == [] and report.added
    out = tmp_path / "out"
    dest = out / dest_name
    plan = actions.export_memories(actions.open_store(paths), _fmt(case), dest, layers=("user", "project"),
                                   user_home=tmp_path)
    assert plan.sync.blocked == []
    where = dest if pattern is not None else dest
    assert files_of(where, pattern) == files_of(source, pattern)

    # and back: the exported files import into an empty home as the same entries
    empty = fresh(tmp_path, "empty")
    again = actions.import_memories(actions.open_store(empty), _fmt(case), dest, user_home=tmp_path)
    assert again.invalid == []
    assert entries(empty) == entries(paths)

    # the same source once more adds nothing
    twice = actions.import_memories(actions.open_store(paths), _fmt(case), source, user_home=tmp_path)
    assert twice.added == [] and len(twice.duplicates) == len(report.added)


def test_a_source_files_own_similar_entries_all_come_in(tmp_path):
    paths = fresh(tmp_path, "s")
    source = ROUND / "cursor" / ".cursor" / "rules" / "testing.mdc"
    report = actions.import_memories(actions.open_store(paths), "cursor", source, user_home=tmp_path)
    assert len(report.added) == 1
    bank = ROUND / "cline" / "memory-bank"
    report = actions.import_memories(actions.open_store(paths), "cline", bank, user_home=tmp_path)
    texts = [m.text for m in report.added]
    # near-duplicates of each other inside one source are the source's structure: all kept
    assert "✅ User authentication with magic links" in texts
    assert "✅ Complete user authentication and session system" in texts
    assert texts.count("**Problem**:") == 2
    agents = tmp_path / "AGENTS.md"
    agents.write_text("## Commands\n\n- /tdd\n- /bdd\n- /atdd\n- /reverse-bdd\n- /reverse-tdd\n")
    report = actions.import_memories(actions.open_store(paths), "agents-md", agents, user_home=tmp_path)
    assert [m.text for m in report.added] == ["/tdd", "/bdd", "/atdd", "/reverse-bdd", "/reverse-tdd"]
    # ... while what the target layer already holds is still skipped
    again = actions.import_memories(actions.open_store(paths), "agents-md", agents, user_home=tmp_path)
    assert again.added == [] and len(again.duplicates) == 5


def test_generator_boilerplate_is_not_a_memory(tmp_path):
    claude_md = tmp_path / "CLAUDE.md"
    claude_md.write_text("# CLAUDE.md\n\nThis file provides guidance to Claude Code (claude.ai/code) when working "
                         "with code in this repository.\n\n## Commands\n\n- `make test` runs the suite\n")
    paths = fresh(tmp_path, "b")
    report = actions.import_memories(actions.open_store(paths), "agents-md", claude_md, user_home=tmp_path)
    assert [m.text for m in report.added] == ["`make test` runs the suite"]
    assert len(report.boilerplate) == 1


def test_memories_born_in_memtui_export_one_file_per_memtui_file(tmp_path):
    paths = fresh(tmp_path, "born")
    (paths.project_root / "testing.md").write_text(
        "---\ntype: preference\ndescription: How we test\n---\n\n## Testing\n\n- Use vitest\n- Prefer describe/it\n"
        "- **Module**: api tests hit Postgres\n")
    (paths.project_root / "ops" / "deploy.md").parent.mkdir()
    (paths.project_root / "ops" / "deploy.md").write_text("1. Tag the release\n2. Deploy on Tuesdays\n")
    store = actions.open_store(paths)
    for fmt, dest, made in (
            ("cursor", tmp_path / "rules", ["ops/deploy.mdc", "testing.mdc"]),
            ("claude-code", tmp_path / "cc", ["MEMORY.md", "ops/deploy.md", "testing.md"]),
            ("cline", tmp_path / "bank", ["activeContext.md"])):
        actions.export_memories(store, fmt, dest, user_home=tmp_path)
        assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == made, fmt
    rule = (tmp_path / "rules" / "testing.mdc").read_text()
    assert rule.startswith("---\ndescription: How we test\nglobs:\nalwaysApply: true\n---\n")
    assert rule.endswith("\n## Testing\n\n- Use vitest\n- Prefer describe/it\n- **Module**: api tests hit Postgres\n")
    # a rule without a description gets none made up
    assert (tmp_path / "rules" / "ops" / "deploy.mdc").read_text().startswith("---\ndescription:\nglobs:\n")
    index = (tmp_path / "cc" / "MEMORY.md").read_text()
    assert "- [deploy](ops/deploy.md) — Tag the release\n" in index
    assert "- [testing](testing.md) — How we test\n" in index
    # a Cline bank gives every entry back; a Cursor rule and a Claude Code topic file are one
    # memory each in those tools, so a memtui file comes back as one memory: its whole body
    bodies = sorted(p.read_text().split("---\n")[-1].strip() for p in paths.project_root.rglob("*.md"))
    for fmt, dest in (("cursor", tmp_path / "rules"), ("claude-code", tmp_path / "cc"), ("cline", tmp_path / "bank")):
        empty = fresh(tmp_path, f"back-{fmt}")
        actions.import_memories(actions.open_store(empty), fmt, dest, layer="project", user_home=tmp_path)
        want = sorted(e[2] for e in entries(paths)) if fmt == "cline" else bodies
        assert sorted(e[2] for e in entries(empty)) == want, fmt


def test_exported_text_and_names_pass_the_redaction(tmp_path):
    secret = "sk_live_" + "51H8aQ2eZvKYlo2C0Yk3tB9mXqW7rPz"
    paths = fresh(tmp_path, "red")
    (paths.project_root / f"{secret}.md").write_text(f"- The Stripe key is {secret}\n")
    (paths.user_root / "mine.md").write_text("- only for me\n")
    store = actions.open_store(paths)
    for fmt in ("claude-code", "cursor", "cline", "agents-md"):
        dest = tmp_path / f"out-{fmt}"
        plan = actions.export_memories(store, fmt, dest, user_home=tmp_path)
        assert plan.redacted >= 1, fmt
        for p in dest.rglob("*"):
            assert secret not in str(p.relative_to(dest)), fmt
            if p.is_file():
                assert secret not in p.read_text(), fmt
                assert "only for me" not in p.read_text() or fmt == "claude-code", fmt
    index = (tmp_path / "out-claude-code" / "MEMORY.md").read_text()
    assert "(redacted.md)" in index and (tmp_path / "out-claude-code" / "redacted.md").is_file()
    # asked for, the user layer goes into repository files too; --no-redact writes the secret
    plan = actions.export_memories(store, "agents-md", tmp_path / "all", layers=("user", "project"), redact=False,
                                   user_home=tmp_path)
    text = (tmp_path / "all" / "AGENTS.md").read_text()
    assert plan.redacted == 0 and secret in text and "only for me" in text


# ----------------------------------------------------------------------------- property

_WORDS = st.sampled_from(["deploy", "tests", "pool", "关键词", "café", "**Module**:", "`make`", "配置", "ok"])
_LINE = st.lists(_WORDS, min_size=1, max_size=5).map(" ".join)
_BLOCK = st.one_of(
    _LINE.map(lambda t: "# " + t),
    _LINE.map(lambda t: "## " + t),
    st.lists(_LINE, min_size=1, max_size=3).map(lambda items: "\n".join("- " + i for i in items)),
    st.lists(_LINE, min_size=1, max_size=3).map(lambda items: "\n".join(f"{n}. {i}" for n, i in
                                                                         enumerate(items, 1))),
    st.tuples(_LINE, _LINE).map(lambda p: f"```sh\n{p[0]}\n  \n{p[1]}\n```"),
    _LINE,
    _LINE.map(lambda t: "> " + t),
)
_FILE = st.tuples(st.lists(_BLOCK, min_size=1, max_size=6), st.sampled_from(["\n", "\r\n"])).map(
    lambda p: ("\n\n".join(p[0]) + "\n").replace("\n", p[1]))


@settings(max_examples=25)
@given(files=st.lists(_FILE, min_size=1, max_size=3), fmt=st.sampled_from(["cline", "agents-md"]))
def test_any_markdown_file_comes_back_byte_for_byte(tmp_path_factory, files, fmt):
    """Import then export of files made of headings, lists, numbered lists, fences with
    whitespace-only lines, quotes and CRLF gives every file back as it was."""
    root = tmp_path_factory.mktemp("prop")
    source = root / "memory-bank"
    source.mkdir()
    names = ["activeContext.md", "notes-été.md", "关键词.md"][: len(files)] if fmt == "cline" else ["AGENTS.md"]
    for name, text in zip(names, files, strict=False):
        (source / name).write_bytes(text.encode("utf-8"))
    paths = fresh(root, "store")
    origin = source if fmt == "cline" else source / "AGENTS.md"
    report = actions.import_memories(actions.open_store(paths), fmt, origin, user_home=root)
    assume(report.added and not report.duplicates)
    dest = root / "out" / ("memory-bank" if fmt == "cline" else "AGENTS.md")
    actions.export_memories(actions.open_store(paths), fmt, dest, user_home=root)
    pattern = "*.md" if fmt == "cline" else None
    written = files_of(dest, pattern)
    original = files_of(origin, pattern)
    # a file without any entry holds no memory: it is neither imported nor written back
    assert written == {k: v for k, v in original.items() if k in written}
    assert set(original) - set(written) == {k for k, v in original.items() if not _has_entries(v)}


def _has_entries(data: bytes) -> bool:
    from memtui.core import markdown

    return bool(markdown.parse_text(data.decode("utf-8")).entries)


_TEXT = st.lists(st.sampled_from(["deploy", "the", "pool", "关键词", "café", "tests", "on", "Tuesdays", "vitest", "a"]),
                 min_size=1, max_size=9).map(" ".join)


@settings(max_examples=200)
@given(pool=st.lists(_TEXT, min_size=1, max_size=30), pick=st.integers(min_value=0), where=st.integers(min_value=0),
       char=st.sampled_from(["x", "", "é"]), other=_TEXT)
def test_the_import_index_finds_what_the_one_rule_finds(pool, pick, where, char, other):
    """The blocked lookup of import planning agrees with `similarity.near_duplicate` (the rule
    of `remember`) on one-character edits of what is there and on unrelated texts."""
    from memtui.core.backup import Pool
    from memtui.core.model import Entry
    from memtui.core.similarity import near_duplicate

    entries = [Entry(id=str(i), layer="project", text=t) for i, t in enumerate(pool)]
    index = Pool(entries)
    base = pool[pick % len(pool)]
    at = where % (len(base) + 1)
    edited = base[:at] + char + base[at + (1 if char == "" else 0):]
    for query in (base, edited, other):
        assert (index.match(query) is None) == (near_duplicate(entries, query) is None), query


ISSUE40 = Path(__file__).parent / "fixtures" / "issue40"


def test_what_a_cline_round_trip_changes_is_what_changed_in_memtui(tmp_path):
    """The README's table, for cline: an edited entry changes its own line, a superseded one
    leaves its lines (the file still goes out whole, its title and fences as they were), a
    memory born in memtui is added to the core file its tag names, else `systemPatterns.md`
    (a pattern or decision) or `activeContext.md`, after that file's own text; a line another
    file of the bank holds word for word comes in once, and the other file comes back without it."""
    bank = tmp_path / "memory-bank"
    shutil.copytree(ISSUE40 / "journal" / "memory-bank", bank)
    tech = (bank / "techContext.md").read_text()
    (bank / "techContext.md").write_text(tech + "\n## Also\n- Recipe import from URLs\n")
    paths = fresh(tmp_path, "c")
    report = actions.import_memories(actions.open_store(paths), "cline", bank, user_home=tmp_path)
    assert [(m.text, Path(m.origin).name) for m, _ in report.duplicates] == [("Recipe import from URLs",
                                                                             "techContext.md")]
    store = actions.open_store(paths)
    moved = next(e for e in store.entries() if e.text == "Moved the recipe cache to SQLite")
    actions.edit(store, moved, "Moved the recipe cache to SQLite (WAL mode)")
    store = actions.open_store(paths)
    old, new = (next(e for e in store.entries() if e.text.startswith(f"**UUID {w}**")) for w in ("Primary Keys", "Strategy"))
    actions.supersede(store, old, new)
    (paths.project_root / "ocr.md").write_text("---\ntags: [progress]\n---\n\n- Photo import uses the phone's OCR\n")
    (paths.project_root / "handlers.md").write_text("---\ntype: pattern\n---\n\n- Every handler is a plain function\n")
    (paths.project_root / "misc.md").write_text("- Ask before renaming a table\n")
    out = tmp_path / "out"
    plan = actions.export_memories(actions.open_store(paths), "cline", out, user_home=tmp_path)
    assert plan.sync.blocked == []
    source = {p.name: p.read_text() for p in bank.iterdir()}
    got = {p.name: p.read_text() for p in out.iterdir()}
    assert got["activeContext.md"] == source["activeContext.md"].replace(
        "SQLite\n", "SQLite (WAL mode)\n") + "\n- Ask before renaming a table\n"
    assert got["systemPatterns.md"] == source["systemPatterns.md"].replace(
        "- **UUID Primary Keys**: every table keys on a UUID, never on a serial\n", "") + \
        "\n- Every handler is a plain function\n"
    assert got["progress.md"] == source["progress.md"] + "\n- Photo import uses the phone's OCR\n"
    assert got["techContext.md"] == tech + "\n## Also\n"
    for name in ("projectbrief.md", "productContext.md"):
        assert got[name] == source[name]


def test_an_instructions_folder_comes_back_as_one_agents_md(tmp_path):
    """The README's table, for agents-md: one file comes back byte for byte (its generator's
    line too); the files of a folder come back joined, by one blank line, into one AGENTS.md."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy2(ISSUE40 / "generator" / "CLAUDE.md", repo / "CLAUDE.md")
    (repo / "AGENTS.md").write_text("# AGENTS.md\n\n- Run `make check` before a push.\n")
    paths = fresh(tmp_path, "f")
    actions.import_memories(actions.open_store(paths), "agents-md", repo, user_home=tmp_path)
    out = tmp_path / "out"
    actions.export_memories(actions.open_store(paths), "agents-md", out, user_home=tmp_path)
    claude = (repo / "CLAUDE.md").read_text().replace(
        "This file provides guidance to Claude Code (claude.ai/code) when working with code in this repository.\n", "")
    assert (out / "AGENTS.md").read_text() == (repo / "AGENTS.md").read_text() + "\n" + claude.rstrip("\n") + "\n"
