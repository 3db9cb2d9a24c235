"""Frontmatter (SPEC §2, exact): the one splitter, the safe YAML reader, the fields memtui
reads from it, `updatedAt` set to today in place, and a new file's header."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from .markdown_lines import BOM, MemoryFileError, _parsers, split_lines, strip_eol

_FENCE_LINE = re.compile(r"---[ \t]*(?:\r\n|\r|\n)?\Z")
_UPDATED_AT = re.compile(r"^(updatedAt[ \t]*:[ \t]*)(['\"]?)([^'\"#\r\n]*?)(\2)([ \t]*(?:#.*)?)$")


class FrontmatterAliasError(MemoryFileError):
    """Frontmatter YAML that uses anchors or aliases (refused: an alias bomb must not cost memory)."""


MAX_YAML_DEPTH = 100


def _load_yaml(fm_text: str) -> Any:
    """Load frontmatter YAML safely. Anchors and aliases are refused before anything is
    constructed (an alias bomb stays a short event stream); every failure is a MemoryFileError."""
    import yaml

    loader, _ = _parsers()
    depth = 0
    try:
        for event in yaml.parse(fm_text, Loader=loader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise FrontmatterAliasError(
                    "invalid YAML frontmatter: anchors and aliases (&name, *name) are not allowed")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:  # libyaml's composer recurses in C: a deep nest would crash it
                    raise MemoryFileError(
                        f"invalid YAML frontmatter: nested more than {MAX_YAML_DEPTH} levels deep")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.load(fm_text, Loader=loader)
    except MemoryFileError:
        raise
    except yaml.YAMLError as exc:
        if "nesting depth" in str(getattr(exc, "problem", "")):  # libyaml's own limit, met before ours
            raise MemoryFileError(f"invalid YAML frontmatter: nested more than {MAX_YAML_DEPTH} levels deep") from None
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # file line: `---` is line 1
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise MemoryFileError(f"invalid YAML frontmatter{where}: {problem}") from None
    except RecursionError:
        raise MemoryFileError("invalid YAML frontmatter: nested too deeply") from None
    except (ValueError, OverflowError) as exc:
        raise MemoryFileError(f"invalid YAML frontmatter: a value cannot be loaded ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - any loader failure is this file's error, never a crash
        raise MemoryFileError(
            f"invalid YAML frontmatter: a value cannot be loaded ({type(exc).__name__})") from None


def load_frontmatter_yaml(fm_text: str) -> dict[str, Any]:
    """The mapping a frontmatter block holds (empty for an empty block). MemoryFileError for
    YAML that cannot load (anchors, aliases and deep nests included) or is not a mapping."""
    meta = _load_yaml(fm_text)
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise MemoryFileError(f"frontmatter is a {type(meta).__name__}, not a mapping")
    return meta


def frontmatter_span(text: str, lines: Sequence[str]) -> tuple[int, int] | None:
    """SPEC §2 (exact), the one splitter of memtui's files and other tools' files: the lines
    [1, close) are the frontmatter's YAML when the first line (after an optional BOM) is `---`
    (trailing spaces or tabs allowed) and a later line `close` is too; else None."""
    bom = len(BOM) if text.startswith(BOM) else 0
    if not lines or not _FENCE_LINE.match(lines[0], bom):
        return None
    close = next((i for i in range(1, len(lines)) if _FENCE_LINE.match(lines[i])), None)
    return None if close is None else (1, close)  # an opening line alone is Markdown


def parse_frontmatter(text: str, lines: list[str]) -> tuple[dict[str, Any], tuple[int, int] | None, int, int]:
    """Return (meta, frontmatter line range, body start line, body start offset).

    SPEC §2 (exact): frontmatter only when the first line (after an optional BOM) is `---`
    (trailing spaces or tabs allowed) and a later line is too; the lines between are YAML.
    Raises MemoryFileError for YAML that cannot load or is not a mapping.
    """
    span = frontmatter_span(text, lines)
    if span is None:
        return {}, None, 0, len(BOM) if text.startswith(BOM) else 0
    close = span[1]
    meta = load_frontmatter_yaml("".join(lines[1:close]))
    body_offset = sum(len(line) for line in lines[: close + 1])
    return meta, (1, close), close + 1, body_offset


def tags_of(meta: dict[str, Any]) -> tuple[str, ...]:
    value = meta.get("tags")
    if value is None:
        return ()
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, (list, tuple, set)):
        items = [str(v) for v in value if v is not None]
    else:
        items = [str(value)]
    return tuple(t.strip() for t in items if t.strip())


def frontmatter_updated_at(meta: dict[str, Any]) -> float | None:
    """Frontmatter `updatedAt` as epoch seconds (SPEC §2), or None when it gives none."""
    value = meta.get("updatedAt")
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.timestamp()
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp()
    return None


def text_field(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    return "" if value is None else str(value)


def touch_updated_at(lines: list[str], fm_lines: tuple[int, int] | None, today: date) -> list[str]:
    """Set an existing top-level `updatedAt` value to today, keeping quotes and comments,
    whatever the frontmatter's style: a block line is rewritten in place; anywhere else (a
    flow mapping `{type: x, updatedAt: …}`, a value on its own line) only the value's
    characters are replaced, found by the YAML parser."""
    out = list(lines)
    if fm_lines is None:
        return out
    for i in range(fm_lines[0], fm_lines[1]):
        body = strip_eol(out[i])
        m = _UPDATED_AT.match(body)
        if m and (m.group(2) or m.group(3).strip()):  # `updatedAt:` alone: its value is on a later line
            new = f"{m.group(1)}{m.group(2)}{today.isoformat()}{m.group(4)}{m.group(5)}"
            out[i] = new + out[i][len(body) :]
            return out
    return _touch_any_style(out, fm_lines, today)


def _touch_any_style(lines: list[str], fm_lines: tuple[int, int], today: date) -> list[str]:
    import yaml

    fm_text = "".join(lines[fm_lines[0] : fm_lines[1]])
    try:
        _load_yaml(fm_text)  # the same checks as a read (no anchors, no deep nests): else leave it
        root = yaml.compose(fm_text, Loader=_parsers()[0])
    except (MemoryFileError, yaml.YAMLError):
        return lines
    if not isinstance(root, yaml.MappingNode):
        return lines
    value = next((v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "updatedAt"), None)
    if not isinstance(value, yaml.ScalarNode) or value.start_mark.line != value.end_mark.line:
        return lines  # a list, a mapping or a multi-line scalar is not a date memtui rewrites
    quote = value.style if value.style in ("'", '"') else ""
    start, end = value.start_mark.index, value.end_mark.index
    new_text = fm_text[:start] + f"{quote}{today.isoformat()}{quote}" + fm_text[end:]
    return lines[: fm_lines[0]] + split_lines(new_text) + lines[fm_lines[1] :]


def new_file_header(category: str, tags: list[str], today: date, source: str = "manual") -> str:
    import yaml

    meta: dict[str, Any] = {"type": category or "knowledge"}
    if tags:
        meta["tags"] = list(tags)
    meta["updatedAt"] = today
    meta["source"] = source
    # block style, one key a line (what people write, and what touch_updated_at rewrites in
    # place); a list stays on its key's line: `tags: [a, b]`
    lines = [yaml.safe_dump({key: value}, allow_unicode=True, width=10**6,
                            default_flow_style=None if isinstance(value, list) else False).strip()
             for key, value in meta.items()]
    return "---\n" + "\n".join(lines) + "\n---\n\n"
