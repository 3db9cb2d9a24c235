"""The order the TUI's panes list a layer in, saved with the prepared index (a section of its
own) and kept right as the index takes changes in: an edited file spliced in, rows laid over
the saved layer (`PatchedLayer`) or spliced in past `REBASE_ROWS`. The expected order is
worked out here from a fresh load's entries, independently of the code under test."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Sequence
from itertools import groupby
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core.injection import LineMaker
from memtui.core.model import LAYERS, Entry, Layer
from memtui.core.settings import load_settings
from memtui.core.store import current_layers, saved_layer
from memtui.core.store import prepared as prep
from memtui.core.store.layer_index import LayerIndex
from memtui.core.store.patched_layer import PatchedLayer
from tests.core.test_injection import OPS, PHRASES, _built, _change, _corpus_on_disk
from tests.helpers import enable, write


def expected(layer: str, entries: Sequence[Entry]) -> tuple[list[str], list[tuple[str, float, int]]]:
    """(ids in pane order, groups): Markdown by file and line; conversations newest first (the
    one with the newest memory first, then by title; untitled last), each newest first, then by id."""
    if layer != Layer.CONVERSATION:
        return [e.id for e in sorted(entries, key=lambda e: (e.rel_path, e.line_start))], []
    by_title: dict[str, list[Entry]] = {}
    for e in entries:
        by_title.setdefault(e.conversation_title, []).append(e)
    ids: list[str] = []
    groups = []
    for title in sorted(by_title, key=lambda t: (t == "", -max(e.updated_at for e in by_title[t]), t)):
        members = sorted(by_title[title], key=lambda e: (-e.updated_at, e.id))
        ids += [e.id for e in members]
        groups.append((title, members[0].updated_at, len(members)))
    return ids, groups


def listed(index) -> tuple[list[str], list[tuple[str, float, int]]]:
    order, groups = index.pane()
    return [index.fields(pos, ("id",))[0] for pos in order], [tuple(g) for g in groups]


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=5),
       rebase=st.sampled_from([1, current_layers.REBASE_ROWS]))
def test_the_saved_pane_order_follows_every_change(seed, ops, rebase):
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(current_layers, "REBASE_ROWS", rebase):
        paths = _corpus_on_disk(Path(tmp), rnd)
        for op in ["nothing", *ops]:
            _change(paths, rnd, op)
            _built(paths, "database")  # takes the change in (and saves what it saves)
            settings_now = load_settings(paths)
            prepared = prep.load_prepared(paths, settings_now)
            fresh = prep.prepare(paths, settings_now, save=False)  # the memories loaded, nothing saved
            if prepared is None:
                continue  # (a bad file that just changed: nothing saved to check)
            for layer in LAYERS:
                index, own = prepared.indexes[layer], fresh.indexes[layer]
                entries = [own.entry(pos) for pos in range(own.size)]
                assert listed(index) == expected(layer, entries), (op, layer)
                assert sorted(index.all_entries(), key=lambda e: e.id) == sorted(entries, key=lambda e: e.id)


def _row(i: int, title: str, updated: float) -> Entry:
    return Entry(id=f"r{i:04d}", layer=Layer.CONVERSATION, text=f"{PHRASES[i % len(PHRASES)]} {i}",
                 updated_at=updated, conversation_id=title and f"c-{title}", conversation_title=title,
                 status="archived" if i % 11 == 0 else "active")


def _saved(entries: list[Entry]) -> LayerIndex:
    """A conversation layer as the prepared index saves and reads it back (its pane order saved)."""
    state = LayerIndex.from_entries(Layer.CONVERSATION, entries).state(LineMaker(200, False))
    lists = [state.pop(name) for name in ("rows", "shown", "made", "frags")]
    return saved_layer.index_of({**state, "size": len(lists[0])}, lists, state.pop("postings"))


def test_rows_laid_over_a_saved_layer_reorder_only_what_they_touch():
    rnd = random.Random(7)
    titles = ["alpha", "beta", "gamma", "delta", ""]
    base_entries = [_row(i, rnd.choice(titles), float(rnd.randint(0, 50))) for i in range(300)]
    base = _saved(base_entries)
    assert listed(base) == expected(Layer.CONVERSATION, base_entries)
    for trial in range(30):
        removed = rnd.sample(range(base.size), rnd.randint(0, 40))
        gone = {base.entry(pos).id for pos in removed}
        added = [_row(1000 + 100 * trial + k, rnd.choice([*titles, "new one", "zeta"]),
                      float(rnd.choice([rnd.randint(0, 50), 99]))) for k in range(rnd.randint(0, 12))]
        if trial % 3 == 0 and removed:  # a row changed: its old version out, the new one (another title) in
            old = base.entry(removed[0])
            added.append(_row(int(old.id[1:]), "retitled", old.updated_at))
        patched = PatchedLayer(base, removed, LayerIndex.from_entries(Layer.CONVERSATION, added))
        now = [e for e in base_entries if e.id not in gone] + added
        assert listed(patched) == expected(Layer.CONVERSATION, now), trial
        merged = patched.all_entries()
        assert merged == [patched.entry(pos) for pos in range(patched.size)]
        assert sorted(merged, key=lambda e: e.id) == sorted(now, key=lambda e: e.id)


def test_a_conversation_gets_its_own_group_however_its_rows_were_added():
    """A new row in an old conversation moves that conversation first; the others keep their order."""
    entries = [_row(i, title, float(i)) for i, title in enumerate(["a", "a", "b", "c", "c", ""])]
    base = _saved(entries)
    ids, groups = listed(base)
    assert [title for title, _, _ in groups] == ["c", "b", "a", ""]
    title_of = {e.id: e.conversation_title for e in entries}
    assert [(t, len(list(g))) for t, g in groupby(ids, key=title_of.__getitem__)] == [("c", 2), ("b", 1), ("a", 2), ("", 1)]
    patched = PatchedLayer(base, [], LayerIndex.from_entries(Layer.CONVERSATION, [_row(9, "a", 100.0)]))
    ids, groups = listed(patched)
    assert groups == [("a", 100.0, 3), ("c", 4.0, 2), ("b", 2.0, 1), ("", 5.0, 1)]
    assert ids == ["r0009", "r0001", "r0000", "r0004", "r0003", "r0002", "r0005"]


def test_the_pane_order_is_a_section_read_only_when_asked_for(paths):
    """`memtui preview` and the hook never read it; the TUI does, and a damaged one is found then."""
    from memtui.core.serve import build_injection

    write(paths.user_root / "notes.md", "- b first\n- a second\n\n## Later\n\n- c third\n")
    write(paths.user_root / "a.md", "- in a file listed first\n")
    enable(paths)
    worked = paths
    build_injection(worked.workspace, "vitest", home=worked.home)
    settings_now = load_settings(worked)
    saved = saved_layer.open_layer(worked, settings_now, "user")
    assert saved is not None and callable(saved.index.pane_saved)  # not read at opening
    _, length, _ = saved.saved["pane"]
    assert length > 0 and "pane" not in saved.saved["core"]
    index = saved.index
    assert [index.text(pos) for pos in index.pane()[0]] == ["in a file listed first", "b first", "a second", "c third"]
    saved.close()
    path = prep.cache_path(worked, "user")
    data = bytearray(path.read_bytes())
    data[saved.sections.base + saved.saved["pane"][0]] ^= 0xFF
    path.write_bytes(bytes(data))
    damaged = saved_layer.open_layer(worked, settings_now, "user")
    assert damaged is not None
    with pytest.raises(prep.DamagedPreparedIndex, match="prepared index is damaged"):
        damaged.index.pane()
