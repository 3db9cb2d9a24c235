"""Cursor project rules: `.cursor/rules/*.mdc` (nested folders too).

A rule file is frontmatter with `description`, `globs` and `alwaysApply`, then Markdown.
Cursor writes `globs` bare and comma-separated (`globs: src/**/*.ts, *.tsx`) and reads it
as raw text, so a value starting with `*` is not valid YAML; that one line is therefore
taken literally before the rest is loaded as YAML (safely, anchors and aliases refused).
A file whose other lines are not valid YAML but are only Cursor's own keys as plain
`key: value` lines (`description: Database: use the pool`) is read line by line, as Cursor
does; anything else that YAML refuses is a problem.

One rule is one memory: its description and globs describe the rule as a whole (when it
applies, what it is for), so splitting it into list-item entries would leave pieces whose
`globs` no longer say anything about them, and an export could not give the rule back.
`globs` (a string; a YAML list is also kept as a list) and `alwaysApply` (a bool) are
kept in `extra`. Export gives each rule back at its own path with its own frontmatter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ..model import Layer
from ..scope import globs_of
from . import Memory, ReadResult
from ._files import (
    SourceError,
    by_file,
    clean_rel,
    first_heading,
    first_line,
    guarded,
    iter_files,
    kept_body,
    load_yaml_mapping,
    mtime,
    one_line,
    read_text,
    reader,
    safe_rel,
    slug,
    source_text,
    split_frontmatter,
)
from .agents_md import render as render_sections

SUFFIX = ".mdc"
RULE_KEYS = ("description", "globs", "alwaysApply")
_GLOBS = re.compile(r"globs[ \t]*:[ \t]*(.*?)[ \t]*")
_LOOSE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*")


def default_source(workspace: Path, user_home: Path) -> Path:
    return Path(workspace) / ".cursor" / "rules"


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _loose(lines: list[str]) -> dict[str, Any] | None:
    """Cursor's own keys as plain `key: value` text, or None when the block is anything more."""
    meta: dict[str, Any] = {}
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LOOSE.fullmatch(line)
        if not match or match.group(1) not in RULE_KEYS:
            return None
        value = match.group(2) or ""
        if value[:1] in "[{!&*|>":  # YAML syntax that failed to load is not plain text
            return None
        meta[match.group(1)] = {"true": True, "false": False}.get(value, _unquote(value))
    return meta


def rule_frontmatter(meta_text: str) -> dict[str, Any]:
    lines = meta_text.splitlines()
    raw_globs: str | None = None
    kept: list[str] = []
    for line in lines:
        match = _GLOBS.fullmatch(line)
        if match and raw_globs is None and match.group(1) and not match.group(1).startswith("["):
            raw_globs = match.group(1)
            continue
        kept.append(line)
    try:
        meta = load_yaml_mapping("\n".join(kept))
    except SourceError as exc:
        if "anchors or aliases" in str(exc):
            raise
        loose = _loose(kept)
        if loose is None:
            raise
        meta = loose
    if raw_globs is not None:
        meta["globs"] = _unquote(raw_globs)
    return meta


def _globs_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v).strip() for v in value if v is not None and str(v).strip())
    return one_line(str(value))


def _read_rule(path: Path, rel: str, root: Path | None, result: ReadResult) -> Memory:
    text = read_text(path, root)
    result.sources[str(path)] = source_text(text, rel)
    split = split_frontmatter(text)
    meta = rule_frontmatter(split.meta_text) if split.meta_text is not None else {}
    body = split.body.strip()
    if not body:
        raise SourceError("no rule text after the frontmatter")
    description = meta.get("description")
    return Memory(
        text=body, layer=Layer.PROJECT, section=first_heading(split.body), name=Path(rel).stem,
        description=one_line(str(description)) if description is not None else "",
        updated_at=mtime(path), origin=str(path),
        extra={"file": rel, "globs": _globs_text(meta.get("globs")), "alwaysApply": meta.get("alwaysApply") is True,
               **({"globs_list": [str(g) for g in globs]} if isinstance(globs := meta.get("globs"), list) else {})},
    )


