"""Cline's memory bank: a `memory-bank/` folder of plain Markdown files (no frontmatter).

The six core files are projectbrief.md, productContext.md, activeContext.md,
systemPatterns.md, techContext.md and progress.md; Cline may add others. Each file's
entries follow SPEC §2 and become project memories tagged with the file's name (its stem),
which also gives the category (`systemPatterns` -> pattern, the others -> knowledge).

Export writes each memory into the bank file it came from (a file imported unchanged
comes back byte for byte), else the core file its tag names, else `systemPatterns.md` for
patterns and decisions and `activeContext.md` for the rest (a memtui file's body as it
is). A core file with no memory is not written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..model import Layer
from . import ImportProblem, Memory, ReadResult
from ._files import (
    by_file,
    clean_rel,
    guarded,
    iter_files,
    join_texts,
    kept_body,
    markdown_entries,
    mtime,
    read_text,
    reader,
    safe_rel,
    same_entries,
    source_text,
)
from .agents_md import file_text
from .agents_md import render as render_sections

FOLDER = "memory-bank"
CORE = ("projectbrief", "productContext", "activeContext", "systemPatterns", "techContext", "progress")
CATEGORY = {"systemPatterns": "pattern"}


def default_source(workspace: Path, user_home: Path) -> Path:
    return Path(workspace) / FOLDER


def _read_file(path: Path, rel: str, root: Path, result: ReadResult) -> list[Memory]:
    text = read_text(path, root)
    _, entries = markdown_entries(text)
    stem = Path(rel).stem
    when = mtime(path)
    result.sources[str(path)] = source_text(text, rel)
    return [Memory(text=e.text, layer=Layer.PROJECT, category=CATEGORY.get(stem, "knowledge"), tags=(stem,),
                   section=e.section, updated_at=when, origin=str(path), extra={"file": rel})
            for e in entries]


@reader
def read(source: Path, result: ReadResult) -> None:
    if source.is_file():
        memories = guarded(source, result.problems, _read_file, source, source.name, source.parent, result)
        result.memories.extend(memories or [])
        return
    if (source / FOLDER).is_dir() and source.name != FOLDER:
        source = source / FOLDER  # given the workspace
    found = False
    for path in iter_files(source, ".md", result.problems):
        found = True
        memories = guarded(path, result.problems, _read_file, path, path.relative_to(source).as_posix(), source,
                           result)
        result.memories.extend(memories or [])
    if not found:
        result.problems.append(ImportProblem(str(source), "holds no Markdown files"))


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


def layout(memories: list[Memory], dest: Path, name: Callable[[str], str] = str) -> dict[Path, str]:
    """Each memtui file goes back to the bank file it came from (whole when every entry goes
    out), a memtui file born elsewhere to the core file its tag or category names; a core
    file with no memory is not written (Cline fills it, and a lone title would be an entry)."""
    groups: dict[str, list[list[Memory]]] = {}
    for group in by_file([m for m in memories if m.text.strip()]):
        original = group[0].extra.get("file")
        rel = str(original) if safe_rel(original, ".md") else f"{_home_of(group[0])}.md"
        same = groups.setdefault(rel, [])
        if same and kept_body(group) is None and kept_body(same[-1]) is None:
            same[-1] = same[-1] + group  # memories out of no whole file: one list by section
        else:
            same.append(group)
    for rel, gs in groups.items():  # the bank file's own text first, memories born elsewhere after it
        gs.sort(key=lambda g: g[0].extra.get("file") != rel)
    parts = {rel: [file_text(g, safe_rel(g[0].extra.get("file"), ".md")) for g in gs] for rel, gs in groups.items()}
    members = {rel: [m for g in gs for m in g] for rel, gs in groups.items()}
    used: set[str] = set()
    files: dict[Path, str] = {}
    for rel, texts in parts.items():
        text = join_texts(texts)
        if not same_entries(text, members[rel]):
            text = render_sections(members[rel])
        files[dest.joinpath(*clean_rel(rel, name, used).split("/"))] = text
    return files
