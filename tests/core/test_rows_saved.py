"""The conversation layer saved a batch at a time (core/store/rows_saved.py): the same layer,
answer for answer, as the one built in memory from every row at once, whatever the batches,
and built in memory instead whenever SQLite's order of the rows is not the base order."""

from __future__ import annotations

import json
import logging
import random
import sqlite3
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core.injection import LineMaker, inject
from memtui.core.paths import Paths
from memtui.core.serve import build_injection
from memtui.core.settings import load_settings
from memtui.core.store import build_layers as build_layers_module
from memtui.core.store import prepared as prep
from memtui.core.store import rows_saved, saved_file
from memtui.core.store.build_layers import build_layers
from memtui.core.store.conversations import Conversations
from memtui.core.store.layer_index import LayerIndex
from tests.helpers import enable

TEXTS = ["database pool timeout", "数据库连接池配置过小，高并发时超时", "deploy with token=abcd1234efgh5678",
         "redis   queue\tretry", "password=hunter22 in the config", "缓存 索引 查询", "Use vitest, not jest", "é ｖｉｔｅ 가나",
         "a very long line " * 12, ""]
QUERIES = ["database pool 数据库", "token vitest", "redis 缓存 索引", "zzz", ""]
FIELDS = ("id", "text", "tags", "category", "source", "conversation_id", "conversation_title", "updated_at")


def _home(base: Path, max_chars: int = 200, redact: bool = True) -> Paths:
    (base / "home" / "memory").mkdir(parents=True)
    (base / "ws" / ".muse" / "memory").mkdir(parents=True)
    paths = Paths((base / "home").resolve(), (base / "ws").resolve())
    enable(paths, {"maxItemChars": max_chars, "redactSecrets": redact})
    db = Conversations(paths.db_path)
    db.ensure_conversation("c-here", "here", str(paths.workspace))
    db.ensure_conversation("c-later", "", str(paths.workspace))  # no title: listed last in its pane
    db.ensure_conversation("c-else", "elsewhere", str(base / "other"))
    db.close()
    return paths


def _add_rows(paths: Paths, rnd: random.Random, n: int) -> None:
    db = Conversations(paths.db_path)
    for i in range(n):
        ident = rnd.choice(["r", "R", "é", "数", "r-"]) + f"{rnd.randint(0, 10**6)}-{i}"
        db.add(rnd.choice(TEXTS) + rnd.choice(["", f" {i}", " 数据库"]), memory_id=ident,
               category=rnd.choice(["knowledge", "decision"]), tags=rnd.choice([(), ("redis",), ("数据库", "pool")]),
               conversation_id=rnd.choice(["c-here", "c-later", "c-else", None]),
               updated_at=rnd.choice([1_700_000_000_000, 1_700_000_000_000 + i, 0, 1_900_000_000_123]))  # ties
    db.close()


def _same_layer(a: LayerIndex, b: LayerIndex, maker: LineMaker) -> None:
    """Every answer the two indexes give, position by position: entries, lines, JSON, postings, pane."""
    assert (a.size, a.n_active, list(a.rank), a.groups) == (b.size, b.n_active, list(b.rank), b.groups)
    for p in range(a.size):
        assert a.fields(p, FIELDS) == b.fields(p, FIELDS), p
        assert (a.entry(p), a.shown(p), a.made(p, maker)) == (b.entry(p), b.shown(p), b.made(p, maker)), p
        assert a.candidate_json(p, maker) == b.candidate_json(p, maker), p
    assert {t: bytes(a.postings[t]) for t in a.postings} == {t: bytes(b.postings[t]) for t in b.postings}
    (order_a, groups_a), (order_b, groups_b) = a.pane(), b.pane()
    assert (list(order_a), [tuple(g) for g in groups_a]) == (list(order_b), [tuple(g) for g in groups_b])
    assert (a.focus(), dict(a.scoped()), a.expiring()) == (b.focus(), dict(b.scoped()), b.expiring())


