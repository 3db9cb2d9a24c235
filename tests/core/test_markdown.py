"""Entry splitting (SPEC §2, exact) and line-exact splicing."""

from __future__ import annotations

import re
from datetime import date

import pytest
from hypothesis import example, given
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
    assert md.frontmatter_updated_at({"updatedAt": date(2026, 2, 11)}) == 1770768000.0
    assert md.frontmatter_updated_at({"updatedAt": "2026-02-11T00:00:00"}) == 1770768000.0
    assert md.frontmatter_updated_at({"updatedAt": "2026-02-11T01:00:00+01:00"}) == 1770768000.0
    assert md.frontmatter_updated_at({"updatedAt": "last tuesday"}) is None
    assert md.frontmatter_updated_at({}) is None


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


@given(fm=frontmatters, body=files, data=st.data(), replacement=words)
@example(fm="", body="para x\n1. a\n2. b\n", data=None, replacement="a").via("a delete that would make `1. b` lazy")
def test_editing_or_deleting_one_entry_leaves_every_other_line(fm, body, data, replacement):
    text = fm + "- anchor\n- second anchor\n\n" + body  # a list stays after any one delete
    parsed = md.parse_text(text)
    assert parsed.entries
    index = data.draw(st.integers(0, len(parsed.entries) - 1)) if data is not None else 3
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
    # a delete leaves nothing where the entry was, or one blank line where its neighbours would join
    assert md.split_lines(deleted)[target.line_start : target.line_start + len(md.split_lines(deleted)) - len(lines)
                                   + target.line_end - target.line_start] in ([], ["\n"])
    # ...and every other entry is still there, with the same text and section.
    reparsed = md.parse_text(deleted)
    others = [(e.text, e.section) for i, e in enumerate(parsed.entries) if i != index]
    assert [(e.text, e.section) for e in reparsed.entries] == others


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



# ---------------------------------------------------------------- frontmatter (exact)


@pytest.mark.parametrize("text,meta,first_entry", [
    ("---\ntype: k\n---\n- a\n", {"type": "k"}, ("a", 3)),
    ("---  \t\ntype: k\n---\t \n- a\n", {"type": "k"}, ("a", 3)),
    ("\ufeff---\ntype: k\n---\n- a\n", {"type": "k"}, ("a", 3)),
    ("---\r\ntype: k\r\n---\r\n- a\r\n", {"type": "k"}, ("a", 3)),
    ("---\rtype: k\r---\r- a\r", {"type": "k"}, ("a", 3)),
    ("---\n---\n- a\n", {}, ("a", 2)),
    ("\n---\ntype: k\n---\n- a\n", {}, ("a", 4)),  # a blank line first: Markdown
    ("-----\ntype: k\n-----\n- a\n", {}, ("a", 3)),  # not `---`
    (" ---\ntype: k\n---\n- a\n", {}, ("a", 3)),
    ("---\ntype: k\n\n- a\n", {}, ("type: k", 1)),  # no closing line: the whole file is Markdown
    ("\ufeff- a\n", {}, ("a", 0)),
])
def test_frontmatter_only_from_the_very_first_line(text, meta, first_entry):
    parsed = md.parse_text(text)
    assert parsed.meta == meta
    assert (parsed.entries[0].text, parsed.entries[0].line_start) == first_entry


def test_bom_frontmatter_is_not_a_setext_heading_and_is_written_back():
    text = "\ufeff---\nname: N\nupdatedAt: 2020-01-01\n---\nBody\n"
    parsed = md.parse_text(text)
    assert parsed.meta["name"] == "N"
    assert [(e.text, e.section, e.line_start) for e in parsed.entries] == [("Body", "", 4)]
    out = md.replace_entry(parsed, parsed.entries[0], "New body", date(2026, 5, 6))
    assert out == "\ufeff---\nname: N\nupdatedAt: 2026-05-06\n---\nNew body\n"


