"""Markdown memory files (SPEC §2): frontmatter, entry splitting, line-exact splicing.

Lines are counted the way markdown-it counts them (`\\r\\n`, `\\r` and `\\n` each end a
line), so an entry's line span addresses the same bytes in the file that the parser saw.
A UTF-8 byte order mark is not a line: it stays in front of line 0 and is written back.

Every writer (`replace_entry`, `delete_entry`, `append_item`) re-parses what it produced
and checks the neighbour invariant of SPEC §2 in one place, `check_neighbours`; when a
blank line at a seam cannot keep the other entries as they were, it raises `EditRefused`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

BOM = "\ufeff"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_EOL = re.compile(r"(\r\n|\r|\n)\Z")
_NEWLINES = re.compile(r"\r\n|\r|\n")
_FENCE_LINE = re.compile(r"---[ \t]*(?:\r\n|\r|\n)?\Z")
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$)[ \t]*")
_CODE_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_UPDATED_AT = re.compile(r"^(updatedAt[ \t]*:[ \t]*)(['\"]?)([^'\"#\r\n]*?)(\2)([ \t]*(?:#.*)?)$")


@lru_cache(maxsize=1)
def _parsers() -> tuple[type[Any], MarkdownIt]:
    """PyYAML's safe loader (the C one when built, as python-frontmatter picks it) and a
    block-level CommonMark parser. Imported on first use: a load served from the index cache
    never parses, and `memtui preview` stays quick."""
    import yaml
    from markdown_it import MarkdownIt

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader, MarkdownIt("commonmark").disable(["inline", "text_join"])


BLOCK_TOKENS = {"paragraph_open", "blockquote_open", "table_open", "html_block", "fence", "code_block"}
LIST_TOKENS = {"bullet_list_open", "ordered_list_open"}


class MemoryFileError(ValueError):
    """A file that cannot be used as memory; the message says why (never its text)."""


class FrontmatterAliasError(MemoryFileError):
    """Frontmatter YAML that uses anchors or aliases (refused: an alias bomb must not cost memory)."""


class EditRefused(MemoryFileError):
    """A change that would alter other entries of the file (SPEC §2, neighbours are kept).
    The message says why in plain words; the caller writes nothing."""


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
    lines: list[str]  # line 0 keeps the BOM, if the file has one
    frontmatter_lines: tuple[int, int] | None  # [start, end) of the YAML between the fences
    body_line: int  # the file line holding the body's first character (the line after the closing fence)
    body_offset: int = 0
    entries: list[RawEntry] = field(default_factory=list)
    # the text these entries were parsed from; writers re-parse a ParsedFile whose text differs
    parsed_from: str | None = field(default=None, repr=False, compare=False)
    # git conflict regions, [start, end) file lines from `<<<<<<<` to `>>>>>>>` (SPEC §8 "Unmerged files")
    conflicts: tuple[tuple[int, int], ...] = ()

    @property
    def single_entry(self) -> bool:
        """True when the body is read as one entry (`name` in the frontmatter, or no top-level list)."""
        return bool(self.entries) and self.entries[0].kind == "whole"


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryFileError(f"not UTF-8 (invalid byte at offset {exc.start})") from None


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


_CONFLICT_OPEN = re.compile(r"<{7}(?:[ \t]|\r\n|\r|\n|\Z)")
_CONFLICT_CLOSE = re.compile(r">{7}(?:[ \t]|\r\n|\r|\n|\Z)")


def conflict_regions(lines: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """The git conflict regions of a file (SPEC §8 "Unmerged files"): [start, end) lines from a
    line that starts with `<<<<<<<` through the next that starts with `>>>>>>>` (to the end of
    the file when none does). A `=======` or `>>>>>>>` line outside such a region is Markdown
    (a heading underline, a nested quote)."""
    regions = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i][len(BOM):] if i == 0 and lines[i].startswith(BOM) else lines[i]
        if _CONFLICT_OPEN.match(line):
            end = next((k + 1 for k in range(i + 1, n) if _CONFLICT_CLOSE.match(lines[k])), n)
            regions.append((i, end))
            i = end
        else:
            i += 1
    return tuple(regions)


def line_ranges(regions: Iterable[tuple[int, int]]) -> str:
    """Conflict regions as 1-based inclusive line ranges for a person: `3-9, 14-20`."""
    return ", ".join(f"{start + 1}-{end}" for start, end in regions)


def parse_text(text: str) -> ParsedFile:
    return parse_blocks(text)[0]


def parse_blocks(text: str) -> tuple[ParsedFile, list[Token]]:
    """`parse_text`, with markdown-it's block tokens of the body (none for a half-merged file),
    for a caller that reuses the parse (the merge driver checks its result against them)."""
    lines = split_lines(text)
    conflicts = conflict_regions(lines) if "<<<<<<<" in text else ()
    if conflicts:
        return _parse_half_merged(text, lines, conflicts), []
    meta, fm_lines, body_line, body_offset = parse_frontmatter(text, lines)
    parsed = ParsedFile(text=text, meta=meta, lines=lines, frontmatter_lines=fm_lines, body_line=body_line,
                        body_offset=body_offset, parsed_from=text)
    tokens = _parsers()[1].parse(text[body_offset:])
    has_list = any(t.type in LIST_TOKENS and t.level == 0 for t in tokens)
    if "name" in meta or not has_list:
        parsed.entries = _whole_body(parsed, tokens)
    else:
        parsed.entries = _split_body(parsed, tokens)
    return parsed, tokens


def _parse_half_merged(text: str, lines: list[str], conflicts: tuple[tuple[int, int], ...]) -> ParsedFile:
    """A file with git conflict markers (SPEC §8 "Unmerged files"): the marked regions are read
    as blank lines (so no marker becomes a heading underline or a lazy continuation), and no
    entry touches a region: an entry that spans one, and a file read as one entry, give none.
    Markers in the frontmatter make the whole file unreadable (which keys hold is unknown)."""
    bom = len(BOM) if text.startswith(BOM) else 0
    if _FENCE_LINE.match(lines[0], bom):
        close = next((i for i in range(1, len(lines)) if _FENCE_LINE.match(lines[i])), None)
        if close is not None and conflicts[0][0] <= close:
            inside = [r for r in conflicts if r[0] <= close]
            raise MemoryFileError(f"unresolved git conflict markers in the frontmatter (lines {line_ranges(inside)}); "
                                  "finish the merge")
    blank = list(lines)
    for start, end in conflicts:
        for i in range(start, end):
            blank[i] = (BOM if i == 0 and bom else "") + _eol_of(lines[i], "")
    shadow = parse_text("".join(blank))
    parsed = ParsedFile(text=text, meta=shadow.meta, lines=lines, frontmatter_lines=shadow.frontmatter_lines,
                        body_line=shadow.body_line, body_offset=sum(len(line) for line in lines[:shadow.body_line])
                        if shadow.body_line else bom, parsed_from=text, conflicts=conflicts)
    if not shadow.single_entry:
        parsed.entries = [e for e in shadow.entries
                          if not any(e.line_start < end and start < e.line_end for start, end in conflicts)]
    return parsed


def _whole_body(parsed: ParsedFile, tokens: list[Token]) -> list[RawEntry]:
    # body line i is file line body_line + i
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


def _item_head(first_line: str) -> tuple[str, int]:
    """A list item's marker prefix (indent, marker, following spaces) and its content indent:
    the prefix's width, or the marker's width plus one when the item's first line is empty."""
    m = _LIST_MARKER.match(first_line)
    prefix = m.group(0) if m else ""
    if not first_line[len(prefix) :].strip():
        return prefix, len(prefix.rstrip(" \t")) + 1
    return prefix, len(prefix)