@reader
def read(source: Path, result: ReadResult) -> None:
    if source.is_file():
        memory = guarded(source, result.problems, _read_rule, source, source.name, None, result)
        if memory:
            result.memories.append(memory)
        return
    if (source / ".cursor" / "rules").is_dir():
        source = source / ".cursor" / "rules"  # given the workspace
    for path in iter_files(source, SUFFIX, result.problems):
        rel = path.relative_to(source).as_posix()
        memory = guarded(path, result.problems, _read_rule, path, rel, source, result)
        if memory:
            result.memories.append(memory)


def _scalar(value: str) -> str:
    """A frontmatter value written bare when YAML reads it back unchanged, else double-quoted."""
    if not value:
        return ""
    try:
        if yaml.safe_load(f"k: {value}") == {"k": value}:
            return " " + value
    except yaml.YAMLError:
        pass
    return " " + json.dumps(value, ensure_ascii=False)


def _globs_yaml(memory: Memory) -> str:
    listed = memory.extra.get("globs_list")
    if isinstance(listed, list) and listed:
        return "".join(f"\n  - {_scalar(str(g)).strip()}" for g in listed)
    globs = _globs_text(memory.extra.get("globs"))
    return " " + globs if globs else ""


def render(memory: Memory, body: str | None = None) -> str:
    """A rule: the memory's own description (none is made up), its globs as they were (a
    YAML list stays a list), `alwaysApply` as it was, or true for a memory that has nothing
    else to attach it to; then the body."""
    description = one_line(memory.description)
    always = memory.extra.get("alwaysApply")
    if not isinstance(always, bool):
        always = not _globs_text(memory.extra.get("globs"))
    head = f"---\ndescription:{_scalar(description)}\nglobs:{_globs_yaml(memory)}\n"
    head += f"alwaysApply: {'true' if always else 'false'}\n---\n"
    if body is None:
        return head + "\n" + memory.text.strip() + "\n"
    return head + ("" if body.startswith(("\n", "\r\n")) else "\n") + body


def _head_agrees(head: str, memory: Memory) -> bool:
    """Does the rule's own frontmatter still say what memtui holds (its description)?"""
    split = split_frontmatter(head)
    try:
        meta = rule_frontmatter(split.meta_text) if split.meta_text is not None else {}
    except SourceError:
        return False
    described = meta.get("description")
    if one_line(str(described) if described is not None else "") != one_line(memory.description):
        return False
    # and its scope (SPEC §16): a memtui file whose `paths:` changed gets globs that say so
    listed = memory.extra.get("globs_list")
    wanted = globs_of(listed if isinstance(listed, list) and listed else memory.extra.get("globs"))
    return globs_of(meta.get("globs")) == wanted


def layout(memories: list[Memory], dest: Path, name: Callable[[str], str] = str) -> dict[Path, str]:
    """One rule per memtui file: a rule imported from Cursor goes back to its own path
    (folders and name as they were) with its own frontmatter, byte for byte when nothing
    changed; a memtui file born elsewhere becomes `<its path>.mdc`, its body as it is."""
    used: set[str] = set()
    files: dict[Path, str] = {}
    for group in by_file([m for m in memories if m.text.strip()]):
        first = group[0]
        original = first.extra.get("file")
        where = first.extra.get("memtui_file")
        if safe_rel(original, SUFFIX):
            rel = str(original)
        elif isinstance(where, str) and where.endswith(".md"):
            rel = where[:-3] + SUFFIX
        else:
            rel = slug(first.name or first_line(first.text, 60), fallback="rule") + SUFFIX
        body = kept_body(group)
        if body is None and len(group) > 1:
            body = "\n" + render_sections(group)
        head = first.extra.get("head")
        if body is not None and isinstance(head, str) and _head_agrees(head, first):
            text = head + body
        elif body is not None and head is None and original == rel and kept_body(group) is not None \
                and not one_line(first.description):
            text = body  # a rule that had no frontmatter gets none (issue 40): its text as it was
        else:
            text = render(first, body)
        files[dest.joinpath(*clean_rel(rel, name, used).split("/"))] = text
    return files
