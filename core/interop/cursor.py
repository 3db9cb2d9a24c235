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
`globs` (a string) and `alwaysApply` (a bool) are kept in `extra`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from . import Memory, ReadResult
from ._files import (
    SourceError,
    first_heading,
    first_line,
    guarded,
    iter_files,
    load_yaml_mapping,
    missing_source,
    mtime,
    one_line,
    read_text,
    slug,
    split_frontmatter,
    unique_stem,
    write_all,
)

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


def _read_rule(path: Path, rel: str, root: Path | None) -> Memory:
    text = read_text(path, root)
    split = split_frontmatter(text)
    meta = rule_frontmatter(split.meta_text) if split.meta_text is not None else {}
    body = split.body.strip()
    if not body:
        raise SourceError("no rule text after the frontmatter")
    description = meta.get("description")
    return Memory(
        text=body, layer="project", section=first_heading(split.body), name=Path(rel).stem,
        description=one_line(str(description)) if description is not None else "",
        updated_at=mtime(path), origin=str(path),
        extra={"file": rel, "globs": _globs_text(meta.get("globs")), "alwaysApply": meta.get("alwaysApply") is True},
    )


def read(source: Path) -> ReadResult:
    result = ReadResult()
    problem = missing_source(source)
    if problem:
        result.problems.append(problem)
        return result
    if source.is_file():
        memory = guarded(source, result.problems, _read_rule, source, source.name, None)
        if memory:
            result.memories.append(memory)
        return result
    if (source / ".cursor" / "rules").is_dir():
        source = source / ".cursor" / "rules"  # given the workspace
    for path in iter_files(source, SUFFIX, result.problems):
        rel = path.relative_to(source).as_posix()
        memory = guarded(path, result.problems, _read_rule, path, rel, source)
        if memory:
            result.memories.append(memory)
    return result


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


def render(memory: Memory) -> str:
    description = one_line(memory.description) or first_line(memory.text)
    globs = _globs_text(memory.extra.get("globs"))
    always = memory.extra.get("alwaysApply")
    if not isinstance(always, bool):
        always = not globs  # a memory with nothing to attach it to applies everywhere
    head = f"---\ndescription:{_scalar(description)}\nglobs:{' ' + globs if globs else ''}\n"
    return head + f"alwaysApply: {'true' if always else 'false'}\n---\n\n" + memory.text.strip() + "\n"


def write(memories: list[Memory], dest: Path) -> list[Path]:
    used: set[str] = set()
    files: dict[Path, str] = {}
    for memory in memories:
        original = str(memory.extra.get("file", ""))
        base = slug(Path(original).stem, fallback="") if original.endswith(SUFFIX) and "globs" in memory.extra else ""
        stem = unique_stem(base or slug(memory.name or first_line(memory.text, 60), fallback="rule"), used)
        files[dest / f"{stem}{SUFFIX}"] = render(memory)
    return write_all(files)