@pytest.mark.parametrize("yaml_text,reason", [
    ("type: [unclosed", "invalid YAML frontmatter at line 3"),
    ("updatedAt: 2026-13-45", "month must be in 1..12"),
    ("updatedAt: 2026-02-30", "day is out of range"),
    ("updatedAt: 2026-01-01T25:00:00", "hour must be in 0..23"),
    ('x: !!int "abc"', "invalid literal for int"),
    ('x: !!float "abc"', "could not convert string to float"),
    ('x: !!timestamp "nope"', "a value cannot be loaded"),
    ("x: !!binary 'a'", "invalid YAML frontmatter"),
    ("x: !!python/object:os.system 1", "invalid YAML frontmatter"),
    ("? [a]\n: 1", "unhashable key"),
    ("a: &x 1\nb: *x", "anchors and aliases"),
    ("a: &x [1]", "anchors and aliases"),
    ("x: " + "[" * 200 + "]" * 200, "nested more than 100 levels"),
    ("x: " + "[" * 200_000 + "]" * 200_000, "nested more than 100 levels"),
    ("- a\n- b", "not a mapping"),
    ("just a string", "not a mapping"),
])
def test_frontmatter_that_cannot_load_is_the_files_error(yaml_text, reason):
    with pytest.raises(md.MemoryFileError, match=re.escape(reason)):
        md.parse_text(f"---\n{yaml_text}\n---\n- a\n")


def test_an_alias_bomb_is_refused_before_it_is_built():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        ref = f"*{chr(96 + i)}"
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [{','.join([ref] * 9)}]")
    with pytest.raises(md.MemoryFileError, match="anchors and aliases"):
        md.parse_text("---\n" + "\n".join(lines) + "\n---\n- a\n")


# ---------------------------------------------------------------- continuation indent


@pytest.mark.parametrize("text,entry_text", [
    ("- a\n  b\n", "a\nb"),
    ("1. a\n   b\n", "a\nb"),
    ("10) a\n    b\n", "a\nb"),
    ("- a\n    deeper\n", "a\n  deeper"),
    ("- a\n b\n", "a\nb"),  # fewer spaces than the content indent: as many as the line has
    ("- a\nlazy\n", "a\nlazy"),
    ("- a\n\n  b\n", "a\n\nb"),
    (" - a\n   b\n", "a\nb"),
    ("-\n  a\n  b\n", "a\nb"),  # empty first line: marker width plus one
    ("- a\n  ```\n  code\n\n  ```\n", "a\n```\ncode\n\n```"),
    ("- a\r\n  b\r\n", "a\nb"),
])
def test_item_continuation_indent_is_removed_and_saving_it_unchanged_changes_no_byte(text, entry_text):
    doc = text + "- other\n"
    parsed = md.parse_text(doc)
    assert parsed.entries[0].text == entry_text
    assert md.replace_entry(parsed, parsed.entries[0], entry_text, date(2026, 1, 1)) == doc


@pytest.mark.parametrize("marker", ["- ", "* ", "1. ", "10) "])
@pytest.mark.parametrize("new_text", ["x\ny", "x\n  indented\n\nafter blank", "x\n\tt", "x\n```\ncode\n```"])
def test_a_multi_line_edit_reads_back_exactly(marker, new_text):
    doc = f"{marker}a\n{marker}b\n"
    parsed = md.parse_text(doc)
    out = md.replace_entry(parsed, parsed.entries[0], new_text, date(2026, 1, 1))
    assert [e.text for e in md.parse_text(out).entries] == [new_text, "b"]
    assert out.endswith(f"{marker}b\n")


# ---------------------------------------------------------------- seams: one blank line, nothing else

TODAY = date(2026, 11, 22)


