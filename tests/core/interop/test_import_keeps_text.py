"""Issue 40: an import never loses text a source holds, and keeps each source's body as it
was, so a same-format round trip gives it back byte for byte. Fixtures of the real shapes
(tests/core/interop/fixtures/issue40): a CLAUDE.md as Claude Code's /init writes it (a title,
the generator's line, `##`/`###`, paragraphs, fences, two-space line breaks), a Cline bank of
the six core files whose journal dates and done/to-do pairs resemble each other across files,
files without frontmatter or a final newline, a MEMORY.md indexing files outside its folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memtui.core import actions
from memtui.core.markdown import parse_text
from memtui.core.paths import Paths

FIXTURES = Path(__file__).parent / "fixtures" / "issue40"


def fresh(root: Path, name: str) -> Paths:
    home, ws = root / name / "home", root / name / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    return Paths(home.resolve(), ws.resolve())


def body_of(path: Path) -> str:
    parsed = parse_text(path.read_text())
    return parsed.text[parsed.body_offset:]


def test_a_file_opened_by_a_generator_line_keeps_its_body_but_that_line(tmp_path):
    source = FIXTURES / "generator" / "CLAUDE.md"
    paths = fresh(tmp_path, "g")
    report = actions.import_memories(actions.open_store(paths), "agents-md", source, user_home=tmp_path)
    assert report.invalid == [] and len(report.boilerplate) == 1
    [written] = [f.path for f in report.files]
    original = source.read_text()
    generator = "This file provides guidance to Claude Code (claude.ai/code) when working with code in this repository.\n"
    # the title, `###`, the paragraphs, the fence and the two-space line breaks, byte for byte:
    # only the generator's line is gone (deleted the way memtui deletes an entry)
    assert body_of(written) == original.replace(generator, "")
    # not a memory: the file keeps it aside (its frontmatter), out of the body and the entries
    assert "This file provides guidance" not in body_of(written)
    assert not any("provides guidance" in e.text for e in actions.open_store(paths).entries())


GENERATOR = "This file provides guidance to Claude Code (claude.ai/code) when working with code in this repository.\n"


def _export_agents(paths: Paths, dest: Path, tmp_path: Path) -> bytes:
    plan = actions.export_memories(actions.open_store(paths), "agents-md", dest, user_home=tmp_path)
    assert plan.sync.blocked == []
    return dest.read_bytes()


def _shaped(shape: str) -> bytes:
    written = (FIXTURES / "generator" / "CLAUDE.md").read_bytes()
    assert written.startswith(b"# CLAUDE.md\n\n" + GENERATOR.encode()) and b"  \n" in written
    if shape == "crlf":
        return written.replace(b"\n", b"\r\n")
    if shape == "untitled":  # the generator's line first
        return written.split(b"\n", 2)[2]
    if shape == "frontmatter":  # a rule file's scope above it
        return b"---\npaths:\n  - src/**\n---\n" + written
    return written


@pytest.mark.parametrize("shape", ["as-written", "crlf", "untitled", "frontmatter"])
def test_a_file_opened_by_a_generator_line_comes_back_byte_for_byte(shape, tmp_path):
    """As Claude Code's /init writes CLAUDE.md: the title, the generator's line, `##` and `###`
    headings, paragraphs, fences right under a heading, two-space line breaks, a numbered list
    (and the same with CRLF, without the title, under frontmatter)."""
    original = _shaped(shape)
    source = tmp_path / "repo" / "CLAUDE.md"
    source.parent.mkdir()
    source.write_bytes(original)
    paths = fresh(tmp_path, "g")
    report = actions.import_memories(actions.open_store(paths), "agents-md", source, user_home=tmp_path)
    assert report.invalid == [] and len(report.boilerplate) == 1
    # import -> export: the file as it was, the generator's line in its place
    assert _export_agents(paths, tmp_path / "out" / "CLAUDE.md", tmp_path) == original
    # export -> import (into an empty home) -> export: the same bytes again, the same entries
    empty = fresh(tmp_path, "e")
    again = actions.import_memories(actions.open_store(empty), "agents-md", tmp_path / "out" / "CLAUDE.md",
                                    user_home=tmp_path)
    assert again.invalid == [] and len(again.boilerplate) == 1
    assert _export_agents(empty, tmp_path / "out2" / "CLAUDE.md", tmp_path) == original
    texts = [sorted(e.text for e in actions.open_store(p).entries()) for p in (paths, empty)]
    assert texts[0] == texts[1] and not any("provides guidance" in t for t in texts[0])


def test_a_generator_line_further_down_is_the_files_own_text(tmp_path):
    """Only the line that opens the file (under its title at most) is the generator's: the same
    words after the file's own text are imported like the rest, and nothing of the body is
    copied aside into the frontmatter."""
    body = "# Notes\n\n" + "".join(f"- Rule {k}: keep the build green on branch {k}\n" for k in range(200))
    source = tmp_path / "repo" / "CLAUDE.md"
    source.parent.mkdir()
    source.write_text(body + "\n" + GENERATOR)
    paths = fresh(tmp_path, "late")
    report = actions.import_memories(actions.open_store(paths), "agents-md", source, user_home=tmp_path)
    assert report.invalid == [] and report.boilerplate == []
    [written] = [f.path for f in report.files]
    assert body_of(written) == source.read_text()
    assert written.stat().st_size < len(body) + 1000  # no second copy of the body
    assert any(e.text == GENERATOR.strip() for e in actions.open_store(paths).entries())


def test_the_generator_line_comes_back_around_an_entry_already_stored(tmp_path):
    paths = fresh(tmp_path, "s")
    (paths.project_root / "notes.md").write_text("- Never commit `.env`.\n")
    source = FIXTURES / "generator" / "CLAUDE.md"
    report = actions.import_memories(actions.open_store(paths), "agents-md", source, user_home=tmp_path)
    assert [m.text for m, _ in report.duplicates] == ["Never commit `.env`."]
    [written] = [f.path for f in report.files]
    # the stored entry taken out, the generator's line given back where it stood
    assert body_of(written) == source.read_text().replace(GENERATOR, "").replace("- Never commit `.env`.\n", "")
    (paths.project_root / "notes.md").unlink()
    exported = _export_agents(paths, tmp_path / "out" / "CLAUDE.md", tmp_path).decode()
    assert exported == source.read_text().replace("- Never commit `.env`.\n", "")


def test_joined_with_other_files_the_generator_line_stays_out(tmp_path):
    """Several memtui files go out as one AGENTS.md: a line saying "This file provides
    guidance ..." in its middle would be untrue, so it is given back only to a file alone."""
    paths = fresh(tmp_path, "j")
    actions.import_memories(actions.open_store(paths), "agents-md", FIXTURES / "generator" / "CLAUDE.md",
                            user_home=tmp_path)
    (paths.project_root / "style.md").write_text("- Answer in British English.\n")
    text = _export_agents(paths, tmp_path / "out" / "AGENTS.md", tmp_path).decode()
    assert "provides guidance" not in text and "# CLAUDE.md\n" in text and "Answer in British English." in text


