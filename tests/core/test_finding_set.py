"""The packed findings a face holds (`core/finding_set.py`) against the plain list and a
dict per entry: the same findings in the same order, each entry's the same."""

from __future__ import annotations

import pickle
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core.finding import Finding, conflict_file
from memtui.core.finding_set import PACK_MIN, FindingIndex, FoundSet, PackedRun


def by_entry_reference(found: list[Finding], entries: list[SimpleNamespace]) -> dict[str, tuple[Finding, ...]]:
    """Each entry's findings, the plain way: its own in order, then its file's conflicts."""
    out: dict[str, list[Finding]] = {}
    files: dict[tuple[str | None, str], list[Finding]] = {}
    for f in found:
        if f.entry_id:
            out.setdefault(f.entry_id, []).append(f)
        elif f.kind == "conflict":
            files.setdefault(conflict_file(f), []).append(f)
    for e in entries:
        for f in files.get((e.layer, e.rel_path), ()):
            out.setdefault(e.id, []).append(f)
    return {k: tuple(v) for k, v in out.items()}


IDS = st.sampled_from(["a", "b", "c", "mem-1", "mem-10", "mem-2", "x\ny", "é", ""])


@st.composite
def finding_lists(draw: st.DrawFn) -> list[Finding]:
    out: list[Finding] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["never_injected", "duplicate", "conflict", "contradiction", "stale_reference"]))
        reasons = draw(st.sampled_from([["r1"], ["r1", "r2", "a longer reason"]]))
        layer = draw(st.sampled_from(["user", "conversation", None]))
        length = draw(st.sampled_from([1, 3, PACK_MIN - 1, PACK_MIN, PACK_MIN + 5]))
        for _ in range(length):
            entry_id = draw(IDS)
            reason = draw(st.sampled_from(reasons))
            other = draw(st.sampled_from([None, None, "b"]))
            source = draw(st.sampled_from(["notes.md:3", f"conversation:c/{entry_id}", f"{entry_id}x", entry_id]))
            out.append(Finding(kind, source, reason, entry_id or None, layer, other, "o.md:1" if other else None))
    return out


ENTRIES = [SimpleNamespace(id=i, layer=layer, rel_path=path)
           for i, layer, path in [("a", "user", "notes.md"), ("b", None, "notes.md"), ("c", "conversation", "")]]


@settings(max_examples=300, deadline=None)
@given(finding_lists())
def test_a_found_set_is_the_list_it_was_made_of(found: list[Finding]) -> None:
    packed = FoundSet(found)
    assert len(packed) == len(found)
    assert list(packed) == found
    assert [packed[i] for i in range(len(found))] == found
    assert [packed[-i - 1] for i in range(len(found))] == found[::-1]
    assert packed[1:5] == found[1:5]
    assert packed == found
    assert pickle.loads(pickle.dumps(packed)) == found
    for kind in ("never_injected", "duplicate", "conflict", "contradiction", "stale_reference", "index"):
        assert packed.has_kind(kind) == any(f.kind == kind for f in found)


@settings(max_examples=300, deadline=None)
@given(finding_lists())
def test_each_entry_has_the_findings_a_dict_gives(found: list[Finding]) -> None:
    reference = by_entry_reference(found, ENTRIES)
    index = FindingIndex(pickle.loads(pickle.dumps(FoundSet(found))), lambda: ENTRIES)
    for entry_id in ["a", "b", "c", "mem-1", "mem-10", "mem-2", "x\ny", "é", "", "zz"]:
        assert index.get(entry_id) == reference.get(entry_id, ()), entry_id
        assert (entry_id in index) == (entry_id in reference)
        assert index.kinds(entry_id) == [f.kind for f in reference.get(entry_id, ())]


def test_a_long_run_is_packed_and_holds_no_finding_objects() -> None:
    found = [Finding("never_injected", f"conversation:c1/mem-{i}", "not injected in the last 30 days",
                     f"mem-{i}", "conversation") for i in range(5000)]
    packed = FoundSet(found)
    assert [type(s) for s in packed.segments] == [PackedRun]
    run = packed.segments[0]
    assert isinstance(run, PackedRun)
    held = _allocated_by(lambda: pickle.loads(pickle.dumps(packed)))
    assert held * 4 < _allocated_by(lambda: pickle.loads(pickle.dumps(found)))  # a few strings, not an object each
    index = FindingIndex(packed)
    assert index.get("mem-4321") == (found[4321],)
    assert index.get("mem-5000") == ()


def _allocated_by(make: object) -> int:
    import tracemalloc

    assert callable(make)
    tracemalloc.start()
    try:
        kept = make()
        size = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del kept
    return size


def test_short_runs_stay_findings() -> None:
    found = [Finding("duplicate", f"a.md:{i}", "same as b.md:1", f"e{i}", "user") for i in range(PACK_MIN - 1)]
    assert all(isinstance(s, list) for s in FoundSet(found).segments)


def index_finding(path: str) -> Finding:
    return Finding("index", path, "changed since it was indexed")


@settings(max_examples=200, deadline=None)
@given(finding_lists(), finding_lists(), st.lists(st.sampled_from(["a.md", "b.md", "c.md"]), min_size=1, max_size=3),
       st.lists(st.sampled_from(["a.md", "d.md"]), max_size=2))
def test_a_kinds_findings_replaced_in_place_are_the_list_with_them_replaced(
        before: list[Finding], after: list[Finding], stale: list[str], now: list[str]) -> None:
    """`with_kind`: the same as the plain list with the findings of that kind replaced where
    the first was; the packed runs of the other kinds taken as they were."""
    found = FoundSet([*before, *map(index_finding, stale), *after])
    replaced = found.with_kind("index", list(map(index_finding, now)))
    assert list(replaced) == [*before, *map(index_finding, now), *after]
    assert len(replaced) == len(before) + len(now) + len(after)
    assert [replaced[i] for i in range(len(replaced))] == list(replaced)
    packed = [s for s in found.segments if isinstance(s, PackedRun)]
    assert all(any(s is r for r in replaced.segments) for s in packed)  # the same objects, not made again


def test_findings_of_a_kind_that_is_not_there_or_packed_are_not_replaced() -> None:
    import pytest

    found = FoundSet([Finding("never_injected", f"c/{i}", "never injected", f"m{i}", "conversation")
                      for i in range(PACK_MIN)])
    with pytest.raises(ValueError, match="no index finding"):
        found.with_kind("index", [index_finding("a.md")])
    with pytest.raises(ValueError, match="packed"):
        found.with_kind("never_injected", [])