def _dedent(line: str, width: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, width) :]


def item_text(lines: Sequence[str]) -> str:
    """The text of a list item from its source lines (without line ends): the marker removed
    from the first line, the item's content indent (or what a line has of it) from the others."""
    prefix, width = _item_head(lines[0])
    return "\n".join([lines[0][len(prefix) :]] + [_dedent(line, width) for line in lines[1:]]).strip()


def _split_body(parsed: ParsedFile, tokens: list[Token]) -> list[RawEntry]:
    entries: list[RawEntry] = []
    section = ""
    plain = _plain_lines(parsed.lines)  # once: a copy per entry made a long file quadratic
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
        lines = [strip_eol(line) for line in plain[span[0] : span[1]]]
        text = item_text(lines) if kind == "item" else "\n".join(lines).strip()
        if text:
            entries.append(RawEntry(text, section, span[0], span[1], kind))
    return entries


def _plain_lines(lines: list[str]) -> list[str]:
    """The lines with the BOM taken off line 0."""
    if lines and lines[0].startswith(BOM):
        return [lines[0][len(BOM) :]] + lines[1:]
    return list(lines)


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
            value = value.replace(tzinfo=UTC)
        return value.timestamp()
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp()
    return None


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


def _fresh(parsed: ParsedFile) -> ParsedFile:
    """`parsed` itself when its entries were parsed from its text, else a new parse of the text.
    A half-merged file is refused: memtui changes no byte of it until the merge is finished."""
    fresh = parsed if parsed.parsed_from is not None and parsed.parsed_from == parsed.text else parse_text(parsed.text)
    if fresh.conflicts:
        raise EditRefused(f"the file is half-merged (git conflict markers at lines {line_ranges(fresh.conflicts)}); "
                          "finish the merge (keep what you want and delete the marker lines) before memtui "
                          "changes it")
    return fresh


