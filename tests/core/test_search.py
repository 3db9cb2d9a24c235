"""The search (the MCP server's `search_memories`): the injection's relevance score from the
layer's index, a substring match as the fallback, archived entries last — the same answer as
scoring every entry's terms, whether the index was taken from the prepared index or built
from the store's entries, and after the store changed."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.core import actions
from memtui.core.actions import open_store
from memtui.core.relevance import score, terms, terms_of
from memtui.core.store.conversations import Conversations
from tests.helpers import enable, write

WORDS = ["database", "pool", "timeout", "deploy", "canary", "vitest", "redis", "数据库", "连接池", "部署", "cache",
         "lint", "review", "Pool", "TIMEOUT", "db/pool.ts", "api", "queue"]
QUERIES = ["database pool timeout", "数据库 连接池", "pool", "ool", "db/pool", "deploy canary review", "nothing here",
           "TIMEOUT", "#tag", "redis 部署 cache", ""]


def every_entry(store, query: str, layer: str | None, limit: int):
    """The search as its rule says it: every entry's terms scored."""
    q = terms(query)
    found = []
    for e in store.entries(layer):
        s = score(q, terms_of(e))
        if s > 0 or actions.matches_keyword(e, query):
            found.append((e, s))
    found.sort(key=lambda pair: (pair[0].archived, -pair[1], -pair[0].updated_at))
    return found[:limit]


def sentence(rnd: random.Random) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 8)))


@pytest.fixture
def corpus(paths):
    rnd = random.Random(7)
    enable(paths)
    for i in range(6):
        status = "status: archived\n" if i == 5 else ""
        lines = "".join(f"- {sentence(rnd)}\n" for _ in range(12))
        write(paths.user_root / f"notes-{i}.md", f"---\n{status}tags: [{rnd.choice(WORDS[:6])}]\n---\n\n## Part\n\n{lines}")
        write(paths.project_root / f"ctx-{i}.md", "".join(f"- {sentence(rnd)}\n" for _ in range(8)))
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Chat", str(paths.workspace))
    for i in range(300):
        db.add(sentence(rnd), memory_id=f"row-{i:03d}", conversation_id="c1", tags=[rnd.choice(WORDS[:4])])
    db.close()
    return paths


def run_preview(paths) -> None:
    """`memtui preview` saves the prepared index the store's search can take its layers from."""
    memtui = str(Path(sys.executable).parent / "memtui")
    done = subprocess.run([memtui, "--home", str(paths.home), "-w", str(paths.workspace), "preview", "x"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("prepared", [True, False], ids=["prepared-index", "built-from-entries"])
def test_the_search_scores_as_every_entry_would(corpus, prepared):
    if prepared:
        run_preview(corpus)
    store = open_store(corpus)
    try:
        assert any(e.archived for e in store.entries("user"))
        from memtui.core.serve import store_layers
        from memtui.core.settings import load_settings
        taken = {name: index.rows is not None for name, index in store_layers(store, load_settings(corpus)).items()}
        assert taken == dict.fromkeys(taken, prepared), taken  # the prepared index's layers taken, or built here
        for query in QUERIES:
            for layer in (None, "user", "project", "conversation"):
                for limit in (5, 1000):
                    got = actions.search(store, query, layer, limit)
                    assert [(e.id, s) for e, s in got] == [(e.id, s) for e, s in every_entry(store, query, layer, limit)], \
                        (query, layer, limit)
        assert len(actions.search(store, "pool", None, 1000)) > 100
        # a change: a row added, a file edited; the next search reads the store as it is now
        db = Conversations(corpus.db_path)
        db.add("the connection pool of the database times out", memory_id="row-new", conversation_id="c1")
        db.close()
        notes = corpus.user_root / "notes-0.md"
        notes.write_text(notes.read_text(encoding="utf-8") + "- a brand new pool timeout note\n", encoding="utf-8")
        store.reload(conversation=True)
        got = actions.search(store, "pool timeout", None, 1000)
        assert [(e.id, s) for e, s in got] == [(e.id, s) for e, s in every_entry(store, "pool timeout", None, 1000)]
        assert {"the connection pool of the database times out", "a brand new pool timeout note"} <= {e.text for e, _ in got}
    finally:
        store.close()
