"""SPEC §2, "Neighbours are kept (exact invariant)", as a property over generated Markdown.

Every delete, replace and append either keeps every other entry (text, section, order), reads
back the new text exactly and changes no byte outside the edited lines (one blank line allowed
at each seam, and the `updatedAt` value), or it is refused with EditRefused.

The checks here are written independently of `md.check_neighbours`, which the writers use.
Profiles live in tests/conftest.py: `ci` (default, derandomised) and
`HYPOTHESIS_PROFILE=explore python -m pytest tests/core/test_neighbours.py`.
"""

from __future__ import annotations

from datetime import date

from hypothesis import assume, example, given
from hypothesis import strategies as st

from memtui.core import markdown as md

TODAY = date(2026, 11, 22)
OLD_DATE = "2020-01-01"

words = st.text(alphabet=st.sampled_from("abcxyz数据 _"), min_size=1, max_size=8).map(str.strip).filter(bool)
markers = st.sampled_from(["-", "*", "+", "1.", "1)", "2.", "10)"])


@st.composite
def list_items(draw) -> str:
    marker = draw(markers)
    indent = draw(st.sampled_from(["", "", " "]))
    head = f"{indent}{marker} "
    pad = " " * len(head)
    lines = [head + draw(words)]
    for _ in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["indented", "lazy", "short", "child", "loose", "fence"]))
        w = draw(words)
        if kind == "indented":
            lines.append(pad + w)
        elif kind == "lazy":
            lines.append(w)
        elif kind == "short":
            lines.append(" " + w)
        elif kind == "child":
            lines.append(pad + draw(st.sampled_from(["- ", "* ", "1. "])) + w)
        elif kind == "loose":
            lines += ["", pad + w]
        else:
            lines += [pad + "```", pad + w, "", pad + "```"]
    return "\n".join(lines)


def _simple(template: str) -> st.SearchStrategy[str]:
    return words.map(lambda w: template.format(w=w))


blocks = st.one_of(
    list_items(),
    list_items(),
    _simple("{w}"),
    _simple("para {w}\nwrapped {w}"),
    _simple("```\n{w}\n\n{w}\n```"),
    _simple("~~~py\n{w}\n~~~"),
    _simple("> {w}\n> more"),
    _simple("> {w}\nlazy quote"),
    _simple("<div>\n{w}\n</div>"),
    _simple("| a | {w} |\n|---|---|\n| 1 | 2 |"),
    _simple("{w}\n==="),
    _simple("{w}\n---"),
    _simple("# {w}"),
    _simple("## {w}"),
    st.sampled_from(["---", "***", "* * *", "___", "    indented code"]),
)
frontmatters = st.sampled_from([
    "",
    f"---\ntype: knowledge\nupdatedAt: {OLD_DATE}  # kept\n---\n",
    "---\ntags: [a]  # note\nfoo: bar\n---\n\n",
    "---\nname: Note\n---\n",
])


@st.composite
def files(draw) -> str:
    parts = draw(st.lists(st.tuples(blocks, st.sampled_from(["\n", "\n\n"])), min_size=1, max_size=8))
    body = "".join(b + sep for b, sep in parts)
    if not draw(st.booleans()):
        body = body.rstrip("\n")  # no final newline
    text = draw(frontmatters) + body
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    text = text.replace("\n", eol)
    return (md.BOM if draw(st.booleans()) else "") + text


new_texts = st.one_of(
    words,
    st.lists(words, min_size=2, max_size=3).map("\n".join),
    words.map(lambda w: f"{w}\n  indented {w}\n\n{w}"),
    st.sampled_from([
        "```", "```\ncode\n```", "# heading", "x\n===", "x\n---", "---", "a\n\nb", "> quote", "1. one",
        "- dash", "2. two", "<div>", "| a |\n|---|", "    code", "*", "line\r\nwith crlf",
    ]),
)


def _parse(text: str) -> md.ParsedFile:
    try:
        return md.parse_text(text)
    except md.MemoryFileError:
        assume(False)  # the generated body opened frontmatter that is not YAML
        raise


def _expected_prefix(lines: list[str], changed: bool) -> list[str]:
    return [line.replace(OLD_DATE, TODAY.isoformat(), 1) if changed else line for line in lines]


def _lines(text: str) -> list[str]:
    """Lines without the BOM (which is checked on its own)."""
    return md.split_lines(text.removeprefix(md.BOM))


def _is_blank(lines: list[str]) -> bool:
    return len(lines) == 1 and not lines[0].strip()