def find_entry(parsed: ParsedFile, line_start: int, text: str) -> int | None:
    """The index in `parsed.entries` of the entry that starts at `line_start` with `text`: how
    an entry read earlier is found again in a file (by place and text, never by place alone)."""
    for i, entry in enumerate(parsed.entries):
        if entry.line_start == line_start and entry.text == text:
            return i
    return None


def _locate(parsed: ParsedFile, raw: RawEntry) -> int:
    found = find_entry(parsed, raw.line_start, raw.text)
    if found is None:
        raise MemoryFileError("the entry is no longer where it was; reload and try again")
    return found


def _normalise(text: str) -> list[str]:
    """An entry text as lines: line ends unified, surrounding whitespace dropped (an entry's
    text is always read stripped)."""
    lines = _NEWLINES.sub("\n", text).strip().split("\n")
    if lines == [""]:
        raise ValueError("an entry cannot be empty; delete it instead")
    return lines


def _render(plain: list[str], entry: RawEntry, new: list[str]) -> list[str]:
    """The file lines for `entry` holding `new`: a list item keeps its marker and indents its
    other lines by its content indent; another block keeps the first line's indentation."""
    old_first = strip_eol(plain[entry.line_start])
    if entry.kind == "item":
        prefix, _ = _item_head(old_first)
        head = prefix if prefix.endswith((" ", "\t")) else (prefix or "-") + " "
        pad = " " * len(head)
        text_lines = [head + new[0]] + [(pad + line if line else "") for line in new[1:]]
    else:
        lead = old_first[: len(old_first) - len(old_first.lstrip())]
        text_lines = [lead + new[0]] + new[1:]
    eol = _eol_of(plain[entry.line_start], _file_eol(plain))
    last_eol = _eol_of(plain[entry.line_end - 1], "")
    return [line + eol for line in text_lines[:-1]] + [text_lines[-1] + last_eol]


def _with_seams(before: list[str], middle: list[str], after: list[str], eol: str) -> list[list[str]]:
    """`before + middle + after`, then the same with one blank line at the top seam, at the
    bottom seam, at both: the order in which they are tried (fewest changes first)."""
    tops = [False, True] if before or middle else [False]
    bottoms = [False, True] if after and middle else [False]
    out = []
    for top in tops:
        for bottom in bottoms:
            out.append(before + ([eol] if top else []) + middle + ([eol] if bottom else []) + after)
    out.sort(key=lambda lines: len(lines))  # none, one seam, both seams
    return out


