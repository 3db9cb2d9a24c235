"""Markdown memory files (SPEC §2): frontmatter, entry splitting, line-exact splicing.

The public face of four modules, one job each; callers import from here:

- `markdown_lines`: a file as text and lines (UTF-8, line ends as markdown-it counts them,
  the byte order mark) and the two parsers, loaded on first use.
- `frontmatter`: the one frontmatter splitter, the safe YAML reader, the fields memtui reads,
  `updatedAt` set in place, a new file's header.
- `markdown_entries`: the entries of a file, their sections and line spans (a half-merged
  file's too), an entry's id, and how an entry is found again.
- `markdown_writes`: replace, delete and append, each checked by `check_neighbours` (SPEC §2,
  neighbours are kept), which raises `EditRefused` when they cannot be kept.
"""

from __future__ import annotations

from .frontmatter import (
    MAX_YAML_DEPTH,
    FrontmatterAliasError,
    frontmatter_span,
    frontmatter_updated_at,
    load_frontmatter_yaml,
    new_file_header,
    parse_frontmatter,
    tags_of,
    text_field,
    touch_updated_at,
)
from .markdown_entries import (
    BLOCK_TOKENS,
    LIST_TOKENS,
    ParsedFile,
    RawEntry,
    conflict_regions,
    entry_id,
    find_entry,
    item_text,
    line_ranges,
    parse_blocks,
    parse_text,
)
from .markdown_entries import _split_body as _split_body  # the merge driver reads a window's entries
from .markdown_lines import BOM, MemoryFileError, decode, split_lines, strip_eol
from .markdown_lines import _parsers as _parsers  # the merge driver reuses the loaded parsers
from .markdown_writes import (
    EditRefused,
    append_in_section,
    append_item,
    check_neighbours,
    delete_entries,
    delete_entry,
    replace_entry,
    rest_merged,
)

__all__ = [
    "BLOCK_TOKENS", "BOM", "LIST_TOKENS", "MAX_YAML_DEPTH", "EditRefused", "FrontmatterAliasError", "MemoryFileError",
    "ParsedFile", "RawEntry", "append_in_section", "append_item", "check_neighbours", "conflict_regions", "decode",
    "delete_entries", "delete_entry", "entry_id", "find_entry", "frontmatter_span",
    "frontmatter_updated_at", "item_text", "line_ranges", "load_frontmatter_yaml", "new_file_header", "parse_blocks",
    "parse_frontmatter", "parse_text", "rest_merged", "replace_entry", "split_lines", "strip_eol", "tags_of",
    "text_field", "touch_updated_at",
]
