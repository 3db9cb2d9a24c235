"""Entry splitting (SPEC §2, exact) and line-exact splicing."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core import markdown as md

CASES = [
    ("bullets", "- one\n- two\n", [("one", "", 0, 1), ("two", "", 1, 2)]),
    ("star and plus lists", "* one\n\n+ two\n", [("one", "", 0, 1), ("two", "", 2, 3)]),
    ("ordered list", "1. first\n2) second\n", [("first", "", 0, 1), ("second", "", 1, 2)]),
    ("nested items stay in their parent", "- parent\n  - child\n  - child 2\n- next\n",
     [("parent\n- child\n- child 2", "", 0, 3), ("next", "", 3, 4)]),
    ("loose item with two paragraphs", "- a\n\n  more of a\n\n- b\n",
     [("a\n\nmore of a", "", 0, 3), ("b", "", 4, 5)]),
    ("paragraph and list", "- item\n\nSome paragraph\nwrapped.\n",
     [("item", "", 0, 1), ("Some paragraph\nwrapped.", "", 2, 4)]),
    ("fence with blank lines is one entry", "- x\n\n```py\na = 1\n\nb = 2\n```\n",
     [("x", "", 0, 1), ("```py\na = 1\n\nb = 2\n```", "", 2, 7)]),
    ("headings become sections", "# Top\n\n- a\n\n## Sub\n\n- b\n\n> quote\n",
     [("a", "Top", 2, 3), ("b", "Sub", 6, 7), ("> quote", "Sub", 8, 9)]),
    ("thematic breaks are ignored", "- a\n\n---\n\n- b\n", [("a", "", 0, 1), ("b", "", 4, 5)]),
    ("no list: one entry", "# Title\n\nJust prose.\n\nMore prose.\n",
     [("# Title\n\nJust prose.\n\nMore prose.", "Title", 0, 5)]),
    ("CJK items", "- 数据库连接池配置过小\n- 使用 pnpm\n", [("数据库连接池配置过小", "", 0, 1), ("使用 pnpm", "", 1, 2)]),
    ("empty items are ignored", "-\n- real\n", [("real", "", 1, 2)]),
    ("CRLF line ends", "- a\r\n- b\r\n", [("a", "", 0, 1), ("b", "", 1, 2)]),
]


@pytest.mark.parametrize("name,body,expected", CASES, ids=[c[0] for c in CASES])
def test_entry_splitting(name, body, expected):
    parsed = md.parse_text(body)
    got = [(e.text, e.section, e.line_start, e.line_end) for e in parsed.entries]
    assert got == expected


def test_frontmatter_offsets_lines_and_name_makes_one_entry():
    text = "---\nname: Testing\ntype: preference\n---\n\n## Prefs\n\n- a\n- b\n"
    parsed = md.parse_text(text)
    assert parsed.meta["name"] == "Testing"
    assert [(e.text, e.line_start, e.kind) for e in parsed.entries] == [("## Prefs\n\n- a\n- b", 5, "whole")]


@pytest.mark.parametrize("text,expected", [
    ("---\nname: Testing\n---\n# Prefs\n\n- a\n", [("# Prefs\n\n- a", 4, 6)]),
    ("---\nname: x\n---\nJust text.", [("Just text.", 4, 4)]),
    ("---\ntype: knowledge\n---\n", []),
    ("---\ntype: knowledge\n---", []),
    ("---\ntype: knowledge\n---\r\nBody\r\n", [("Body", 4, 4)]),
])
def test_single_entry_body_starts_after_the_closing_fence(text, expected):
    parsed = md.parse_text(text)
    assert [(e.text, e.line_start + 1, e.line_end) for e in parsed.entries] == expected


def test_worked_example_lines():
    text = "---\ntype: preference\nimportance: high\n---\n\n## Testing\n\n- Use vitest, not jest\n- Prefer describe/it style\n"
    parsed = md.parse_text(text)
    assert [(e.text, e.section, e.line_start + 1) for e in parsed.entries] == [
        ("Use vitest, not jest", "Testing", 8), ("Prefer describe/it style", "Testing", 9)]


@pytest.mark.parametrize("text,reason", [
    ("---\ntype: [unclosed\n---\n- a\n", "invalid YAML"),
    ("---\n- a\n- b\n---\n- a\n", "not a mapping"),
])
def test_bad_frontmatter_is_an_error(text, reason):
    with pytest.raises(md.MemoryFileError, match=reason):
        md.parse_text(text)


def test_non_utf8_is_an_error():
    with pytest.raises(md.MemoryFileError, match="not UTF-8"):
        md.decode(b"- caf\xe9\n")


def test_updated_at_values():
    assert md.updated_at_of({"updatedAt": date(2026, 2, 11)}, 5.0) == 1770768000.0
    assert md.updated_at_of({"updatedAt": "2026-02-11T00:00:00"}, 5.0) == 1770768000.0
    assert md.updated_at_of({"updatedAt": "2026-02-11T01:00:00+01:00"}, 5.0) == 1770768000.0
    assert md.updated_at_of({"updatedAt": "last tuesday"}, 5.0) == 5.0
    assert md.updated_at_of({}, 7.5) == 7.5


def test_tags_list_or_comma_string():
    assert md.tags_of({"tags": ["a", "b"]}) == ("a", "b")
    assert md.tags_of({"tags": "a, b ,"}) == ("a", "b")


def test_edit_keeps_comments_unknown_keys_and_other_bytes():
    text = ("---\ntype: preference   # category\ncustom: {keep: me}\nupdatedAt: '2020-01-01'  # touched\n---\n\n"
            "- one\n- two\n  continued\n- three\n")
    parsed = md.parse_text(text)
    two = parsed.entries[1]
    out = md.replace_entry(parsed, two, "TWO", date(2026, 11, 22))
    assert out == ("---\ntype: preference   # category\ncustom: {keep: me}\nupdatedAt: '2026-11-22'  # touched\n---\n\n"
                   "- one\n- TWO\n- three\n")
    out = md.delete_entry(parsed, parsed.entries[0], date(2026, 11, 22))
    assert out.endswith("\n\n- two\n  continued\n- three\n")


def test_append_creates_and_appends():
    header = md.new_file_header("decision", ["db"], date(2026, 1, 2))
    first = md.append_item(None, "use WAL", date(2026, 1, 2), header)
    assert first == "---\ntype: decision\ntags: [db]\nupdatedAt: 2026-01-02\nsource: manual\n---\n\n- use WAL\n"
    parsed = md.parse_text(first)
    second = md.append_item(parsed, "busy timeout", date(2026, 3, 4))
    assert second.endswith("- use WAL\n- busy timeout\n")
    assert "updatedAt: 2026-03-04" in second
    assert [e.text for e in md.parse_text(second).entries] == ["use WAL", "busy timeout"]
    no_newline = md.parse_text("- a")
    assert md.append_item(no_newline, "b", date(2026, 1, 1)) == "- a\n- b\n"


# ---------------------------------------------------------------- property: splicing is line-exact

words = st.text(alphabet=st.sampled_from("abcxyz数据库 _-"), min_size=1, max_size=12).map(str.strip).filter(bool)
blocks = st.one_of(
    words.map(lambda w: f"- {w}"),
    words.map(lambda w: f"* {w}\n  more {w}"),
    words.map(lambda w: f"1. {w}"),
    words.map(lambda w: f"## {w}"),
    words.map(lambda w: f"para {w}"),
    words.map(lambda w: f"```\n{w}\n\n{w}\n```"),
)
files = st.lists(st.tuples(blocks, st.sampled_from(["\n", "\n\n"])), min_size=1, max_size=10).map(
    lambda parts: "".join(b + sep for b, sep in parts))
frontmatters = st.sampled_from(["", "---\ntype: knowledge\n---\n\n", "---\ntags: [a]  # note\nfoo: bar\n---\n"])


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(fm=frontmatters, body=files, data=st.data(), replacement=words)
def test_editing_or_deleting_one_entry_leaves_every_other_line(fm, body, data, replacement):
    text = fm + "- anchor\n- second anchor\n\n" + body  # a list stays after any one delete
    parsed = md.parse_text(text)
    assert parsed.entries
    index = data.draw(st.integers(0, len(parsed.entries) - 1))
    target = parsed.entries[index]
    lines = md.split_lines(text)
    today = date(2026, 11, 22)
    deleted = md.delete_entry(parsed, target, today)
    for out in (deleted, md.replace_entry(parsed, target, "new " + replacement, today)):
        new_lines = md.split_lines(out)
        removed = target.line_end - target.line_start
        added = len(new_lines) - (len(lines) - removed)
        assert new_lines[: target.line_start] == lines[: target.line_start]
        assert new_lines[target.line_start + added :] == lines[target.line_end :]
    # ...and every other entry is still there, with the same text and section.
    reparsed = md.parse_text(deleted)
    others = [(e.text, e.section) for i, e in enumerate(parsed.entries) if i != index]
    assert [(e.text, e.section) for e in reparsed.entries] == others


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(fm=st.sampled_from(["---\nname: Note\n---\n", "---\nname: Note\n---\n\n", "", "---\ndescription: d\nname: n\n---"]),
       body=files.filter(lambda b: not b.lstrip().startswith(("-", "*", "1.", "+"))), replacement=words)
def test_single_entry_files_edit_only_their_body(fm, body, replacement):
    text = fm + ("\n" if fm.endswith("---") else "") + body
    parsed = md.parse_text(text)
    if len(parsed.entries) != 1 or parsed.entries[0].kind != "whole":
        return  # a top-level list without `name`: covered by the multi-entry property
    entry = parsed.entries[0]
    assert not entry.text.startswith("---")
    lines = md.split_lines(text)
    out = md.split_lines(md.replace_entry(parsed, entry, "new " + replacement, date(2026, 1, 1)))
    assert out[: entry.line_start] == lines[: entry.line_start]
    assert out[len(out) - (len(lines) - entry.line_end):] == lines[entry.line_end:]