def _keep_first(before: ParsedFile, candidates: list[list[str]], bom: str, op: str, index: int | None,
                new_text: str | None) -> str:
    first_error: EditRefused | None = None
    # the rest of a file may become one entry only when no placement keeps it as it was
    for allow_merge in ([False, True] if op == "delete" else [False]):
        for lines in candidates:
            text = bom + "".join(lines)
            try:
                check_neighbours(before, text, op, index, new_text, allow_merge=allow_merge)
            except EditRefused as exc:
                first_error = first_error or exc
                continue
            return text
    raise EditRefused(_refusal_reason(before, op, index, new_text) or str(first_error))


def replace_entry(parsed: ParsedFile, entry: RawEntry, new_text: str, today: date) -> str:
    """The file with `entry` holding `new_text`: only its lines change (and `updatedAt`), plus a
    blank line at a seam where one is needed. Unchanged text changes no byte. Raises
    EditRefused when the other entries cannot be kept (SPEC §2)."""
    before = _fresh(parsed)
    index = _locate(before, entry)
    entry = before.entries[index]
    new = _normalise(new_text)
    target = "\n".join(new)
    if target == entry.text:
        return before.text
    bom = BOM if before.text.startswith(BOM) else ""
    plain = touch_updated_at(_plain_lines(before.lines), before.frontmatter_lines, today)
    middle = _render(plain, entry, new)
    candidates = _with_seams(plain[: entry.line_start], middle, plain[entry.line_end :], _file_eol(plain))
    return _keep_first(before, candidates, bom, "replace", index, target)


def delete_entry(parsed: ParsedFile, entry: RawEntry, today: date) -> str:
    """The file without `entry`'s lines (and `updatedAt` set to today), with a blank line where
    the lines around it would otherwise join. Raises EditRefused when the other entries cannot
    be kept; deleting the last top-level list item is allowed (see `delete_merges_rest`)."""
    before = _fresh(parsed)
    index = _locate(before, entry)
    entry = before.entries[index]
    bom = BOM if before.text.startswith(BOM) else ""
    plain = touch_updated_at(_plain_lines(before.lines), before.frontmatter_lines, today)
    head, tail = plain[: entry.line_start], plain[entry.line_end :]
    candidates = [head + tail]
    if tail:
        candidates.append(head + [_file_eol(plain)] + tail)
    return _keep_first(before, candidates, bom, "delete", index, None)


def delete_entries(parsed: ParsedFile, entries: Iterable[RawEntry], today: date) -> str:
    """Delete several entries of one file, each checked as `delete_entry` checks one."""
    current = _fresh(parsed)
    for entry in sorted(entries, key=lambda e: e.line_start, reverse=True):
        current = parse_text(delete_entry(current, entry, today))
    return current.text


def rest_merged(parsed: ParsedFile, after: str) -> bool:
    """True when `after`, the file once entries are deleted from `parsed`, reads as one entry
    while `parsed` did not: the last top-level list item went while other blocks remain, so
    the rest of the body becomes one entry (SPEC §2's one exception; a confirmation says so)."""
    return not _fresh(parsed).single_entry and parse_text(after).single_entry


def delete_merges_rest(parsed: ParsedFile, entry: RawEntry) -> bool:
    """`rest_merged` for deleting `entry` alone (False when that delete is refused)."""
    try:
        after = delete_entry(parsed, entry, date.today())
    except MemoryFileError:
        return False
    return rest_merged(parsed, after)


