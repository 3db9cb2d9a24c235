"""Instruction files other assistants read: CLAUDE.md, AGENTS.md, GEMINI.md,
.github/copilot-instructions.md and .cursorrules.

Given a file, that file; given a folder (by default the workspace), every one of them it
holds. Each file's entries follow SPEC §2 (a top-level list item or block is one entry,
its section the nearest heading above it) and become project memories; the line
"This file provides guidance to Claude Code ..." that generators open such a file with is
not knowledge and is left out of the memories: the imported file keeps it aside, with its
place. Export writes one AGENTS.md: each memtui file's body as it is (a file imported from
an instructions file: that file's text again, its generator's line included when it goes
out alone), one after the other; where that would not read back as the same entries, or a
file goes out only in part, its entries as list items under `## section` headings.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from pathlib import Path

from ..model import Layer
from . import ImportProblem, Memory, ReadResult
from ._files import (
    by_file,
    guarded,
    join_texts,
    kept_body,
    markdown_entries,
    mtime,
    one_line,
    read_text,
    reader,
    same_entries,
    source_text,
    with_lines,
    without_lines,
)
from .scoping import foreign_scope

ONE_FILE = True  # an export writes one file
FILES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md",
         ".cursorrules")


def default_source(workspace: Path, user_home: Path) -> Path:
    return Path(workspace)


# What `claude /init` and similar generators open an instructions file with: it tells the
# tool what the file is, it is no knowledge about the project, so it is not imported.
BOILERPLATE = re.compile(
    r"(?is)\s*this file provides (?:guidance|instructions|context) to (?:claude code|claude|codex|gemini|"
    r"github copilot|copilot|ai (?:coding )?(?:assistants|agents)|the agent|agents)\b[^\n]*"
)


def is_boilerplate(text: str) -> bool:
    return len(text) < 300 and BOILERPLATE.fullmatch(text) is not None


def _read_file(path: Path, root: Path | None, label: str, result: ReadResult) -> list[Memory]:
    text = read_text(path, root)
    meta, entries = markdown_entries(text)
    when = mtime(path)
    scoped, note = foreign_scope(meta)  # a rule file's scope (SPEC §16): `paths`, `applyTo`, `globs`
    carried = {**({"scope": list(scoped)} if scoped else {}), **({"scope_note": note} if note else {})}
    memories = [Memory(text=e.text, layer=Layer.PROJECT, section=e.section, updated_at=when, origin=str(path),
                       extra={"file": label, **carried})
                for e in entries]
    # a generator's line opens the file (under its title at most): the same words further down
    # are the file's own text, imported like the rest (and the text before the line, kept
    # aside with it, stays a title, not the body)
    opening = list(itertools.takewhile(lambda m: is_boilerplate(m.text), memories))
    result.boilerplate += opening
    # the body less the generator's line, which the file keeps aside so an export gives it back
    result.sources[str(path)] = without_lines(source_text(text, label), [m.text for m in opening])
    return memories[len(opening):]


@reader
def read(source: Path, result: ReadResult) -> None:
    targets: list[tuple[Path, Path | None, str]]
    if source.is_dir():
        targets = [(source / rel, source, rel) for rel in FILES if (source / rel).exists() or (source / rel).is_symlink()]
        if not targets:
            result.problems.append(ImportProblem(str(source), "holds none of " + ", ".join(FILES)))
    else:
        targets = [(source, None, source.name)]
    for path, root, label in targets:
        memories = guarded(path, result.problems, _read_file, path, root, label, result)
        if memories:
            result.memories.extend(memories)


def _item(text: str) -> str:
    lines = text.strip().split("\n")
    out = ["- " + lines[0]]
    # whitespace-only lines keep their spaces (inside a fence they are code): only a truly
    # empty line stays empty
    out.extend(("  " + line) if line else "" for line in lines[1:])
    return "\n".join(out)


def _joined(pieces: list[str]) -> str:
    """Items one per line (a tight list, as people write them); a blank line only around a
    piece of several paragraphs or one that is a list of its own."""
    out = ""
    for i, piece in enumerate(pieces):
        if i:
            loose = "\n\n" in piece or "\n\n" in pieces[i - 1] or not piece.startswith("- ") \
                or not pieces[i - 1].startswith("- ")
            out += "\n\n" if loose else "\n"
        out += piece
    return out


def render(memories: list[Memory]) -> str:
    groups: dict[str, list[str]] = {"": []}
    for memory in memories:
        if memory.text.strip():
            groups.setdefault(one_line(memory.section), []).append(_item(memory.text))
    parts: list[str] = []
    if groups[""]:
        parts.append(_joined(groups[""]))
    for section, items in groups.items():
        if section and items:
            parts.append(f"## {section}\n\n" + _joined(items))
    return "\n\n".join(parts) + "\n"


def file_text(group: list[Memory], fmt_file: bool, alone: bool = False) -> str:
    """One memtui file's memories as instructions: the file's body as it is when it goes out
    whole (with the source's own frontmatter when it came from such a file, and, when it is
    the only file written, the generator's line it opened with), else its entries as list
    items under their sections."""
    body = kept_body(group)
    if body is None:
        return render(group)
    first = group[0]
    if fmt_file and isinstance(first.extra.get("file"), str):
        head = first.extra.get("head")
        if alone:
            body = with_lines(body, first.extra.get("generator"))
        return (head if isinstance(head, str) else "") + body
    return body.lstrip("\r\n")


def layout(memories: list[Memory], dest: Path, name: Callable[[str], str] = str) -> dict[Path, str]:
    target = dest if dest.suffix.lower() == ".md" else dest / "AGENTS.md"
    target = target.with_name(name(target.name))
    memories = [m for m in memories if m.text.strip()]
    groups = by_file(memories, together=True)
    text = join_texts([file_text(group, True, alone=len(groups) == 1) for group in groups]) if memories else "\n"
    if memories and not same_entries(text, memories, skip=is_boilerplate):
        text = render(memories)  # the files' bodies do not join cleanly: one list, by section
    return {target: text}
