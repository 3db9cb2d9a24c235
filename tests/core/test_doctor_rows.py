"""The doctor over a conversation layer left in the prepared index (`core.doctor_rows`: its
rows read once as columns, an entry made only when a check reports it) finds exactly what it
finds with every row made an entry, in the same order, whatever the settings; and it never
makes the whole layer's entries at once."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core import doctor
from memtui.core.doctor_rows import ALONE_SHARE, Columns
from memtui.core.forgetting_actions import set_expiry
from memtui.core.model import LAYERS, Layer
from memtui.core.paths import Paths
from memtui.core.serve import build_injection
from memtui.core.store import MemoryStore
from memtui.core.store.conversations import Conversations
from memtui.core.store.layer_index import LayerIndex
from memtui.core.store.patched_layer import PatchedLayer
from memtui.core.store.saved_rows import SavedEntries
from tests.core.test_injection import PHRASES, _built, _change, _corpus_on_disk
from tests.helpers import enable, write

PLANTED = ["The API listens on port 8080", "The API listens on port 9090", "the api listens on PORT 8080",
           "The retry helper lives in src/gone/retry.ts", "Deploys happen on Friday", "Deploys happen on Monday",
           "**NEVER**:"]


def _store(base: Path, rnd: random.Random, options: dict) -> Paths:
    """The injection tests' corpus, with rows that the checks find things in: near-duplicates,
    contradictions, a stale path, a line of CLAUDE.md, rows of one date (ordered by id)."""
    paths = _corpus_on_disk(base, rnd)
    db = Conversations(paths.db_path)
    for i in range(rnd.randint(4, 30)):
        text = rnd.choice(PLANTED + PHRASES)
        db.add(text if rnd.random() < 0.6 else f"{text} {rnd.randint(0, 3)}", conversation_id=rnd.choice(["c-here", None]),
               source=rnd.choice(["auto", "manual", "import"]), memory_id=f"m{rnd.randint(0, 10**6)}-{i}",
               updated_at=1_700_000_000_000 + rnd.randint(0, 3) * 1000)
    db.add(PLANTED[3], conversation_id="c-here", memory_id="stale", updated_at=1_700_000_000_000)
    db.close()
    write(paths.workspace / "CLAUDE.md", "- Deploys happen on Friday\n")
    write(paths.workspace / "src" / "here.ts", "export {}\n")  # (so `src/gone/…` is stale)
    write(paths.project_root / "ttl.md", "---\nexpires: 2020-01-01\n---\n\n- an old note about src/gone/old.ts\n")
    enable(paths, {"maxItemChars": rnd.choice([20, 200]), "memory": options})
    store = MemoryStore(paths)
    store.load()
    try:  # some rows given an expiry of memtui's own (`memtui expire`)
        rows = list(store.snapshot(Layer.CONVERSATION))
        set_expiry(store, rnd.sample(rows, min(2, len(rows))), 1_600_000_000.0)
    finally:
        store.close()
    return paths


def _whole_layer_made(*_args: object) -> None:
    raise AssertionError("the doctor made every entry of a layer left in the prepared index")


OPTIONS = st.fixed_dictionaries({}, optional={
    "requireReview": st.just(True),
    "decay": st.just({"halfLifeDays": 30}),
    "budget": st.just({"total": 300, "user": 100, "project": 100, "conversation": 100}),
    "gate": st.just({"conversation": 0}),
})


@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), options=OPTIONS, op=st.sampled_from(["nothing", "row_add", "row_change", "row_delete"]),
       history=st.booleans())
def test_the_doctor_over_saved_rows_finds_what_it_finds_over_entries(seed, options, op, history):
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        paths = _store(Path(tmp), rnd, options)
        _built(paths, "database")  # the prepared index saved
        _change(paths, rnd, op)  # rows changed since: laid over the saved layer
        if history:
            build_injection(paths.workspace, "database port", home=paths.home, record=True)
        with mock.patch.object(doctor, "ROWS_LEFT_SAVED", 10**9), \
                mock.patch.object(doctor, "_judged", lambda snapshot: snapshot.entries()):  # the rules alone
            wanted = doctor.findings(paths)
            wanted_read = doctor.findings_read(paths)
        assert any(f.layer == Layer.CONVERSATION for f in wanted)
        with mock.patch.object(doctor, "ROWS_LEFT_SAVED", 0), \
                mock.patch.object(SavedEntries, "__iter__", _whole_layer_made), \
                mock.patch.object(LayerIndex, "all_entries", _whole_layer_made), \
                mock.patch.object(PatchedLayer, "all_entries", _whole_layer_made), \
                mock.patch.object(SavedEntries, "each_entry", autospec=True, side_effect=SavedEntries.each_entry) as read:
            assert doctor.findings(paths) == wanted
            assert doctor.findings_read(paths) == wanted_read
        assert read.call_count >= 2  # each run read the layer left in the prepared index


def test_columns_are_the_entries_they_were_read_from(paths):
    """Over a layer left in the prepared index and over plain entries alike: each place's
    fields and entry, in the layers' order (the conversation layer in its base order)."""
    _store_in(paths)
    store = MemoryStore(paths, index=False)
    plain = MemoryStore(paths, index=False)
    try:
        with mock.patch.object(doctor, "ROWS_LEFT_SAVED", 0):
            doctor._load(store, doctor.load_settings(paths))
        doctor._load(plain, doctor.load_settings(paths))  # (offered in base order by the prepared index)
        saved = store.snapshot(Layer.CONVERSATION)
        assert isinstance(saved, SavedEntries)
        columns = Columns(store.snapshot(layer) for layer in LAYERS)
        entries = plain.entries()
        assert list(columns) == entries
        assert [columns[i] for i in range(len(columns))] == entries == columns[:]
        assert columns[-1] == entries[-1]
        with pytest.raises(IndexError):
            columns[len(entries)]
        assert columns.text == [e.text for e in entries] and columns.ids == [e.id for e in entries]
        assert list(columns.archived) == [e.archived for e in entries]
        assert list(columns.updated_at) == [e.updated_at for e in entries]
        assert columns.importance == [e.importance for e in entries]
        assert columns.expires == [e.expires for e in entries]
        n = len(entries)
        few, most = (lambda i: i % 12 == 0), (lambda i: i % 3 != 0)  # made each alone / in one pass
        assert sum(map(few, range(n))) * ALONE_SHARE < n <= sum(map(most, range(n))) * ALONE_SHARE
        for keep in (few, most):
            assert list(columns.where(keep)) == [e for i, e in enumerate(entries) if keep(i)]
        visible = doctor._visible(columns)
        assert list(visible) == doctor._visible(entries) and visible.text == [e.text for e in visible]
    finally:
        store.close()
        plain.close()


def _store_in(paths: Paths) -> None:
    enable(paths)
    write(paths.user_root / "u.md", "- Deploys happen on Friday\n- an archived one\n")
    write(paths.project_root / "p.md", "---\nstatus: archived\n---\n\n- The API listens on port 9090\n")
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "one", str(paths.workspace))
    for i, text in enumerate(PLANTED * 3):
        db.add(text, conversation_id="c1", memory_id=f"row{i % 7}-{i}", updated_at=1_700_000_000_000 + (i % 4) * 1000)
    db.close()
    _built(paths, "database")
