"""Markdown memory files (SPEC §2): frontmatter, entry splitting, line-exact splicing.

Lines are counted the way markdown-it counts them (`\\r\\n`, `\\r` and `\\n` each end a
line), so an entry's line span addresses the same bytes in the file that the parser saw.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any

from functools import lru_cache

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_EOL = re.compile(r"(\r\n|\r|\n)\Z")
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$)[ \t]*")
_UPDATED_AT = re.compile(r"^(updatedAt[ \t]*:[ \t]*)(['\"]?)([^'\"#\r\n]*?)(\2)([ \t]*(?:#.*)?)$")



@lru_cache(maxsize=1)
def _parsers():
    """python-frontmatter's YAML handler and a block-level CommonMark parser. Imported on first
    use: a load served from the index cache never parses, and `memtui preview` stays quick."""
    from frontmatter.default_handlers import YAMLHandler
    from markdown_it import MarkdownIt

    return YAMLHandler(), MarkdownIt("commonmark").disable(["inline", "text_join"])

BLOCK_TOKENS = {"paragraph_open", "blockquote_open", "table_open", "html_block", "fence", "code_block"}
LIST_TOKENS = {"bullet_list_open", "ordered_list_open"}


class MemoryFileError(ValueError):
    """A file that cannot be used as memory; the message says why (never its text)."""


def split_lines(text: str) -> list[str]:
    """Lines with their terminators, split as markdown-it splits them."""
    return _LINE.findall(text)


def strip_eol(line: str) -> str:
    return _EOL.sub("", line)


@dataclass(frozen=True)
class RawEntry:
    """An entry as found in a file, before it is given a layer and an id."""

    text: str
    section: str
    line_start: int
    line_end: int
    kind: str  # whole | item | block


@dataclass
class ParsedFile:
    text: str
    meta: dict[str, Any]
    lines: list[str]
    frontmatter_lines: tuple[int, int] | None  # [start, end) of the YAML between the fences
    body_line: int  # the file line holding the body's first character (the rest of the closing fence's line)
    body_offset: int = 0
    entries: list[RawEntry] = field(default_factory=list)


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryFileError(f"not UTF-8 (invalid byte at offset {exc.start})") from None


def _line_index(starts: list[int], pos: int) -> int:
    return bisect.bisect_right(starts, pos) - 1


def parse_frontmatter(text: str, lines: list[str]) -> tuple[dict[str, Any], tuple[int, int] | None, int, int]:
    """Return (meta, frontmatter line range, body start line, body start offset).

    Detection follows python-frontmatter (leading whitespace ignored, `---` fences); the
    YAML is loaded by its handler. Raises MemoryFileError for invalid or non-mapping YAML.
    """
    import yaml

    handler, _ = _parsers()
    stripped = text.strip()
    if not handler.detect(stripped):
        return {}, None, 0, 0
    fences = list(handler.FM_BOUNDARY.finditer(stripped))
    if len(fences) < 2 or fences[0].start() != 0:
        return {}, None, 0, 0  # an opening rule with no closing one is Markdown, not frontmatter
    lead = len(text) - len(text.lstrip())
    fm_text = stripped[fences[0].end() : fences[1].start()]
    try:
        meta = handler.load(fm_text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at frontmatter line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise MemoryFileError(f"invalid YAML frontmatter{where}: {problem}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise MemoryFileError(f"frontmatter is a {type(meta).__name__}, not a mapping")
    starts = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line)
    open_line = _line_index(starts, lead + fences[0].start())
    close_line = _line_index(starts, lead + fences[1].start())
    body_offset = lead + fences[1].end()
    body_line = _line_index(starts, body_offset) if body_offset < len(text) else len(lines)
    return meta, (open_line + 1, close_line), body_line, body_offset


def parse_text(text: str) -> ParsedFile:
    lines = split_lines(text)
    meta, fm_lines, body_line, body_offset = parse_frontmatter(text, lines)
    parsed = ParsedFile(text=text, meta=meta, lines=lines, frontmatter_lines=fm_lines, body_line=body_line,
                        body_offset=body_offset)
    body = text[body_offset:]
    tokens = _parsers()[1].parse(body)
    has_list = any(t.type in LIST_TOKENS and t.level == 0 for t in tokens)
    if "name" in meta or not has_list:
        parsed.entries = _whole_body(parsed, tokens)
    else:
        parsed.entries = _split_body(parsed, tokens)
    return parsed


def _whole_body(parsed: ParsedFile, tokens) -> list[RawEntry]:
    # body line i is file line body_line + i; line 0 is only what follows the closing fence
    body = [strip_eol(line) for line in split_lines(parsed.text[parsed.body_offset :])]
    filled = [i for i, line in enumerate(body) if line.strip()]
    if not filled:
        return []
    first, last = filled[0], filled[-1]
    text = "\n".join(body[first : last + 1]).strip()
    section = next(
        (tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.level == 0), ""
    )
    start = parsed.body_line + first
    return [RawEntry(text, section, start, parsed.body_line + last + 1, "whole")]


def _span(parsed: ParsedFile, begin: int, end: int) -> tuple[int, int] | None:
    """Absolute [start, end) of body lines [begin, end), trailing blank lines dropped."""
    start = parsed.body_line + begin
    stop = min(parsed.body_line + end, len(parsed.lines))
    while stop > start and not parsed.lines[stop - 1].strip():
        stop -= 1
    return (start, stop) if stop > start else None


def _split_body(parsed: ParsedFile, tokens) -> list[RawEntry]:
    entries: list[RawEntry] = []
    section = ""
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0:
            section = tokens[i + 1].content
            continue
        if tok.type == "list_item_open" and tok.level == 1:
            kind = "item"
        elif tok.type in BLOCK_TOKENS and tok.level == 0:
            kind = "block"
        else:
            continue
        if tok.map is None:
            continue
        span = _span(parsed, tok.map[0], tok.map[1])
        if span is None:
            continue
        lines = [strip_eol(line) for line in parsed.lines[span[0] : span[1]]]
        if kind == "item":
            lines[0] = _LIST_MARKER.sub("", lines[0], count=1)
        text = "\n".join(lines).strip()
        if text:
            entries.append(RawEntry(text, section, span[0], span[1], kind))
    return entries


# ----------------------------------------------------------------------------- fields


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
            value = value.replace(tzinfo=timezone.utc)
        return value.timestamp()
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc).timestamp()
    return None


def updated_at_of(meta: dict[str, Any], mtime: float) -> float:
    """Frontmatter `updatedAt` as epoch seconds, else the file's mtime."""
    value = frontmatter_updated_at(meta)
    return mtime if value is None else value


