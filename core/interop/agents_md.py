"""Instruction files other assistants read: CLAUDE.md, AGENTS.md, GEMINI.md,
.github/copilot-instructions.md and .cursorrules.

Given a file, that file; given a folder (by default the workspace), every one of them it
holds. Each file's entries follow SPEC §2 (a top-level list item or block is one entry,
its section the nearest heading above it) and become project memories. Export writes one
AGENTS.md: entries without a section first, then one `## section` per section, in the
order they first appear, each entry a list item, so reading it back gives the same texts
and sections.
"""

from __future__ import annotations

from pathlib import Path

from . import ImportProblem, Memory, ReadResult
from ._files import (
    guarded,
    markdown_entries,
    missing_source,
    mtime,
    one_line,
    read_text,
    write_all,
)

FILES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md",
         ".cursorrules")


def default_source(workspace: Path, user_home: Path) -> Path:
    return Path(workspace)


def _read_file(path: Path, root: Path | None, label: str) -> list[Memory]:
    text = read_text(path, root)
    _, entries = markdown_entries(text)
    when = mtime(path)
    return [Memory(text=e.text, layer="project", section=e.section, updated_at=when, origin=str(path),
                   extra={"file": label})
            for e in entries]


def read(source: Path) -> ReadResult:
    result = ReadResult()
    problem = missing_source(source)
    if problem:
        result.problems.append(problem)
        return result
    targets: list[tuple[Path, Path | None, str]]
    if source.is_dir():
        targets = [(source / rel, source, rel) for rel in FILES if (source / rel).exists() or (source / rel).is_symlink()]
        if not targets:
            result.problems.append(ImportProblem(str(source), "holds none of " + ", ".join(FILES)))
    else:
        targets = [(source, None, source.name)]
    for path, root, label in targets:
        memories = guarded(path, result.problems, _read_file, path, root, label)
        if memories:
            result.memories.extend(memories)
    return result


def _item(text: str) -> str:
    lines = text.strip().split("\n")
    out = ["- " + lines[0]]
    out.extend(("  " + line) if line.strip() else "" for line in lines[1:])
    return "\n".join(out)


def render(memories: list[Memory]) -> str:
    groups: dict[str, list[str]] = {"": []}
    for memory in memories:
        if memory.text.strip():
            groups.setdefault(one_line(memory.section), []).append(_item(memory.text))
    parts: list[str] = []
    if groups[""]:
        parts.append("\n\n".join(groups[""]))
    for section, items in groups.items():
        if section and items:
            parts.append(f"## {section}\n\n" + "\n\n".join(items))
    return "\n\n".join(parts) + "\n"


def write(memories: list[Memory], dest: Path) -> list[Path]:
    target = dest if dest.suffix.lower() == ".md" else dest / "AGENTS.md"
    return write_all({target: render(memories)})