def test_entries_like_those_of_another_file_of_the_bank_all_come_in(tmp_path):
    bank = tmp_path / "memory-bank"
    shutil.copytree(FIXTURES / "journal" / "memory-bank", bank)
    paths = fresh(tmp_path, "c")
    report = actions.import_memories(actions.open_store(paths), "cline", bank, user_home=tmp_path)
    assert report.duplicates == [] and report.invalid == []
    stored = {e.text for e in actions.open_store(paths).entries()}
    for name in ("progress.md", "activeContext.md"):  # every text of every file is stored somewhere
        for entry in parse_text((bank / name).read_text()).entries:
            assert entry.text in stored, entry.text
    # ... and the same bank again adds nothing
    again = actions.import_memories(actions.open_store(paths), "cline", bank, user_home=tmp_path)
    assert again.added == [] and len(again.duplicates) == len(report.added)


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_cline_bank_comes_back_byte_for_byte_under_its_own_names(tmp_path):
    """The six core files as Cline writes them (titles, `##` sections, a journal under dates,
    done and to-do lines that resemble each other, `- [ ]` items, a fence, a rule and a
    footer): import, then export cline, gives every file back at its name, byte for byte, and
    nothing else (no memtui folder such as `imported/cline/` leaks into the bank)."""
    paths = fresh(tmp_path, "b")
    bank = paths.workspace / "memory-bank"
    shutil.copytree(FIXTURES / "journal" / "memory-bank", bank)
    original = tree(bank)
    assert sorted(original) == sorted(f"{n}.md" for n in ("projectbrief", "productContext", "activeContext",
                                                          "systemPatterns", "techContext", "progress"))
    report = actions.import_memories(actions.open_store(paths), "cline", None, user_home=tmp_path)
    assert report.invalid == [] and report.duplicates == []
    out = tmp_path / "out"
    plan = actions.export_memories(actions.open_store(paths), "cline", out / "memory-bank", user_home=tmp_path)
    assert plan.sync.blocked == [] and tree(out) == {f"memory-bank/{n}": b for n, b in original.items()}
    # to its own place (the workspace's bank, which memtui did not write): every file is in step already
    plan = actions.export_memories(actions.open_store(paths), "cline", None, user_home=tmp_path)
    assert {str(s.action) for s in plan.sync.steps} == {"unchanged"} and tree(bank) == original
    # export -> import (into an empty home) -> export: the same files again
    empty = fresh(tmp_path, "e")
    actions.import_memories(actions.open_store(empty), "cline", out / "memory-bank", user_home=tmp_path)
    actions.export_memories(actions.open_store(empty), "cline", tmp_path / "out2", user_home=tmp_path)
    assert tree(tmp_path / "out2") == original