def text_field(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    return "" if value is None else str(value)


def entry_id(layer: str, rel_path: str, text: str, occurrence: int) -> str:
    digest = hashlib.sha1(f"{layer}\0{rel_path}\0{occurrence}\0{text}".encode()).hexdigest()
    return digest[:16]


# ----------------------------------------------------------------------------- splicing


def _eol_of(line: str, default: str = "\n") -> str:
    m = _EOL.search(line)
    return m.group(1) if m else default


def _file_eol(lines: list[str]) -> str:
    for line in lines:
        m = _EOL.search(line)
        if m:
            return m.group(1)
    return "\n"


def touch_updated_at(lines: list[str], fm_lines: tuple[int, int] | None, today: date) -> list[str]:
    """Set an existing top-level `updatedAt` value to today, keeping quotes and comments."""
    out = list(lines)
    if fm_lines is None:
        return out
    for i in range(fm_lines[0], fm_lines[1]):
        body = strip_eol(out[i])
        m = _UPDATED_AT.match(body)
        if m:
            new = f"{m.group(1)}{m.group(2)}{today.isoformat()}{m.group(4)}{m.group(5)}"
            out[i] = new + out[i][len(body) :]
            break
    return out


def _entry_lines(parsed: ParsedFile, entry: RawEntry, new_text: str) -> list[str]:
    old_first = strip_eol(parsed.lines[entry.line_start])
    eol = _eol_of(parsed.lines[entry.line_start], _file_eol(parsed.lines))
    new_lines = new_text.strip("\n").split("\n") if new_text.strip() else []
    if not new_lines:
        raise ValueError("an entry cannot be empty; delete it instead")
    if entry.kind == "item":
        prefix = _LIST_MARKER.match(old_first)
        head = prefix.group(0) if prefix else "- "
        if not head.endswith((" ", "\t")):
            head += " "
        indent = " " * len(head)
        new_lines = [head + new_lines[0]] + [
            (line if not line.strip() or line.startswith((" ", "\t")) else indent + line) for line in new_lines[1:]
        ]
    else:
        lead = old_first[: len(old_first) - len(old_first.lstrip(" "))]
        new_lines = [lead + new_lines[0]] + new_lines[1:]
    last_eol = _eol_of(parsed.lines[entry.line_end - 1], "")
    out = [line + eol for line in new_lines[:-1]] + [new_lines[-1] + last_eol]
    return out


def replace_entry(parsed: ParsedFile, entry: RawEntry, new_text: str, today: date) -> str:
    lines = touch_updated_at(parsed.lines, parsed.frontmatter_lines, today)
    lines[entry.line_start : entry.line_end] = _entry_lines(parsed, entry, new_text)
    return "".join(lines)


def delete_entry(parsed: ParsedFile, entry: RawEntry, today: date) -> str:
    lines = touch_updated_at(parsed.lines, parsed.frontmatter_lines, today)
    del lines[entry.line_start : entry.line_end]
    return "".join(lines)


def append_item(parsed: ParsedFile | None, text: str, today: date, header: str = "") -> str:
    """Append `- text` (continuation lines indented) at the end of a file, or start a new
    file with `header` (its frontmatter) when `parsed` is None."""
    body = text.strip().split("\n")
    item = ["- " + body[0]] + [("  " + line if line.strip() else "") for line in body[1:]]
    if parsed is None:
        return header + "\n".join(item) + "\n"
    lines = touch_updated_at(parsed.lines, parsed.frontmatter_lines, today)
    eol = _file_eol(lines)
    if lines and not _EOL.search(lines[-1]):
        lines[-1] += eol
    return "".join(lines) + eol.join(item) + eol


def new_file_header(category: str, tags: list[str], today: date) -> str:
    import yaml

    meta: dict[str, Any] = {"type": category or "knowledge"}
    if tags:
        meta["tags"] = list(tags)
    meta["updatedAt"] = today
    meta["source"] = "manual"
    dumped = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=None).strip()
    return f"---\n{dumped}\n---\n\n"
