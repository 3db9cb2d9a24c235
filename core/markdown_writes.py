"""Writing entries back (SPEC §2, neighbours are kept): a replace or a delete changes only its
entry's lines, an append only adds the new item's (and a heading for a new section); each
sets an existing `updatedAt` to today and adds a blank line at a seam where one is needed.

Every writer re-parses what it produced and checks the neighbour invariant in one place,
`check_neighbours`; when a blank line at a seam cannot keep the other entries as they were, it
raises `EditRefused`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from .frontmatter import touch_updated_at
from .markdown_entries import BLOCK_TOKENS, LIST_TOKENS, ParsedFile, RawEntry, _item_head, find_entry, line_ranges, parse_text
from .markdown_lines import _EOL, BOM, MemoryFileError, _eol_of, _file_eol, _parsers, _plain_lines, strip_eol

_NEWLINES = re.compile(r"\r\n|\r|\n")
_CODE_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class EditRefused(MemoryFileError):
    """A change that would alter other entries of the file (SPEC §2, neighbours are kept).
    The message says why in plain words; the caller writes nothing."""


def _fresh(parsed: ParsedFile) -> ParsedFile:
    """`parsed` itself when its entries were parsed from its text, else a new parse of the text.
    A half-merged file is refused: memtui changes no byte of it until the merge is finished."""
    fresh = parsed if parsed.parsed_from is not None and parsed.parsed_from == parsed.text else parse_text(parsed.text)
    if fresh.conflicts:
        raise EditRefused(f"the file is half-merged (git conflict markers at lines {line_ranges(fresh.conflicts)}); "
                          "finish the merge (keep what you want and delete the marker lines) before memtui "
                          "changes it")
    return fresh


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
    """The first candidate whose text keeps the neighbours (`check_neighbours`); else EditRefused
    saying why in plain words."""
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
    be kept, with SPEC §2's one exception: deleting the file's last top-level list item may turn
    the rest of the body into one entry (`rest_merged` tells the caller)."""
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
    bom, plain, eol = _lines_to_append_to(before, parsed is not None, today)
    item = [marker + new[0] + eol] + [(pad + line if line else "") + eol for line in new[1:]]
    candidates = [plain + item]
    if plain:
        candidates.append(plain + [eol] + item)
    return _keep_first(before, candidates, bom, "append", None, target)


def _lines_to_append_to(before: ParsedFile, existing: bool, today: date) -> tuple[str, list[str], str]:
    """(BOM, lines, line end) of a file an item is added to: its lines without the BOM, its
    `updatedAt` set to `today` when the file exists, the last line ended."""
    bom = BOM if before.text.startswith(BOM) else ""
    plain = _plain_lines(before.lines)
    if existing:
        plain = touch_updated_at(plain, before.frontmatter_lines, today)
    eol = _file_eol(plain)
    if plain and not _EOL.search(plain[-1]):
        plain[-1] += eol
    return bom, plain, eol


def append_in_section(parsed: ParsedFile | None, text: str, today: date, section: str, header: str = "") -> str:
    """Add a list item holding `text` to the section headed `section`: after that section's
    last entry (the last such section when several share the name), right under its heading
    when it has none yet, or under a new `## section` heading at the end of the file. A new
    file (`parsed` None) starts with `header`. Raises EditRefused as `append_item` does."""
    new = _normalise(text)
    target = "\n".join(new)
    before = parse_text(header) if parsed is None else _fresh(parsed)
    bom, plain, eol = _lines_to_append_to(before, parsed is not None, today)
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


# ----------------------------------------------------------------------------- the neighbour check


def check_neighbours(before: ParsedFile, after_text: str, op: str, index: int | None = None,
                     new_text: str | None = None, *, allow_merge: bool = False) -> ParsedFile:
    """SPEC §2, neighbours are kept (exact): re-parse `after_text` and check that every entry of
    `before` other than the one deleted or replaced (`index`) has the same text, section and order,
    and that the replaced, appended or inserted entry (op "replace", "append", or "insert" at
    `index`) reads back as `new_text`.
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
