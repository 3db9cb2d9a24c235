"""Cline's memory bank: a `memory-bank/` folder of plain Markdown files (no frontmatter).

The six core files are projectbrief.md, productContext.md, activeContext.md,
systemPatterns.md, techContext.md and progress.md; Cline may add others. Each file's
entries follow SPEC §2 and become project memories tagged with the file's name (its stem),
which also gives the category (`systemPatterns` -> pattern, the others -> knowledge).

Export writes the six core files: each memory goes into the file it came from, else the
one its tag names, else `systemPatterns.md` for patterns and decisions and
`activeContext.md` for the rest, grouped by section as in the AGENTS.md export. A core
file with no memory is written empty (a lone title heading would read back as an entry).
"""

from __future__ import annotations

from pathlib import Path

from . import ImportProblem, Memory, ReadResult
from ._files import (
    guarded,
    iter_files,
    markdown_entries,
    missing_source,
    mtime,
    read_text,
    write_all,
)
from .agents_md import render as render_sections

FOLDER = "memory-bank"
CORE = ("projectbrief", "productContext", "activeContext", "systemPatterns", "techContext", "progress")
CATEGORY = {"systemPatterns": "pattern"}


def default_source(workspace: Path, user_home: Path) -> Path:
    return Path(workspace) / FOLDER


def _read_file(path: Path, rel: str, root: Path) -> list[Memory]:
    text = read_text(path, root)
    _, entries = markdown_entries(text)
    stem = Path(rel).stem
    when = mtime(path)
    return [Memory(text=e.text, layer="project", category=CATEGORY.get(stem, "knowledge"), tags=(stem,),
                   section=e.section, updated_at=when, origin=str(path), extra={"file": rel})
            for e in entries]


def read(source: Path) -> ReadResult:
    result = ReadResult()
    problem = missing_source(source)
    if problem:
        result.problems.append(problem)
        return result
    if source.is_file():
        memories = guarded(source, result.problems, _read_file, source, source.name, source.parent)
        result.memories.extend(memories or [])
        return result
    if (source / FOLDER).is_dir() and source.name != FOLDER:
        source = source / FOLDER  # given the workspace
    found = False
    for path in iter_files(source, ".md", result.problems):
        found = True
        memories = guarded(path, result.problems, _read_file, path, path.relative_to(source).as_posix(), source)
        result.memories.extend(memories or [])
    if not found:
        result.problems.append(ImportProblem(str(source), "holds no Markdown files"))
    return result


def _home_of(memory: Memory) -> str:
    """The file a memory belongs in: where it came from, else its tag, else by category."""
    original = str(memory.extra.get("file", ""))
    if original.endswith(".md") and Path(original).stem in CORE and "/" not in original:
        return Path(original).stem
    for tag in memory.tags:
        if tag in CORE:
            return tag
    if memory.category in ("pattern", "decision"):
        return "systemPatterns"
    return "activeContext"


def write(memories: list[Memory], dest: Path) -> list[Path]:
    groups: dict[str, list[Memory]] = {stem: [] for stem in CORE}
    for memory in memories:
        if memory.text.strip():
            groups[_home_of(memory)].append(memory)
    files = {dest / f"{stem}.md": render(stem, groups[stem]) for stem in CORE}
    return write_all(files)


def render(stem: str, memories: list[Memory]) -> str:
    """A core file: its memories grouped by section; empty without any (Cline fills it)."""
    return render_sections(memories) if memories else ""