def _answers(paths: Paths, query: str, indexes: dict) -> str:
    settings_ = load_settings(paths)
    r = inject(indexes, settings_, query, workspace=str(paths.workspace))
    data = json.loads(r.to_json())
    data.pop("retrieval_ms")
    assert b"".join(r.json_bytes()) == r.to_json().encode()
    return r.text + json.dumps(data, ensure_ascii=False)


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 40), chunk=st.sampled_from([1, 2, 4]),
       per_batch=st.sampled_from([1, 3]), max_chars=st.sampled_from([12, 200]), redact=st.booleans())
def test_a_layer_saved_a_batch_at_a_time_is_the_layer_built_at_once(seed, n, chunk, per_batch, max_chars, redact):
    """Rows of every shape (ties of updated_at, ids out of ASCII, no conversation, a
    conversation without a title, tags, secrets, wide text), read in batches of a few rows:
    the saved layer answers as the one built in memory from every row, in every position and
    for every query, the JSON records included."""
    rnd = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(saved_file, "CHUNK", chunk), \
            mock.patch.object(rows_saved, "BATCH", chunk * per_batch):
        paths = _home(Path(tmp), max_chars, redact)
        _add_rows(paths, rnd, n)
        settings_ = load_settings(paths)
        built, failed = build_layers(paths, settings_, True, ["conversation"])
        streamed = built["conversation"][0]
        assert failed == frozenset() and built["conversation"][1] == []
        assert isinstance(streamed.rows, saved_file.Chunks)  # answered from the file just saved
        fresh, _ = build_layers(paths, settings_, False, ["conversation"])  # in memory, every row at once
        maker = LineMaker(settings_.max_item_chars, settings_.redact_secrets)
        _same_layer(streamed, fresh["conversation"][0], maker)
        others = prep.prepare(paths, settings_, save=False).indexes
        for query in QUERIES:
            assert _answers(paths, query, {**others, "conversation": streamed}) == \
                _answers(paths, query, {**others, "conversation": fresh["conversation"][0]})


def _insert(paths: Paths, rows: list[tuple[str, str, object]]) -> None:
    conn = sqlite3.connect(paths.db_path)
    conn.executemany("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, "
                     "created_at, updated_at) VALUES (?, 'conversation', 'knowledge', CAST(? AS TEXT), '[]', 'auto', 'c-here', "
                     "NULL, 1, ?)",
                     rows)
    conn.commit()
    conn.close()


@pytest.mark.parametrize("rows", [
    # a REAL date SQLite orders before the INTEGER one that memtui reads as the same second: the id decides
    [("b", "database pool one", 1_700_000_000_000.5), ("a", "database pool two", 1_700_000_000_000)],
    # a text that is not UTF-8: left out alone, as when every row is read at once
    [("a", "database pool fine", 1_700_000_000_000), ("b", b"database pool \xff bad", 1_700_000_000_001)],
])
def test_rows_sqlite_orders_otherwise_are_built_in_memory(paths, rows, caplog):
    """When the rows cannot be saved a batch at a time exactly, nothing is saved that way: the
    layer is built in memory as before, saved, and answers as a fresh load."""
    enable(paths)
    Conversations(paths.db_path).ensure_conversation("c-here", "here", str(paths.workspace))
    _insert(paths, rows)
    query = "database pool"
    settings_ = load_settings(paths)
    fresh = prep.prepare(paths, settings_, save=False)
    want = _answers(paths, query, fresh.indexes)
    with caplog.at_level(logging.INFO, logger="memtui.prepared"):
        r = build_injection(paths.workspace, query, home=paths.home)
    assert "not saved a batch at a time" in caplog.text
    assert prep.cache_path(paths, "conversation").is_file()  # saved by the build in memory
    assert r.text == fresh_text(paths, query)
    prepared = prep.load_prepared(paths, settings_)
    assert prepared is not None and _answers(paths, query, prepared.indexes) == want


