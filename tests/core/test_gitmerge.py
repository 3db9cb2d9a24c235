"""The entry-wise merge of one memory file (SPEC §14), without git: core.gitmerge.merge_entries."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memtui.core.gitmerge import CannotMergeByEntry, merge_entries
from memtui.core.markdown import parse_text

FM = "---\ntype: knowledge\ntags: [a]\nupdatedAt: 2026-01-01\n---\n\n"


def merge(base: str, ours: str, theirs: str) -> tuple[str, int]:
    result = merge_entries(base.encode(), ours.encode(), theirs.encode())
    return result.data.decode("utf-8"), result.conflicts


def texts(text: str) -> list[str]:
    return [e.text for e in parse_text(text).entries]


def test_both_append_keeps_ours_then_theirs():
    out, conflicts = merge(FM + "- a\n- b\n", FM + "- a\n- b\n- x\n", FM + "- a\n- b\n- y\n")
    assert (out, conflicts) == (FM + "- a\n- b\n- x\n- y\n", 0)


def test_an_entry_both_added_is_kept_once():
    out, conflicts = merge(FM + "- a\n", FM + "- a\n- x\n- y\n", FM + "- a\n- x\n- z\n")
    assert conflicts == 0 and texts(out) == ["a", "x", "y", "z"]


def test_deleted_on_one_side_and_appended_on_the_other():
    out, conflicts = merge(FM + "- a\n- b\n- c\n", FM + "- a\n- c\n", FM + "- a\n- b\n- c\n- y\n")
    assert (out, conflicts) == (FM + "- a\n- c\n- y\n", 0)


def test_changed_on_one_side_only_and_added_in_the_middle():
    out, conflicts = merge(FM + "- a\n- b\n- c\n", FM + "- a\n- b, better\n- c\n", FM + "- a\n- new\n- b\n- c\n")
    assert (out, conflicts) == (FM + "- a\n- new\n- b, better\n- c\n", 0)


def test_changed_differently_on_both_sides_marks_that_entry_alone():
    out, conflicts = merge(FM + "- a\n- b\n- c\n", FM + "- a\n- b one way\n- c\n", FM + "- a\n- b another way\n- c\n")
    assert conflicts == 1
    assert out == FM + "- a\n<<<<<<< ours\n- b one way\n=======\n- b another way\n>>>>>>> theirs\n- c\n"


def test_changed_on_one_side_deleted_on_the_other_is_a_conflict():
    out, conflicts = merge(FM + "- a\n- b\n- c\n", FM + "- a\n- c\n", FM + "- a\n- b changed\n- c\n")
    assert conflicts == 1
    assert out == FM + "- a\n<<<<<<< ours\n=======\n- b changed\n>>>>>>> theirs\n- c\n"


def test_deleted_on_both_sides_is_gone():
    out, conflicts = merge(FM + "- a\n- b\n", FM + "- a\n", FM + "- a\n")
    assert (out, conflicts) == (FM + "- a\n", 0)


def test_frontmatter_tags_united_and_the_later_updated_at():
    ours = FM.replace("[a]", "[a, b]")
    theirs = FM.replace("[a]", "[a, c]").replace("2026-01-01", "2026-03-04")
    out, conflicts = merge(FM + "- a\n", ours + "- a\n- x\n", theirs + "- a\n")
    assert conflicts == 0
    assert out == "---\ntype: knowledge\ntags: [a, b, c]\nupdatedAt: 2026-03-04\n---\n\n- a\n- x\n"


def test_a_tag_removed_on_one_side_stays_removed():
    base = FM.replace("[a]", "[a, b]")
    out, _ = merge(base + "- a\n", base.replace("[a, b]", "[a]") + "- a\n", base.replace("[a, b]", "[a, b, c]") + "- a\n")
    assert parse_text(out).meta["tags"] == ["a", "c"]


def test_a_key_changed_on_one_side_only_is_taken_with_its_own_lines():
    theirs = FM.replace("type: knowledge", "type: decision  # chosen")
    out, conflicts = merge(FM + "- a\n", FM.replace("[a]", "[a, b]") + "- a\n", theirs + "- a\n")
    assert conflicts == 0
    assert out == "---\ntype: decision  # chosen\ntags: [a, b]\nupdatedAt: 2026-01-01\n---\n\n- a\n"


def test_a_key_changed_differently_on_both_sides_marks_the_frontmatter():
    out, conflicts = merge(FM + "- a\n", FM.replace("knowledge", "x") + "- a\n- y\n", FM.replace("knowledge", "z") + "- a\n")
    assert conflicts == 1
    assert out.startswith("<<<<<<< ours\n---\ntype: x\n")
    assert out.endswith(">>>>>>> theirs\n\n- a\n- y\n")  # the entries still merged


def test_single_entry_file_changed_on_both_sides_is_one_conflict():
    base = "---\nname: Testing\n---\n\n- use vitest\n"
    out, conflicts = merge(base, base + "- and describe\n", base + "- and it\n")
    assert conflicts == 1
    assert out.count("<<<<<<< ours") == 1


def test_crlf_stays_crlf():
    crlf = FM.replace("\n", "\r\n")
    out, conflicts = merge(crlf + "- a\r\n", crlf + "- a\r\n- x\r\n", crlf + "- a\r\n- y\r\n")
    assert conflicts == 0 and out == crlf + "- a\r\n- x\r\n- y\r\n"
    assert "\n" not in out.replace("\r\n", "")


def test_lines_from_an_lf_side_join_a_crlf_file_as_crlf():
    crlf = "- a\r\n- b\r\n"
    out, _ = merge("- a\n- b\n", crlf, "- a\n- b\n- y\n")
    assert out == "- a\r\n- b\r\n- y\r\n"


def test_a_blank_line_goes_where_a_paragraph_would_join_an_item():
    base = FM + "- a\n\nA paragraph.\n"
    out, conflicts = merge(base, base + "- x\n", FM + "- a\n- y\n\nA paragraph.\n")
    assert conflicts == 0 and texts(out) == ["a", "y", "A paragraph.", "x"]


def test_a_heading_renamed_on_one_side_keeps_the_other_sides_addition_under_it():
    out, conflicts = merge("## Old\n\n- a\n", "## New\n\n- a\n", "## Old\n\n- a\n- y\n")
    assert (out, conflicts) == ("## New\n\n- a\n- y\n", 0)
    assert [e.section for e in parse_text(out).entries] == ["New", "New"]


def test_additions_keep_their_sections_when_ours_opens_a_new_one():
    # theirs' item continues section A; ours' item is under the heading N it added: each stays
    out, conflicts = merge("## A\n\n- a\n", "## A\n\n- a\n\n## N\n\n- x\n", "## A\n\n- a\n- y\n")
    assert (out, conflicts) == ("## A\n\n- a\n- y\n\n## N\n\n- x\n", 0)
    assert [(e.text, e.section) for e in parse_text(out).entries] == [("a", "A"), ("y", "A"), ("x", "N")]


def test_both_open_the_same_new_section():
    out, conflicts = merge("## A\n\n- a\n", "## A\n\n- a\n\n## N\n\n- x\n", "## A\n\n- a\n\n## N\n\n- y\n")
    assert (out, conflicts) == ("## A\n\n- a\n\n## N\n\n- x\n- y\n", 0)


def test_a_heading_gets_a_blank_line_before_it_where_pieces_meet():
    out, _ = merge("- a\n", "- a\n- x\n\n## N\n\n- n\n", "- a\n- y\n\n## M\n\n- m\n")
    assert out == "- a\n- x\n- y\n\n## N\n\n- n\n\n## M\n\n- m\n"


def test_a_merge_whose_pieces_would_join_is_left_to_git():
    # ours ends with a code fence it never closes: theirs' item would be read as code
    with pytest.raises(CannotMergeByEntry, match="would not read back"):
        merge("- a\n", "- a\n\n```\ncode\n", "- a\n- y\n")


@pytest.mark.parametrize("bad", [b"---\nupdatedAt: 2026-13-45\n---\n- a\n", b"- a\n\xff\n", b"- a\n" * 300_000])
def test_a_file_memtui_would_skip_is_not_merged_by_entry(bad):
    with pytest.raises(CannotMergeByEntry):
        merge_entries(bad, bad + b"- x\n", bad + b"- y\n")


def test_added_on_both_sides_from_nothing():
    out, conflicts = merge("", "- x\n", "- y\n")
    assert (out, conflicts) == ("- x\n- y\n", 0)


# --------------------------------------------------------------------------- properties

LINES = st.sampled_from(["- a", "- b", "- a", "* c", "1. d", "", "", "## H", "## K", "para", "more para",
                         "  indented", "---", "```", "> quote", "- [x] e", "text: x"])
FRONT = st.sampled_from(["", FM, "---\nname: X\n---\n", "\ufeff", "---\ntags: a, b\n---\n"])


@st.composite
def files(draw) -> str:
    text = draw(FRONT) + "\n".join(draw(st.lists(LINES, max_size=12))) + draw(st.sampled_from(["", "\n"]))
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


@given(files(), files())
@example("- a\n- b", "- a\n- b\n")
@example("- a\n", "- a\r\n- x\r\n")
def test_merging_with_an_unchanged_side_gives_the_other_side_byte_for_byte(base, other):
    for ours, theirs in ((base, other), (other, base)):
        try:
            result = merge_entries(base.encode(), ours.encode(), theirs.encode())
        except CannotMergeByEntry:
            continue  # a file that would be skipped, or cannot be checked: git merges it
        assert result.conflicts == 0
        assert result.data == other.encode()


@given(files(), files())
def test_the_same_change_on_both_sides_is_that_change(base, other):
    try:
        result = merge_entries(base.encode(), other.encode(), other.encode())
    except CannotMergeByEntry:
        return
    assert (result.data, result.conflicts) == (other.encode(), 0)


@given(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=5),
       st.lists(st.text("xyz", min_size=1, max_size=3), unique=True, max_size=3),
       st.lists(st.text("uvw", min_size=1, max_size=3), unique=True, max_size=3))
def test_appends_on_both_sides_keep_every_memory_once(base_items, ours_new, theirs_new):
    base = FM + "".join(f"- {x}\n" for x in base_items)
    ours = base + "".join(f"- {x}\n" for x in ours_new)
    theirs = base + "".join(f"- {x}\n" for x in theirs_new)
    out, conflicts = merge(base, ours, theirs)
    assert conflicts == 0
    assert texts(out) == base_items + ours_new + theirs_new  # each side's new memories, once


ITEMS = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=6)


@st.composite
def edited(draw, base: list[str]) -> list[str]:
    """`base` with some items deleted, changed (`b` → `b2`) and added (new, unique letters)."""
    out = []
    for x in base:
        fate = draw(st.sampled_from(["keep", "keep", "delete", "change"]))
        if fate == "keep":
            out.append(x)
        elif fate == "change":
            out.append(x + draw(st.sampled_from(["1", "2"])))
    for new in draw(st.lists(st.sampled_from("klmnopqrst"), unique=True, max_size=3)):
        out.insert(draw(st.integers(0, len(out))), new)
    return out


def resolve(text: str, side: int) -> str:
    """The file with every conflict resolved by taking ours (0) or theirs (1)."""
    out, inside = [], None
    for line in text.splitlines(keepends=True):
        if line.startswith("<<<<<<< "):
            inside = 0
        elif line.startswith("=======") and inside == 0:
            inside = 1
        elif line.startswith(">>>>>>> ") and inside == 1:
            inside = None
        elif inside is None or inside == side:
            out.append(line)
    return "".join(out)


@given(st.data())
def test_no_memory_is_lost_and_each_resolution_keeps_its_sides_changes(data):
    base = data.draw(ITEMS)
    ours, theirs = data.draw(edited(base)), data.draw(edited(base))
    render = lambda items: FM + "## S\n\n- always\n" + "".join(f"- {x}\n" for x in items)  # noqa: E731
    out, conflicts = merge(render(base), render(ours), render(theirs))
    assert (conflicts == 0) == ("<<<<<<<" not in out)
    both_kept = set(base) & set(ours) & set(theirs) | {"always"}
    dropped = {x for x in base if (x in ours) != (x in theirs)}  # deleted on one side, untouched on the other
    for side, mine in ((0, ours), (1, theirs)):
        got = set(texts(resolve(out, side)))
        assert both_kept | (set(mine) - set(base)) <= got  # kept on both, and this side's additions and changes
        assert not dropped & got
    if not conflicts:
        got = set(texts(out))
        assert got == both_kept | (set(ours) - set(base)) | (set(theirs) - set(base))


def test_neighbouring_conflicts_share_one_block_and_others_stay_apart():
    base = FM + "- a\n- b\n- c\n- d\n"
    out, conflicts = merge(base, FM + "- a1\n- b1\n- c\n- d1\n", FM + "- a2\n- b2\n- c\n- d2\n")
    assert conflicts == 2
    assert out == FM + ("<<<<<<< ours\n- a1\n- b1\n=======\n- a2\n- b2\n>>>>>>> theirs\n- c\n"
                        "<<<<<<< ours\n- d1\n=======\n- d2\n>>>>>>> theirs\n")


def test_a_seams_blank_line_next_to_a_conflict_goes_inside_the_side_that_needs_it():
    base = FM + "- a\n\nA paragraph.\n\n- b\n"
    ours = FM + "- a\n\nA paragraph, ours.\n\n- b\n"
    theirs = FM + "- a\n\nA paragraph, theirs.\n\n- b\n- y\n"
    out, conflicts = merge(base, ours, theirs)
    assert conflicts == 1
    assert texts(resolve(out, 0)) == ["a", "A paragraph, ours.", "b", "y"]
    assert texts(resolve(out, 1)) == ["a", "A paragraph, theirs.", "b", "y"]


def test_a_key_removed_on_one_side_and_untouched_on_the_other_is_removed():
    base = "---\ntype: knowledge\ndescription: old\nupdatedAt: 2026-01-01\n---\n- a\n"
    ours = base.replace("description: old\n", "")
    theirs = base.replace("updatedAt: 2026-01-01", "updatedAt: 2026-05-06") + "- b\n"
    out, conflicts = merge(base, ours, theirs)
    assert (out, conflicts) == ("---\ntype: knowledge\nupdatedAt: 2026-05-06\n---\n- a\n- b\n", 0)


# --------------------------------------------------------------------------- moves and headings (issue 40)


@st.composite
def reworked(draw, base: list[str]) -> list[str]:
    """`base` with items changed (`b` -> `b1`), then deleted or added (not both on one side: a
    new item where one was deleted reads as that item changed) and some kept items moved."""
    out = [x + draw(st.sampled_from(["", "", "1"])) for x in base]
    if draw(st.booleans()):
        out = [x for x in out if draw(st.booleans())]
    else:
        for new in draw(st.lists(st.sampled_from("klmnopqrst"), unique=True, max_size=3)):
            out.insert(draw(st.integers(0, len(out))), new)
    for _ in range(draw(st.integers(0, 2))):
        kept = [x for x in out if x in base]
        if not kept:
            break
        x = draw(st.sampled_from(kept))
        out.remove(x)
        out.insert(draw(st.integers(0, len(out))), x)
    return out


@given(st.data())
def test_an_entry_one_side_deleted_and_the_other_moved_never_comes_back(data):
    base = data.draw(ITEMS)
    ours, theirs = data.draw(reworked(base)), data.draw(reworked(base))
    render = lambda items: FM + "## S\n\n- always\n" + "".join(f"- {x}\n" for x in items)  # noqa: E731
    try:
        out, conflicts = merge(render(base), render(ours), render(theirs))
    except CannotMergeByEntry:
        return  # git merges the lines instead
    def deleted(x: str, side: list[str]) -> bool:
        return not any(y.startswith(x) for y in side)  # neither there nor changed (`b` -> `b1`)

    # deleted on one side, kept as it was (maybe moved) on the other
    gone = {x for x in base if (deleted(x, ours) and x in theirs) or (deleted(x, theirs) and x in ours)}
    for side in (0, 1):
        got = texts(resolve(out, side))
        assert not gone & set(got), (out, gone)
    if not conflicts:
        assert set(texts(out)) == (set(base) & set(ours) & set(theirs) | {"always"}
                                   | (set(ours) - set(base)) | (set(theirs) - set(base)))


def test_a_moved_entry_the_other_side_deleted_stays_deleted():
    base = FM + "- a\n- b\n- c\n- d\n"
    out, conflicts = merge(base, FM + "- a\n- c\n- d\n", FM + "- a\n- c\n- d\n- b\n")
    assert (out, conflicts) == (FM + "- a\n- c\n- d\n", 0)
    # the smallest case the fuzz found: ours moves c to the top, theirs deletes it
    out, conflicts = merge(FM + "- a\n- b\n- c\n", FM + "- c\n- a\n- b\n", FM + "- a\n- b\n")
    assert (out, conflicts) == (FM + "- a\n- b\n", 0)


def test_an_entry_added_under_a_heading_the_other_side_deleted_is_a_conflict():
    base = FM + "## Known Issues\n\n- a\n\n## Recent Fixes\n\n- b\n"
    ours = FM + "## Known Issues\n\n- a\n- b\n"  # "Recent Fixes" removed, its entry kept
    theirs = FM + "## Known Issues\n\n- a\n\n## Recent Fixes\n\n- b\n- fixed the login loop\n"
    out, conflicts = merge(base, ours, theirs)
    assert conflicts >= 1
    assert parse_text(resolve(out, 0)).entries == parse_text(ours).entries  # the deletion, whole
    resolved = [(e.text, e.section) for e in parse_text(resolve(out, 1)).entries]
    assert ("fixed the login loop", "Recent Fixes") in resolved and ("b", "Recent Fixes") in resolved


def test_an_entry_added_after_a_neighbour_the_other_side_rewrote_into_another_section_keeps_its_section():
    base = FM + "## Known Issues\n\n- login loops\n- slow search\n\n## Recent Fixes\n\n- fixed a crash\n"
    ours = FM + "## Known Issues\n\n- slow search\n\n## Recent Fixes\n\n- fixed a crash\n- login loops, fixed\n"
    theirs = FM + ("## Known Issues\n\n- login loops\n- cache goes stale\n- slow search\n\n## Recent Fixes\n\n"
                   "- fixed a crash\n")
    try:
        out, conflicts = merge(base, ours, theirs)
    except CannotMergeByEntry:
        return  # left to git: never a silent move
    for side in (0, 1):
        sections = {e.text: e.section for e in parse_text(resolve(out, side)).entries}
        assert sections.get("cache goes stale", "Known Issues") == "Known Issues", out


def test_a_single_entry_file_edited_on_different_lines_merges_as_git_would():
    base = "---\nname: Testing\n---\n\n# Testing\n\nUse vitest.\n\nMock the network.\n\nRun it in CI.\n"
    ours = base.replace("Use vitest.", "Use vitest, not jest.")
    theirs = base.replace("Run it in CI.", "Run it in CI on every push.")
    out, conflicts = merge(base, ours, theirs)
    assert (out, conflicts) == (base.replace("Use vitest.", "Use vitest, not jest.")
                                .replace("Run it in CI.", "Run it in CI on every push."), 0)
