"""A store whose conversation layer stays in the prepared index (`rows_from_prepared`, as the
TUI keeps a large one: `core.store.saved_rows`) holds the same memories as a store that reads
every row, change after change (rows added, changed, deleted, moved by another writer; files
edited): the same entries field for field, each found by its id, listed in the pane's order,
and the same inbox in the same order. The expectations come from a plain store's load."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core import actions
from memtui.core.model import FILE_LAYERS, Layer
from memtui.core.settings import load_settings
from memtui.core.store import MemoryStore, current_layers
from memtui.core.store import prepared as prep
from memtui.core.store.saved_rows import SavedEntries, each_entry
from tests.core.test_injection import OPS, _built, _change, _corpus_on_disk
from tests.core.test_pane_order import expected
from tests.helpers import enable


def fields(entries):
    return sorted(entries, key=lambda e: e.id)


@settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=5),
       rebase=st.sampled_from([1, current_layers.REBASE_ROWS]), accepted=st.booleans())
def test_a_store_that_leaves_the_rows_in_the_prepared_index_holds_what_a_full_load_holds(seed, ops, rebase, accepted):
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(current_layers, "REBASE_ROWS", rebase):
        paths = _corpus_on_disk(Path(tmp), rnd)
        _built(paths, "database")  # the prepared index saved, as the TUI's start opens it
        lazy = MemoryStore(paths)
        lazy.rows_from_prepared(lambda: prep.saved_conversation(paths, load_settings(paths)), 0)
        lazy.load()
        try:
            for op in ["nothing", *ops]:
                _change(paths, rnd, op)
                _built(paths, "database")  # the next preview takes the change in (and saves what it saves)
                lazy.reload()  # as the watcher does
                plain = MemoryStore(paths)
                plain.load()
                if accepted and plain.snapshot(Layer.CONVERSATION):
                    actions.accept(plain, plain.snapshot(Layer.CONVERSATION)[:1])
                try:
                    saved = lazy.snapshot(Layer.CONVERSATION)
                    want = plain.snapshot(Layer.CONVERSATION)
                    assert isinstance(saved, SavedEntries)
                    assert fields(saved) == fields(want)
                    assert fields(each_entry(saved.source)) == fields(want)
                    assert [e.id for e in saved] == expected(Layer.CONVERSATION, want)[0]
                    assert [(title, count) for title, _, count in expected(Layer.CONVERSATION, want)[1]] == saved.groups
                    for e in want:
                        assert lazy.get(e.id) == e
                        assert saved[saved.index_of_id(e.id)] == e
                    assert lazy.get("no-such-id") is None and saved.index_of_id("no-such-id") is None
                    for layer in FILE_LAYERS:
                        assert lazy.snapshot(layer) == plain.snapshot(layer)
                    got, wanted = actions.inbox(lazy), actions.inbox(plain)
                    assert [(p.entry, p.provenance) for p in got] == [(p.entry, p.provenance) for p in wanted]
                    assert [got.index_of_id(p.entry.id) for p in wanted] == list(range(len(wanted)))
                    assert got.index_of_id("no-such-id") is None
                    assert [e.id for e in actions.unreviewed(lazy)] == [e.id for e in actions.unreviewed(plain)]
                finally:
                    plain.close()
        finally:
            lazy.close()


def test_a_small_conversation_layer_is_read_into_entries_as_before(paths):
    """Below the least rows asked for, the store reads the rows as it always did."""
    from memtui.core.store.conversations import Conversations

    enable(paths)
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "one", str(paths.workspace))
    db.add("a row of its own", conversation_id="c1")
    db.close()
    _built(paths, "row")
    store = MemoryStore(paths)
    store.rows_from_prepared(lambda: prep.saved_conversation(paths, load_settings(paths)), 2)
    store.load()
    try:
        assert isinstance(store.snapshot(Layer.CONVERSATION), tuple)
        assert [e.text for e in store.snapshot(Layer.CONVERSATION)] == ["a row of its own"]
    finally:
        store.close()


@settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_saved_layers_positions_of_ids_are_those_its_ids_section_gives(seed):
    """`SavedLayer.positions`: ids the layer never had are told from the section's bytes
    without making its ids into strings; the positions are those of the section read whole,
    for ids it has, ids it has not, an id that is part of another one's, one not in ASCII."""
    import marshal
    from itertools import compress, count

    from memtui.core.store.saved_layer import open_layer

    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        paths = _corpus_on_disk(Path(tmp), rnd)
        _built(paths, "database")
        saved = open_layer(paths, load_settings(paths), Layer.CONVERSATION)
        assert saved is not None
        try:
            ids = marshal.loads(saved.sections.raw(*saved.saved["ids"]))
            asked = [frozenset(), frozenset({"never-saved", "mémoire-é", "\udcff"}),
                     frozenset(i[:-1] for i in ids), frozenset(rnd.sample(ids, min(2, len(ids)))),
                     frozenset({*ids[:1], "never-saved"}), frozenset(ids)]
            for wanted in asked:
                assert saved.positions(wanted) == list(compress(count(), map(wanted.__contains__, ids)))
        finally:
            saved.close()



@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), added=st.integers(1, 6), deleted=st.integers(0, 2))
def test_a_patched_layers_counts_as_bitmaps_are_those_of_the_layer_indexed_afresh(seed, added, deleted):
    """Rows added and deleted since the conversation layer was saved are laid over it
    (`PatchedLayer`); counted as a large layer's are (bitmaps: the saved layer's moved run
    by run), a query's counts and the walk's order are those of the layer indexed afresh
    from the store's entries, and those of the same layer counted position by position."""
    from memtui.core.relevance import terms
    from memtui.core.store.conversations import Conversations
    from memtui.core.store.layer_index import LayerIndex
    from memtui.core.store.level_counts import LevelCounts
    from memtui.core.store.patched_layer import PatchedLayer
    from tests.core.test_injection import PHRASES

    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        paths = _corpus_on_disk(Path(tmp), rnd)
        db = Conversations(paths.db_path)
        for i in range(8):
            db.add(f"{rnd.choice(PHRASES)} saved {i}", conversation_id="c-here", memory_id=f"saved{i}")
        _built(paths, "database")  # the layer saved
        for i in range(added):
            db.add(f"{rnd.choice(PHRASES)} added {i}", conversation_id="c-here", memory_id=f"added{i}")
        conn = db.database.open(create=False)
        for i in rnd.sample(range(8), deleted):
            conn.execute("DELETE FROM memories WHERE id = ?", [f"saved{i}"])
        conn.commit()
        db.close()
        layer = prep.saved_conversation(paths, load_settings(paths))
        assert isinstance(layer, PatchedLayer)
        plain = MemoryStore(paths, index=False)
        plain.load()
        fresh = LayerIndex.from_entries(Layer.CONVERSATION, list(plain.snapshot(Layer.CONVERSATION)))
        plain.close()
        for query in [*PHRASES, "saved added", "zzz"]:
            q = terms(query)
            with mock.patch.object(LayerIndex, "BITMAP_MIN", 0):
                as_bits = layer.shared(q)
                walked = [(n, list(run)) for n, run in layer.in_order(as_bits, False)]
            assert isinstance(as_bits, LevelCounts)
            one_by_one = layer.shared(q)
            assert not isinstance(one_by_one, LevelCounts)
            assert dict(as_bits) == dict(one_by_one) == dict(fresh.shared(q))
            assert walked == [(n, list(run)) for n, run in fresh.in_order(fresh.shared(q), False)]