def _next_marker(before: ParsedFile) -> str:
    """`- `, or the marker of the file's last list item when that is `*`, `+` or a number."""
    last = before.entries[-1] if before.entries else None
    if last is None or last.kind != "item":
        return "- "
    m = re.match(r"[ \t]*([-+*]|(\d{1,9})([.)]))", strip_eol(_plain_lines(before.lines)[last.line_start]))
    if m is None:
        return "- "
    if m.group(2) is None:
        return m.group(1) + " "
    number = int(m.group(2)) + 1
    return f"{number}{m.group(3)} " if number < 10**9 else "- "


def append_item(parsed: ParsedFile | None, text: str, today: date, header: str = "") -> str:
    """Append a list item holding `text` (continuation lines indented) at the end of a file, or
    start a new file with `header` (its frontmatter) when `parsed` is None. Raises EditRefused
    when the item would not read back as its own entry or would change another one."""
    new = _normalise(text)
    target = "\n".join(new)
    if parsed is None:
        before = parse_text(header)
        marker = "- "
    else:
        before = _fresh(parsed)
        marker = _next_marker(before)
    pad = " " * len(marker)
    bom = BOM if before.text.startswith(BOM) else ""
    plain = _plain_lines(before.lines)
    if parsed is not None:
        plain = touch_updated_at(plain, before.frontmatter_lines, today)
    eol = _file_eol(plain)
    if plain and not _EOL.search(plain[-1]):
        plain[-1] += eol
    item = [marker + new[0] + eol] + [(pad + line if line else "") + eol for line in new[1:]]
    candidates = [plain + item]
    if plain:
        candidates.append(plain + [eol] + item)
    return _keep_first(before, candidates, bom, "append", None, target)


def append_in_section(parsed: ParsedFile | None, text: str, today: date, section: str, header: str = "") -> str:
    """Add a list item holding `text` to the section headed `section`: after that section's
    last entry (the last such section when several share the name), right under its heading
    when it has none yet, or under a new `## section` heading at the end of the file. A new
    file (`parsed` None) starts with `header`. Raises EditRefused as `append_item` does."""
    new = _normalise(text)
    target = "\n".join(new)
    before = parse_text(header) if parsed is None else _fresh(parsed)
    bom = BOM if before.text.startswith(BOM) else ""
    plain = _plain_lines(before.lines)
    if parsed is not None:
        plain = touch_updated_at(plain, before.frontmatter_lines, today)
    eol = _file_eol(plain)
    if plain and not _EOL.search(plain[-1]):
        plain[-1] += eol
    inside = [i for i, e in enumerate(before.entries) if e.section == section]
    at: int | None = None  # the line the item goes before, and the entry index it takes
    if inside:
        last = before.entries[inside[-1]]
        at, index = last.line_end, inside[-1] + 1
        marker = _next_marker(parse_text("".join(plain[: last.line_end]))) if last.kind == "item" else "- "
    else:
        heading = re.compile(r" {0,3}#{1,6}[ \t]+" + re.escape(section) + r"(?:[ \t]+#+)?[ \t]*$")
        found = [i for i, line in enumerate(plain) if i >= before.body_line and heading.match(strip_eol(line))]
        if found:
            at = found[-1] + 1
            index = sum(1 for e in before.entries if e.line_start < at)
        marker = "- "
    pad = " " * len(marker)
    item = [marker + new[0] + eol] + [(pad + line if line else "") + eol for line in new[1:]]
    if at is None:  # no such heading: a new one at the end
        head = [eol] if plain and plain[-1].strip() else []
        lines = plain + head + [f"## {section}" + eol, eol] + item
        return _keep_first(before, [lines], bom, "append", None, target)
    candidates = _with_seams(plain[:at], item, plain[at:], eol)
    first_error: EditRefused | None = None
    for lines in candidates:
        text_out = bom + "".join(lines)
        try:
            check_neighbours(before, text_out, "insert", index, target)
        except EditRefused as exc:
            first_error = first_error or exc
            continue
        return text_out
    raise EditRefused(str(first_error))


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


# ----------------------------------------------------------------------------- the neighbour check


