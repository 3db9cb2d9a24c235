"""One frontmatter splitter (ARCHITECTURE "Simple again"): another tool's file reads its
frontmatter by the memory files' own rule (SPEC §2), a UTF-8 BOM and CRLF included."""

from __future__ import annotations

import pytest

from memtui.core import markdown as md
from memtui.core.interop._files import frontmatter, split_frontmatter


@pytest.mark.parametrize("text", [
    "---\nglobs: src/**\n---\nbody\n",
    "\ufeff---\nglobs: src/**\n---\nbody\n",
    "---  \r\nglobs: src/**\r\n--- \r\nbody\r\n",
    "---\n---\nbody\n",
    "\n---\nglobs: x\n---\n",
    "-----\nglobs: x\n---\n",
    "---\nglobs: x\n",
])
def test_other_tools_files_split_as_memory_files_do(text):
    lines = md.split_lines(text)
    span = md.frontmatter_span(text, lines)
    split = split_frontmatter(text)
    assert (split.meta_text is None) == (span is None)
    meta, _, _, body_offset = md.parse_frontmatter(text, lines)
    assert split.body == text[body_offset:] if span is not None else split.body == text
    if span is not None:
        assert frontmatter(text)[0] == meta


def test_a_bom_before_the_frontmatter_is_no_longer_read_as_body():
    meta, body = frontmatter("\ufeff---\nglobs: src/api/**\nalwaysApply: false\n---\n- typed errors\n")
    assert meta == {"globs": "src/api/**", "alwaysApply": False} and body == "- typed errors\n"