def check_delete(before: md.ParsedFile, index: int) -> None:
    target = before.entries[index]
    try:
        out = md.delete_entry(before, target, TODAY)
    except md.EditRefused as exc:
        # rare: an indented line after the entry would join the list item before it
        assert "deleting this entry" in str(exc)
        assert target.kind != "item" or len([e for e in before.entries if e.kind == "item"]) > 1
        return
    after = md.parse_text(out)
    assert out.startswith(md.BOM) == before.text.startswith(md.BOM)
    old, new = _lines(before.text), _lines(out)
    tail = old[target.line_end :]
    assert new[: target.line_start] == _expected_prefix(old[: target.line_start], True)
    assert new[len(new) - len(tail) :] == tail
    middle = new[target.line_start : len(new) - len(tail)]
    assert middle == [] or _is_blank(middle)
    others = [(e.text, e.section) for i, e in enumerate(before.entries) if i != index]
    got = [(e.text, e.section) for e in after.entries]
    items = [e for e in before.entries if e.kind == "item"]
    if got != others:
        # SPEC §2's one exception: the last top-level list item went, the rest is one entry
        assert items == [target] and after.entries and after.entries[0].kind == "whole", (got, others)
        assert md.rest_merged(before, out)


def check_replace(before: md.ParsedFile, index: int, new_text: str) -> None:
    target = before.entries[index]
    wanted = new_text.replace("\r\n", "\n").strip()
    try:
        out = md.replace_entry(before, target, new_text, TODAY)
    except md.EditRefused as exc:
        assert str(exc)
        assert wanted != target.text, "saving unchanged text is never refused"
        assert not (target.kind in ("item", "block") and wanted.isalpha()), "one plain word always fits"
        return
    if wanted == target.text:
        assert out == before.text  # unchanged text changes no byte
        return
    after = md.parse_text(out)
    assert out.startswith(md.BOM) == before.text.startswith(md.BOM)
    old, new = _lines(before.text), _lines(out)
    tail = old[target.line_end :]
    assert new[: target.line_start] == _expected_prefix(old[: target.line_start], True)
    assert new[len(new) - len(tail) :] == tail
    middle = new[target.line_start : len(new) - len(tail)]
    assert len(middle) <= len(wanted.split("\n")) + 2
    expected = [(e.text, e.section) for e in before.entries]
    got = [(e.text, e.section) for e in after.entries]
    assert len(got) == len(expected)
    assert got[index][0] == wanted
    if target.kind != "whole":
        assert got[index][1] == expected[index][1]
    assert got[:index] + got[index + 1 :] == expected[:index] + expected[index + 1 :]


def check_append(before: md.ParsedFile, new_text: str) -> None:
    wanted = new_text.replace("\r\n", "\n").strip()
    try:
        out = md.append_item(before, new_text, TODAY)
    except md.EditRefused as exc:
        assert str(exc)
        assert before.single_entry or "```" in before.text or "~~~" in before.text or not wanted.isalpha()
        return
    after = md.parse_text(out)
    old, new = _lines(before.text), _lines(out)
    kept = _expected_prefix(old, True)
    if kept:
        assert md.strip_eol(new[len(kept) - 1]) == md.strip_eol(kept[-1])
        assert new[: len(kept) - 1] == kept[:-1]
    assert [(e.text, e.section) for e in after.entries[:-1]] == [(e.text, e.section) for e in before.entries]
    assert after.entries[-1].text == wanted


@given(text=files(), new_text=new_texts)
@example(text="para\n1. a\n2. b\n", new_text="x")
@example(text="**STATUS**\n\n-----\n\n## Intro\n\n- a\n- b\n", new_text="x")
@example(text="```\nx\n```\n---\ntitle\n---\n- a\n", new_text="x")
@example(text="- a\nparagraph after\n\n- b\n", new_text="a\n\nb")
@example(text="\ufeff---\nupdatedAt: 2020-01-01\n---\n- a\n  more\n- b", new_text="x\ny")
@example(text="- a\r- b\rpara\r", new_text="# heading")
@example(text="- _\n\n_\n2. _\n\n   _", new_text="_")  # deleting `_ 2. _` would pull `   _` into the item
def test_every_edit_keeps_the_neighbours_or_is_refused(text, new_text):
    before = _parse(text)
    for index in range(len(before.entries)):
        check_delete(before, index)
        check_replace(before, index, new_text)
        check_replace(before, index, before.entries[index].text)
    check_append(before, new_text)