def test_an_entry_already_stored_is_skipped_and_the_rest_of_its_file_kept_as_it_was(tmp_path):
    paths = fresh(tmp_path, "s")
    (paths.project_root / "notes.md").write_text("- *May 27, 2025*\n")
    bank = tmp_path / "memory-bank"
    shutil.copytree(FIXTURES / "journal" / "memory-bank", bank)
    report = actions.import_memories(actions.open_store(paths), "cline", bank, user_home=tmp_path)
    assert [m.text for m, _ in report.duplicates] == ["*May 27, 2025*"]
    [active] = [f.path for f in report.files if f.path.name == "activeContext.md"]
    assert body_of(active) == (bank / "activeContext.md").read_text().replace("*May 27, 2025*\n", "")
    assert len(report.files) == 6 and report.invalid == []


def _round_trip(tmp_path: Path, fmt: str, source: Path, dest_name: str) -> tuple[Path, Path]:
    src = tmp_path / "src" / source.name
    shutil.copytree(source, src)
    paths = fresh(tmp_path, "r")
    report = actions.import_memories(actions.open_store(paths), fmt, src, user_home=tmp_path)
    assert report.invalid == [] and report.added
    dest = tmp_path / "out" / dest_name
    plan = actions.export_memories(actions.open_store(paths), fmt, dest, layers=("user", "project"),
                                   user_home=tmp_path)
    assert plan.sync.blocked == []
    return src, dest


def test_a_topic_file_without_frontmatter_and_an_index_without_a_final_newline_come_back_as_they_were(tmp_path):
    src, dest = _round_trip(tmp_path, "claude-code", FIXTURES / "bare" / "memory", "memory")
    assert (dest / "deploys.md").read_bytes() == (src / "deploys.md").read_bytes()
    assert (dest / "MEMORY.md").read_bytes() == (src / "MEMORY.md").read_bytes()


def test_a_cursor_rule_without_frontmatter_gets_none_on_export(tmp_path):
    src, dest = _round_trip(tmp_path, "cursor", FIXTURES / "bare" / "rules", "rules")
    assert (dest / "lint.mdc").read_bytes() == (src / "lint.mdc").read_bytes()


def test_an_index_keeps_its_lines_for_topic_files_outside_its_folder(tmp_path):
    src = tmp_path / "src" / "memory"
    shutil.copytree(FIXTURES / "outside" / "memory", src)
    paths = fresh(tmp_path, "o")
    report = actions.import_memories(actions.open_store(paths), "claude-code", src, user_home=tmp_path)
    assert report.added and all("outside the memory folder" in why for _, why in report.invalid)
    dest = tmp_path / "out" / "memory"
    actions.export_memories(actions.open_store(paths), "claude-code", dest, layers=("user", "project"),
                            user_home=tmp_path)
    assert (dest / "MEMORY.md").read_bytes() == (src / "MEMORY.md").read_bytes()


def test_agents_md_export_of_memories_from_several_files_is_one_tight_list(tmp_path):
    paths = fresh(tmp_path, "a")
    (paths.project_root / "style.md").write_text("---\nname: style\n---\n\n- Answer in British English.\n")
    (paths.project_root / "tools.md").write_text("## Tools\n\n- Use pytest\n- Use ruff\n\nA paragraph.\n")
    dest = tmp_path / "out"
    dest.mkdir()
    actions.export_memories(actions.open_store(paths), "agents-md", dest, user_home=tmp_path)
    text = (dest / "AGENTS.md").read_text()
    # (a memory whose text is itself a list item stays one: `- - Answer ...` reads back as that text)
    assert "- Use pytest\n- Use ruff\n" in text