def fresh_text(paths: Paths, query: str) -> str:
    settings_ = load_settings(paths)
    p = prep.prepare(paths, settings_, save=False)
    return inject(p.indexes, settings_, query, workspace=str(paths.workspace), failed_layers=p.failed_layers,
                  errors=list(settings_.problems) + p.problems).text


def test_a_failed_write_leaves_no_file_and_the_layer_still_answers(paths, monkeypatch):
    """A write that fails halfway (the disk full) leaves neither a layer file nor a temporary
    one: the layer is built in memory and answers as a fresh load."""
    from memtui.core import fileio

    enable(paths)
    _home_rows = random.Random(3)
    Conversations(paths.db_path).ensure_conversation("c-here", "here", str(paths.workspace))
    _add_rows(paths, _home_rows, 30)
    real = fileio.atomic_write_parts

    def full(path, parts, *, root=None):
        def failing():
            yield next(iter(parts))
            raise OSError(28, "No space left on device")
        return real(path, failing(), root=root)

    monkeypatch.setattr(fileio, "atomic_write_parts", full)
    monkeypatch.setattr(build_layers_module, "save_layer", lambda *args, **kwargs: None)  # the build in memory saves nothing
    query = "database pool 数据库"
    r = build_injection(paths.workspace, query, home=paths.home)
    assert r.text == fresh_text(paths, query)
    assert not prep.cache_path(paths, "conversation").exists()
    assert [p.name for p in prep.cache_path(paths, "conversation").parent.iterdir() if "conversation" in p.name] == []


@pytest.mark.parametrize("child_fails", [False, True, "the parent stops"])
def test_a_large_layers_postings_are_made_by_a_child_process(paths, monkeypatch, child_fails):
    """From a full first batch, a forked child makes the lines, records and postings beside
    the build: the same layer; a child that fails, or a build that stops halfway (rows out of
    the base order in its third batch: the child is ended), leaves nothing saved that way,
    and the layer is built in memory."""
    from memtui.core.store import row_postings

    enable(paths)
    Conversations(paths.db_path).ensure_conversation("c-here", "here", str(paths.workspace))
    _add_rows(paths, random.Random(5), 40)
    monkeypatch.setattr(saved_file, "CHUNK", 4)
    monkeypatch.setattr(rows_saved, "BATCH", 8)
    monkeypatch.setattr(row_postings, "IN_BULK_FROM", 16)  # numpy's way too, in the child
    if child_fails is True:
        monkeypatch.setattr(row_postings.RowPostings, "postings", lambda self: 1 / 0)
    elif child_fails:
        calls = []
        real_keys = rows_saved.base_keys

        def keys(column):
            calls.append(1)
            found = real_keys(column)
            return found[::-1] if len(calls) == 3 else found

        monkeypatch.setattr(rows_saved, "base_keys", keys)
    started = []
    real = rows_saved._Aside.start
    monkeypatch.setattr(rows_saved._Aside, "start", lambda texts, out: started.append(real(texts, out)) or started[-1])
    monkeypatch.setattr("threading.active_count", lambda: 1)  # (pytest's own threads never touch the fork)
    settings_ = load_settings(paths)
    saved = []
    monkeypatch.setattr(build_layers_module, "save_layer", lambda *args, **kwargs: saved.append(args[2]))
    built, failed = build_layers(paths, settings_, True, ["conversation"])
    assert len(started) == 1 and started[0] is not None and started[0].pid == -1  # forked, and waited for
    fresh, _ = build_layers(paths, settings_, False, ["conversation"])
    _same_layer(built["conversation"][0], fresh["conversation"][0],
                LineMaker(settings_.max_item_chars, settings_.redact_secrets))
    assert saved == (["conversation"] if child_fails else [])  # built in memory (and saved so) when the child failed
    assert isinstance(built["conversation"][0].rows, saved_file.Chunks) != child_fails
