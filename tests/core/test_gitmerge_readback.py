"""The merge driver reads its result back by parsing only the joins (core/gitmerge/readback.py):
for any body spliced from runs of parsed versions' lines, with blank lines put between some
runs, it must find exactly the entries and sections `markdown.parse_text` finds. Seeded
random bodies from the constructs where a join changes the reading: lazy continuation lines,
setext underlines, fences and HTML blocks left open, indented code, quotes, ordered lists,
list marker changes, tabs, reference definitions."""

from __future__ import annotations

import random

import pytest

from memtui.core import markdown
from memtui.core.gitmerge import readback
from memtui.core.gitmerge.parse import Side, read_version

PIECES = [
    "- a\n", "- b\n  more of b\n", "* star\n", "+ plus\n", "1. one\n", "2) two\n", "\n", "\n\n", "## Heading\n",
    "Setext\n---\n", "Title\n===\n", "para line\n", "lazy continuation\n", "```\n", "~~~\n", "    indented code\n",
    "> quoted\n", "<div>\n", "<!-- open comment\n", "-->\n", "[ref]: /url\n", "---\n", "- - -\n", "-\n",
    "\t- tab item\n", "  - nested item\n", "- c\n", "- d\n", "text <b>bold</b>\n", "# Top\n", "- e\n\n",
    "   - three spaces\n", "10. ten\n", "- item\n\n  second paragraph\n", "=\n", "***\n", "<script>\n", "</script>\n",
]


def body(rnd: random.Random) -> str:
    return "".join(rnd.choice(PIECES) for _ in range(rnd.randrange(1, 30)))


def spliced(rnd: random.Random) -> tuple[list[str], list[readback.Source | None]]:
    """A body made of runs of three parsed versions' lines (some with a list, so they have
    units), with a blank line between some runs; each line's source as the driver gives it."""
    versions = []
    for side in Side:
        text = "- first\n" + body(rnd) if rnd.random() < 0.8 else body(rnd)
        version = read_version(b"---\n---\n" + text.encode(), side)  # an empty frontmatter, as in a memory file
        lines = [*version.header, *(line for t in version.tokens for line in t.lines)]
        versions.append((lines, version.units))
    out: list[str] = []
    sources: list[readback.Source | None] = []
    for _ in range(rnd.randrange(1, 6)):
        lines, units = rnd.choice(versions)
        if len(lines) <= 2:
            continue
        start = rnd.randrange(2, len(lines)) if len(lines) > 2 else 2
        end = rnd.randrange(start, len(lines)) + 1 if rnd.random() < 0.7 else len(lines)
        if out and rnd.random() < 0.4:
            out.append("\n")
            sources.append(None)
        run = lines[start:end]
        if run and not run[-1].endswith("\n") and end < len(lines):
            run[-1] += "\n"
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        out += run
        sources += [(lines, units, start + k) for k in range(len(run))]
    return out, sources


@pytest.mark.parametrize("seed", range(4))
def test_the_joins_read_back_as_the_whole_parse_reads(seed):
    rnd = random.Random(seed)
    compared = 0
    for _ in range(1500):
        lines, sources = spliced(rnd)
        found = readback.read_entries(lines, sources)
        parsed = markdown.parse_text("---\n---\n" + "".join(lines))
        assert found is not None
        entries, has_list = found
        if not has_list:  # read whole (SPEC §2): the driver parses it whole then
            assert not any(e.kind != "whole" for e in parsed.entries)
            continue
        compared += 1
        assert entries == [(e.text, e.section) for e in parsed.entries], "".join(lines)
    assert compared > 500


def test_a_join_that_makes_a_lazy_continuation_is_seen():
    """The smallest join the check exists for: an item whose next line, in the merged file, is
    a paragraph's line (no blank between) reads as one entry, not two."""
    ours = read_version(b"- a\n- b\n\nplain\n", Side.OURS)
    theirs = read_version(b"- x\n\nSecond paragraph\n", Side.THEIRS)
    o_lines = [line for t in ours.tokens for line in t.lines]
    t_lines = [line for t in theirs.tokens for line in t.lines]
    body = o_lines[:2] + t_lines[2:]  # "- a", "- b", "Second paragraph"
    sources = [(o_lines, ours.units, 0), (o_lines, ours.units, 1), (t_lines, theirs.units, 2)]
    found = readback.read_entries(body, sources)
    assert found is not None
    assert found[0] == [("a", ""), ("b\nSecond paragraph", "")]
    assert found[0] == [(e.text, e.section) for e in markdown.parse_text("".join(body)).entries]


def test_a_large_merge_parses_each_version_once_and_only_the_joins_again(monkeypatch):
    """The merge driver's cost (SPEC §14, issue 32: it was quadratic, then five whole parses):
    at 3,000 entries with edits on both sides, markdown-it reads the three versions once and
    then only a few lines around each join, not the two merged resolutions whole. Counted in
    characters parsed, not timed."""
    from memtui.core.gitmerge import merge_entries
    from tests.benchmarks.merge_driver import versions

    base, ours, theirs = versions(3_000, "items")
    md = markdown._parsers()[1]
    parse = md.parse
    parsed: list[int] = []

    def counted(text, env=None):
        parsed.append(len(text))
        return parse(text, env)

    monkeypatch.setattr(md, "parse", counted)
    result = merge_entries(base, ours, theirs)
    assert result.conflicts > 0  # both resolutions are read back
    whole = len(base) + len(ours) + len(theirs)
    assert parsed[:3] == [len(v) - v.index(b"\n---\n") - 5 for v in (base, ours, theirs)]  # each body once
    assert sum(parsed[3:]) < len(ours) / 2, (sum(parsed[3:]), whole)