@pytest.mark.parametrize("text,op,index,expected", [
    ("para\n1. a\n2. b\n", "delete", 1, "para\n\n2. b\n"),
    ("- a\n- b\npara\n", "delete", 0, "- b\npara\n"),  # `para` is b's lazy line: it goes along
    ("**STATUS**\n\n-----\n\n## Intro\n\n- a\n- b\n", "delete", 0, "\n-----\n\n## Intro\n\n- a\n- b\n"),
    ("```\nx\n```\n---\ntitle\n---\n- a\n", "delete", 0, "\n---\ntitle\n---\n- a\n"),
    ("para\n```\nc\n```\n===\n- a\n", "delete", 1, "para\n\n===\n- a\n"),
    ("para\n\n- a\n", "append", None, "para\n\n- a\n- b\n"),
    ("- a\n- x\n", "replace", 1, "- a\n- b\n"),
    ("para\n- a\n", "replace", 0, "b\n- a\n"),
    ("- a\n> q\n", "replace", 1, "- a\n\nb\n"),
    ("- a\n\n<div>\nx\n</div>\npara\n", "replace", 1, "- a\n\nb\n"),  # an HTML block runs to a blank line
    ("- a\n* b\n", "append", None, "- a\n* b\n* b\n"),
    ("1. a\n2. c\n", "append", None, "1. a\n2. c\n3. b\n"),
])
def test_seams(text, op, index, expected):
    parsed = md.parse_text(text)
    if op == "delete":
        out = md.delete_entry(parsed, parsed.entries[index], TODAY)
    elif op == "replace":
        out = md.replace_entry(parsed, parsed.entries[index], "b", TODAY)
    else:
        out = md.append_item(parsed, "b", TODAY)
    assert out == expected
    before = [(e.text, e.section) for e in parsed.entries]
    after = [(e.text, e.section) for e in md.parse_text(out).entries]
    if op == "delete":
        del before[index]
    elif op == "replace":
        before[index] = ("b", before[index][1])
    else:
        before.append(("b", after[-1][1]))
    assert after == before


@pytest.mark.parametrize("text,index,new_text,reason", [
    ("para\n\n- a\n\nmore\n", 0, "```", "code fence"),
    ("para\n\n- a\n\nmore\n", 0, "~~~\nx", "code fence"),
    ("para\n\n- a\n\nmore\n", 0, "# x", "heading"),
    ("para\n\n- a\n\nmore\n", 0, "x\n===", "heading"),
    ("para\n\n- a\n\nmore\n", 0, "---", "thematic break"),
    ("para\n\n- a\n\nmore\n", 1, "---", "thematic break"),
    ("para\n\n- a\n\nmore\n", 1, "* * *", None),  # an item holding a break is still one entry
    ("para\n\n- a\n\nmore\n", 0, "a\n\nb", "several blocks"),
    ("para\n\n- a\n\nmore\n", 0, "- x", "list"),
    ("Just prose.\n\nMore.\n", 0, "x\n\n- y", "split this file"),
])
def test_edits_that_would_change_other_entries_are_refused(text, index, new_text, reason):
    parsed = md.parse_text(text)
    if reason is None:
        out = md.replace_entry(parsed, parsed.entries[index], new_text, TODAY)
        assert md.parse_text(out).entries[index].text == new_text
        return
    with pytest.raises(md.EditRefused, match=reason):
        md.replace_entry(parsed, parsed.entries[index], new_text, TODAY)
    assert parsed.text == text


def test_append_to_a_single_entry_file_is_refused():
    parsed = md.parse_text("---\nname: Note\n---\n- a\n")
    with pytest.raises(md.EditRefused, match="read as one entry"):
        md.append_item(parsed, "b", TODAY)


def test_append_after_an_unclosed_fence_is_refused():
    parsed = md.parse_text("- a\n\n```\ncode\n")
    with pytest.raises(md.EditRefused, match="never closed"):
        md.append_item(parsed, "b", TODAY)


