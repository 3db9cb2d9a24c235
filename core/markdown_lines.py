"""A memory file as text and lines (SPEC §2), what the frontmatter reader, the entry parser
and the writers share.

Lines are counted the way markdown-it counts them (`\\r\\n`, `\\r` and `\\n` each end a
line), so an entry's line span addresses the same bytes in the file that the parser saw.
A UTF-8 byte order mark is not a line: it stays in front of line 0 and is written back.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

BOM = "\ufeff"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_EOL = re.compile(r"(\r\n|\r|\n)\Z")


@lru_cache(maxsize=1)
def _parsers() -> tuple[type[Any], MarkdownIt]:
    """PyYAML's safe loader (the C one when built, as python-frontmatter picks it) and a
    block-level CommonMark parser. Imported on first use: a load served from the index cache
    never parses, and `memtui preview` stays quick."""
    import yaml
    from markdown_it import MarkdownIt

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader, MarkdownIt("commonmark").disable(["inline", "text_join"])


class MemoryFileError(ValueError):
    """A file that cannot be used as memory; the message says why (never its text)."""


def split_lines(text: str) -> list[str]:
    """Lines with their terminators, split as markdown-it splits them."""
    return _LINE.findall(text)


def strip_eol(line: str) -> str:
    return _EOL.sub("", line)


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemoryFileError(f"not UTF-8 (invalid byte at offset {exc.start})") from None


def _plain_lines(lines: list[str]) -> list[str]:
    """The lines with the BOM taken off line 0."""
    if lines and lines[0].startswith(BOM):
        return [lines[0][len(BOM) :]] + lines[1:]
    return list(lines)


def _eol_of(line: str, default: str = "\n") -> str:
    m = _EOL.search(line)
    return m.group(1) if m else default


def _file_eol(lines: list[str]) -> str:
    for line in lines:
        m = _EOL.search(line)
        if m:
            return m.group(1)
    return "\n"