def check_neighbours(before: ParsedFile, after_text: str, op: str, index: int | None = None,
                     new_text: str | None = None, *, allow_merge: bool = False) -> ParsedFile:
    """SPEC §2, neighbours are kept (exact): re-parse `after_text` and check that every entry of
    `before` other than the one deleted/replaced (`index`) has the same text, section and order,
    and that the replaced or appended entry (op "replace" / "append") reads back as `new_text`.
    The one exception (with `allow_merge`): deleting the file's last top-level list item may
    turn the rest into one entry.
    Returns the re-parsed file; raises EditRefused saying why."""
    try:
        after = parse_text(after_text)
    except MemoryFileError as exc:
        raise EditRefused(f"the file would no longer load ({exc})") from None
    if after.frontmatter_lines != before.frontmatter_lines:
        raise EditRefused("the file's first lines would be read as frontmatter")
    old: list[tuple[str, str | None]] = [(e.text, e.section) for e in before.entries]
    if op == "delete":
        assert index is not None
        items = [e for e in before.entries if e.kind == "item"]
        if allow_merge and items == [before.entries[index]] and after.single_entry:
            return after  # the last top-level list item went: the rest is one entry (allowed)
        del old[index]
    elif op == "replace":
        assert index is not None and new_text is not None
        kind = before.entries[index].kind
        old[index] = (new_text, None if kind == "whole" else old[index][1])
    elif op == "append":
        assert new_text is not None
        old.append((new_text, None))
    elif op == "insert":  # a new entry at `index` (append_in_section)
        assert index is not None and new_text is not None
        old.insert(index, (new_text, None))
    else:
        raise ValueError(f"unknown edit {op!r}")
    got = [(e.text, e.section) for e in after.entries]
    if len(got) != len(old) or any(
        text != g_text or (section is not None and section != g_section)
        for (text, section), (g_text, g_section) in zip(old, got)
    ):
        raise EditRefused("the change would alter other entries of the file")
    return after


def _refusal_reason(before: ParsedFile, op: str, index: int | None, new_text: str | None) -> str:
    """Why a change cannot keep its neighbours, in plain words (best effort)."""
    if op == "delete":
        return "deleting this entry would change how the entries around it are read"
    if op == "append" and before.single_entry:
        return ("this file is read as one entry (it has a `name` in its frontmatter or no top-level list), "
                "so an added item would change that entry; add it to another file")
    assert new_text is not None
    fences = sum(1 for line in new_text.split("\n") if _CODE_FENCE.match(line))
    if fences % 2:
        return "the new text opens a code fence (``` or ~~~) without closing it, so it would take in the lines after it"
    kind = "item" if op == "append" else before.entries[index].kind  # type: ignore[index]
    if kind == "whole":
        return "the new text would split this file into several entries (a top-level list makes each item an entry)"
    tokens = _parsers()[1].parse(("- " + new_text.replace("\n", "\n  ")) if kind == "item" else new_text)
    top = [t for t in tokens if t.level == 0 and t.nesting >= 0]
    if kind == "item":
        if any(t.type == "hr" for t in top):
            return "the new text would turn the list item's line into a thematic break (a line like `- ---`)"
        if op == "append":
            return "the end of the file would take the new item in (for example a code fence that is never closed)"
        return "the new text would not stay inside one list item, or would change the entries after it"
    if any(t.type == "heading_open" for t in top):
        return ("the new text contains a heading (a `#` line, or a line underlined with === or ---); "
                "headings title sections, they are not entries")
    if any(t.type == "hr" for t in top):
        return "the new text contains a thematic break (a line like `---`), which is not part of any entry"
    if any(t.type in LIST_TOKENS for t in top):
        return "the new text is a list, whose items would be read as separate entries"
    if len([t for t in top if t.type in BLOCK_TOKENS]) > 1:
        return ("the new text has several blocks (for example paragraphs separated by a blank line), "
                "which this file would read as separate entries")
    return "the change would alter how the other entries of the file are read"