def test_deleting_the_last_list_item_merges_the_rest_and_says_so():
    parsed = md.parse_text("## Intro\n\n- a\n\npara\n")
    assert md.rest_merged(parsed, md.delete_entry(parsed, parsed.entries[0], TODAY))
    assert not md.rest_merged(parsed, md.delete_entry(parsed, parsed.entries[1], TODAY))
    out = md.delete_entry(parsed, parsed.entries[0], TODAY)
    assert out == "## Intro\n\n\npara\n"
    assert [e.kind for e in md.parse_text(out).entries] == ["whole"]
    two = md.parse_text("para\n- a\n-\n")  # an empty item keeps the list: a seam, not a merge
    assert not md.rest_merged(two, md.delete_entry(two, two.entries[1], TODAY))
    assert md.delete_entry(two, two.entries[1], TODAY) == "para\n\n-\n"


def test_several_deletes_in_one_file():
    parsed = md.parse_text("para\n1. a\n2. b\n3. c\n")
    out = md.delete_entries(parsed, [parsed.entries[1], parsed.entries[3]], TODAY)
    assert [e.text for e in md.parse_text(out).entries] == ["para", "b"]


def test_updated_at_is_set_to_today_with_its_comment_kept():
    text = "---\nupdatedAt: 2020-01-01 # when\nother: 1\n---\n- a\n- b\n"
    parsed = md.parse_text(text)
    for out in (md.delete_entry(parsed, parsed.entries[0], TODAY),
                md.replace_entry(parsed, parsed.entries[0], "z", TODAY),
                md.append_item(parsed, "z", TODAY)):
        assert out.startswith("---\nupdatedAt: 2026-11-22 # when\nother: 1\n---\n")
    assert md.replace_entry(parsed, parsed.entries[0], "a", TODAY) == text  # unchanged: no byte, not even the date


def test_a_new_file_header_is_block_style_with_or_without_tags():
    """`remember` on a fresh home wrote `{type: knowledge, updatedAt: …, source: manual}` on one
    line when there were no tags; a person expects (and edits) one key a line."""
    header = md.new_file_header("", [], date(2026, 1, 2))
    assert header == "---\ntype: knowledge\nupdatedAt: 2026-01-02\nsource: manual\n---\n\n"
    assert md.new_file_header("pattern", ["a b", "c"], date(2026, 1, 2)).splitlines()[2] == "tags: [a b, c]"


@pytest.mark.parametrize("frontmatter,expected", [
    ("{type: knowledge, updatedAt: 2025-01-01, source: manual}", "{type: knowledge, updatedAt: 2026-11-22, source: manual}"),
    ("{type: k, updatedAt: '2025-01-01'}", "{type: k, updatedAt: '2026-11-22'}"),
    ('{type: k,\n updatedAt: "2025-01-01T10:00:00"}', '{type: k,\n updatedAt: "2026-11-22"}'),
    ("type: k\nupdatedAt:\n  2025-01-01\n", "type: k\nupdatedAt:\n  2026-11-22\n"),
    ("type: k\nupdatedAt: 2025-01-01 # keep\n", "type: k\nupdatedAt: 2026-11-22 # keep\n"),
], ids=["flow", "flow-quoted", "flow-multi-line", "value-on-next-line", "block"])
def test_updated_at_is_touched_in_any_frontmatter_style(frontmatter, expected):
    fm = frontmatter if frontmatter.endswith("\n") else frontmatter + "\n"
    parsed = md.parse_text(f"---\n{fm}---\n- a\n- b\n")
    out = md.append_item(parsed, "c", TODAY)
    want = expected if expected.endswith("\n") else expected + "\n"
    assert out == f"---\n{want}---\n- a\n- b\n- c\n"
    assert md.parse_text(out).meta["updatedAt"] in (date(2026, 11, 22), "2026-11-22")


def test_updated_at_that_is_not_a_date_is_left_alone():
    text = "---\n{type: k, updatedAt: [1, 2]}\n---\n- a\n"
    assert md.append_item(md.parse_text(text), "b", TODAY) == text + "- b\n"
