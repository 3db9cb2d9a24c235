"""SPEC §13 through the faces: hybrid retrieval finds what keywords miss (`postgres` for
PostgreSQL) with exact 4-decimal scores, keyword retrieval stays byte for byte what it was,
decay reorders without changing the gate, `--now` pins the time, and a missing model falls
back to keyword and says why."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from memtui.core import semantic
from memtui.core.paths import Paths
from memtui.core.serve import build_injection
from tests.helpers import enable, write

MEMTUI = str(Path(sys.executable).parent / "memtui")
HAS_MODEL = importlib.util.find_spec("wordllama") is not None
needs_model = pytest.mark.skipif(not HAS_MODEL, reason="the semantic extra is not installed")
POSTGRES = "why is the dashboard query slow in postgres"
FIXED = 1_767_225_600  # 2026-01-01T00:00:00Z


def cli(paths: Paths, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([MEMTUI, "--home", str(paths.home), "--workspace", str(paths.workspace), *args],
                          capture_output=True, text=True, timeout=120, check=True)


def preview_json(paths: Paths, query: str, *args: str) -> dict:
    return json.loads(cli(paths, "preview", "--json", query, *args).stdout)


def set_memory(paths: Paths, **memory: object) -> None:
    data = json.loads(paths.global_settings.read_text(encoding="utf-8"))
    data["memory"] = memory
    paths.global_settings.write_text(json.dumps(data), encoding="utf-8")


def demo(base: Path) -> Paths:
    from memtui.core.demo import write_demo

    return write_demo(base / "home", base / "ws")


def corpus_s(base: Path) -> Paths:
    from tests.benchmarks.corpus import generate

    paths = generate(base, "S")
    for folder in (paths.user_root, paths.project_root):  # updated_at from mtimes: fixed, so output is too
        for path in folder.rglob("*.md"):
            os.utime(path, (FIXED, FIXED))
    return paths


# ---------------------------------------------------------------------- keyword: as before
def digest(paths: Paths, queries: list[str]) -> str:
    """The `preview --json` output of each query, hashed: its time left out, the folder named
    <BASE>, and ids (Markdown ids hash the file's path) numbered as first seen."""
    h = hashlib.sha256()
    base = str(paths.home.parent)
    ids: dict[str, int] = {}
    for query in queries:
        data = build_injection(paths.workspace, query, home=paths.home).as_dict()
        data.pop("retrieval_ms")
        for c in data["candidates"]:
            c["id"] = ids.setdefault(c["id"], len(ids))
        h.update(json.dumps(data, ensure_ascii=False, sort_keys=True).replace(base, "<BASE>").encode())
    return h.hexdigest()


def corpus_queries() -> list[str]:
    from tests.benchmarks.corpus import queries

    return [POSTGRES, "帮我优化数据库查询 vitest", "", "why", *queries(n=24)]


# Computed with the code before hybrid retrieval existed (commit 97fbb62).
BEFORE = {
    "demo": "af2332dce068c6070a9d456091e1bc70566b9c5adc69622f2b5bfb61e50a0dc8",
    "S": "3b3488f810cf5dd4bc6912cd774858af4698d103feeda0435d310f10c421d3c6",
}


@pytest.mark.parametrize("corpus", ["demo", "S"])
@pytest.mark.parametrize("setting", [None, "keyword"])
def test_keyword_output_is_byte_identical_to_before(tmp_path, corpus, setting):
    paths = demo(tmp_path) if corpus == "demo" else corpus_s(tmp_path)
    if setting:
        set_memory(paths, retrieval=setting)
    assert digest(paths, corpus_queries()) == BEFORE[corpus]


def test_keyword_json_has_no_hybrid_fields(tmp_path):
    paths = demo(tmp_path)
    data = preview_json(paths, POSTGRES)
    assert "retrieval" not in data and "now" not in data
    assert all("semantic" not in c and "keyword" not in c for c in data["candidates"])
    pg = [c for c in data["candidates"] if "PostgreSQL" in c["line"]]
    assert pg and all(c["score"] == 0 for c in pg)  # the miss hybrid retrieval is for


# ---------------------------------------------------------------------- hybrid
@needs_model
def test_hybrid_finds_the_postgresql_memories_for_postgres(tmp_path):
    paths = demo(tmp_path)
    set_memory(paths, retrieval="hybrid")
    data = preview_json(paths, POSTGRES)
    assert data["retrieval"] == {"mode": "hybrid", "model": semantic.locate().info.as_dict()}
    assert data["retrieval"]["model"]["name"] == "wordllama/l2_supercat_256"
    pg = {c["line"]: c for c in data["candidates"] if "PostgreSQL" in c["line"]}
    assert any("PostgreSQL 16" in line for line in pg) and any("Kenji" in line for line in pg)
    for c in pg.values():
        assert c["keyword"] == 0 and c["semantic"] > 0.1 and c["score"] == c["semantic"]
    included = [c for c in data["candidates"] if c["status"] == "included"]
    # among the project's normal-importance memories, PostgreSQL comes first now
    project = [c["line"] for c in included if c["layer"] == "project" and c["importance"] == "normal"]
    assert "PostgreSQL 16" in project[0]
    assert "PostgreSQL 16" in cli(paths, "preview", POSTGRES).stdout
    status = json.loads(cli(paths, "status", "--json").stdout)
    assert status["retrieval"]["mode"] == "hybrid"
    assert "Retrieval: hybrid (wordllama/l2_supercat_256" in cli(paths, "status").stdout


@needs_model
def test_semantic_scores_are_clipped_rounded_and_max_with_keyword(tmp_path):
    paths = demo(tmp_path)
    set_memory(paths, retrieval="hybrid")
    for query in (POSTGRES, "帮我优化数据库查询 vitest", "vitest"):
        data = preview_json(paths, query)
        assert data["candidates"]
        for c in data["candidates"]:
            assert 0.0 <= c["semantic"] <= 1.0 and round(c["semantic"], 4) == c["semantic"]
            assert c["score"] == max(c["keyword"], c["semantic"])
        # the text is the included lines, in order
        lines = [c["line"] for c in data["candidates"] if c["status"] == "included"]
        assert [line for line in data["text"].split("\n") if line.startswith("- ")] == lines


@needs_model
@pytest.mark.parametrize("budget", [None, {"total": 300, "user": 80, "project": 120, "conversation": 100}])
@pytest.mark.parametrize("half_life", [None, 30])
@pytest.mark.parametrize("require_review", [False, True])
def test_status_counts_agree_with_the_candidates_in_hybrid_mode(tmp_path, budget, half_life, require_review):
    paths = demo(tmp_path)
    memory: dict = {"retrieval": "hybrid", "gate": {"user": 0.15, "project": 0.2, "conversation": 0.25}}
    if budget:
        memory["budget"] = budget
    if half_life:
        memory["decay"] = {"halfLifeDays": half_life}
    if require_review:  # SPEC §12: the demo's unreviewed memories are held back whatever they score
        memory["requireReview"] = True
    set_memory(paths, **memory)
    for query in (POSTGRES, "vitest", "", "部署"):
        result = build_injection(paths.workspace, query, home=paths.home)
        counted = dict(Counter(c.status for c in result.iter_candidates()))
        assert result.status_counts() == counted
        assert bool(counted.get("unreviewed")) == require_review
        assert all(c.parts is not None for c in result.iter_candidates() if c.status == "unreviewed")
        passing = sum(k for s, k in counted.items() if s not in ("below_gate", "archived", "unreviewed"))
        assert (result.disabled_reason == "low_relevance") == (result.count == 0 and passing == 0 and
                                                             sum(counted.values()) > counted.get("archived", 0))


def test_without_the_model_hybrid_falls_back_to_keyword_and_says_why(tmp_path, monkeypatch):
    paths = demo(tmp_path)
    keyword = build_injection(paths.workspace, POSTGRES, home=paths.home)

    def missing() -> semantic.ModelFiles:
        raise semantic.ModelUnavailable(f"the semantic model is not installed ({semantic.EXTRA_HINT})")

    monkeypatch.setattr(semantic, "locate", missing)
    set_memory(paths, retrieval="hybrid")
    result = build_injection(paths.workspace, POSTGRES, home=paths.home)
    assert result.text == keyword.text
    assert [c.as_dict() for c in result.iter_candidates()] == [c.as_dict() for c in keyword.iter_candidates()]
    assert result.retrieval is not None and result.retrieval["mode"] == "keyword"
    assert "'.[semantic]'" in result.retrieval["reason"]
    assert any(p.source == str(paths.global_settings) and "memory.retrieval" in p.message
               and "'.[semantic]'" in p.message for p in result.errors)
    from memtui.core.doctor import status

    data = status(paths)
    assert data["retrieval"]["mode"] == "keyword" and "'.[semantic]'" in data["retrieval"]["reason"]
    assert any(e["source"] == str(paths.global_settings) and "memory.retrieval" in e["message"] for e in data["errors"])


# ---------------------------------------------------------------------- decay
def decay_store(paths: Paths) -> None:
    """Two project memories of one importance: the old one matches the query better."""
    old = write(paths.project_root / "old.md", "- postgres pool size is 40 for the dashboard\n")
    new = write(paths.project_root / "new.md", "- postgres replicas serve the reports\n")
    os.utime(old, (FIXED - 400 * 86400, FIXED - 400 * 86400))
    os.utime(new, (FIXED - 86400, FIXED - 86400))
    enable(paths)


def project_lines(data: dict) -> list[tuple[str, str]]:
    return [(c["line"], c["status"]) for c in data["candidates"] if c["layer"] == "project"]


def test_decay_changes_the_order_but_not_the_gate(paths):
    decay_store(paths)
    query = "postgres pool dashboard"
    set_memory(paths, gate={"project": 0.3})
    plain = preview_json(paths, query)
    assert project_lines(plain) == [("- postgres pool size is 40 for the dashboard", "included"),
                                    ("- postgres replicas serve the reports", "included")]
    set_memory(paths, gate={"project": 0.3}, decay={"halfLifeDays": 30})
    decayed = preview_json(paths, query, "--now", "2026-01-01T00:00:00Z")
    assert decayed["now"] == "2026-01-01T00:00:00+00:00"
    # 400 days at a 30-day half-life: 1.0 × 2^-13.3 orders after 1/3 × 2^-0.03, yet still passes the gate
    assert project_lines(decayed) == [("- postgres replicas serve the reports", "included"),
                                      ("- postgres pool size is 40 for the dashboard", "included")]
    assert [c["score"] for c in decayed["candidates"] if c["layer"] == "project"] == [1 / 3, 1.0]
    set_memory(paths, gate={"project": 0.5}, decay={"halfLifeDays": 30})  # the gate reads the undecayed score
    gated = preview_json(paths, query, "--now", "2026-01-01T00:00:00Z")
    assert project_lines(gated) == [("- postgres replicas serve the reports", "below_gate"),
                                    ("- postgres pool size is 40 for the dashboard", "included")]


def test_a_recent_injection_counts_as_use(paths):
    decay_store(paths)
    set_memory(paths, decay={"halfLifeDays": 30})
    query = "postgres pool dashboard"
    build_injection(paths.workspace, query, home=paths.home, record=True)  # both injected, now
    import time

    now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() + 60))
    data = preview_json(paths, query, "--now", now)
    assert data["now"] == now
    # both were injected a minute ago: equal ages, so the better match is first again
    assert [line for line, _ in project_lines(data)][0] == "- postgres pool size is 40 for the dashboard"


def test_now_pins_the_output_and_is_reported(paths):
    decay_store(paths)
    set_memory(paths, decay={"halfLifeDays": 7})
    first = preview_json(paths, "postgres", "--now", "2026-01-01T12:00:00")
    second = preview_json(paths, "postgres", "--now", "2026-01-01T12:00:00")
    first.pop("retrieval_ms"), second.pop("retrieval_ms")
    assert first == second and first["now"] == "2026-01-01T12:00:00+00:00"
    unpinned = preview_json(paths, "postgres")
    assert unpinned["now"] > "2026"
    bad = subprocess.run([MEMTUI, "--home", str(paths.home), "--workspace", str(paths.workspace), "preview",
                          "postgres", "--now", "yesterday"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--now" in bad.stderr and "ISO" in bad.stderr


def test_decay_off_is_byte_identical(paths):
    decay_store(paths)
    before = cli(paths, "preview", "postgres pool").stdout
    set_memory(paths, decay=None)
    assert cli(paths, "preview", "postgres pool").stdout == before
    assert "now" not in preview_json(paths, "postgres pool")


@needs_model
def test_saved_layer_vectors_follow_the_memories(paths):
    """The hook keeps each layer's vectors beside the prepared index; they serve only that exact
    saved state: the same scores as the store's path, and right again after an edit."""
    from memtui.core.actions import open_store
    from memtui.core.serve import inject_from_store
    from memtui.core.settings import load_settings

    memory = paths.project_root / "context.md"
    write(memory, "- Use PostgreSQL 16 with pgbouncer\n- Releases go out on Tuesdays\n")
    os.utime(memory, (FIXED, FIXED))
    enable(paths, {"memory": {"retrieval": "hybrid"}})

    def scores() -> dict[str, tuple]:
        result = build_injection(paths.workspace, POSTGRES, home=paths.home)
        return {c.line: (c.score, c.parts, c.status) for c in result.iter_candidates()}

    first, second = scores(), scores()  # the second reads the saved layer vectors
    assert list((paths.home / "cache").glob("layer-vectors-*-project.npz"))
    assert first == second
    store = open_store(paths)
    try:
        from_store = inject_from_store(store, load_settings(paths), POSTGRES)
        assert {c.line: (c.score, c.parts, c.status) for c in from_store.iter_candidates()} == first
    finally:
        store.close()
    write(memory, "- Releases go out on Tuesdays\n- Use PostgreSQL 16 with pgbouncer\n")  # same size, other order
    os.utime(memory, (FIXED + 60, FIXED + 60))
    assert scores() == first


@needs_model
def test_saved_layer_vectors_follow_rows_laid_over_the_saved_layer(paths):
    """Rows another writer adds or changes are laid over the saved conversation layer (its
    file unchanged): the layer's saved vectors are keyed by that state too, so the scores stay
    the store's after each change."""
    import sqlite3

    from memtui.core.actions import open_store
    from memtui.core.serve import inject_from_store
    from memtui.core.settings import load_settings
    from memtui.core.store.conversations import Conversations

    write(paths.project_root / "context.md", "- Use PostgreSQL 16 with pgbouncer\n")
    db = Conversations(paths.db_path)
    db.add("the dashboard uses a materialized view", memory_id="m1", updated_at=FIXED * 1000)
    db.add("deploys happen on Tuesdays", memory_id="m2", updated_at=FIXED * 1000 + 1)
    db.close()
    enable(paths, {"memory": {"retrieval": "hybrid", "gate": {"conversation": 0.0}}})

    def scores() -> dict[str, tuple]:
        result = build_injection(paths.workspace, POSTGRES, home=paths.home)
        return {c.line: (c.score, c.parts, c.status) for c in result.iter_candidates()}

    def from_store() -> dict[str, tuple]:
        store = open_store(paths)
        try:
            result = inject_from_store(store, load_settings(paths), POSTGRES)
            return {c.line: (c.score, c.parts, c.status) for c in result.iter_candidates()}
        finally:
            store.close()

    scores()
    for sql in ("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, "
                "created_at, updated_at) VALUES ('m3', 'conversation', 'knowledge', 'slow postgres queries need "
                "an index', '[]', 'auto', NULL, NULL, 1, 2)",
                "UPDATE memories SET content = 'the dashboard query is slow in postgres' WHERE id = 'm2'"):
        conn = sqlite3.connect(paths.db_path)  # another writer
        conn.execute(sql)
        conn.commit()
        conn.close()
        first, second = scores(), scores()  # the second reads the vectors saved by the first
        assert first == second == from_store(), sql


# ---------------------------------------------------------------------- the rule with §13 scores, property-checked
def reference_hybrid(layers, s, query: str, semantic: dict, decay: dict, unreviewed: frozenset[str] = frozenset()):
    """§5 with §13 written out plainly: score = max(keyword, semantic), gate on it, order on
    score × decay; the unreviewed entries (§12) listed after the others of their layer,
    whatever they score; the oracle for `inject(..., extra=..., unreviewed=...)`."""
    from memtui.core.injection import HEADERS, base_key, est, make_line
    from memtui.core.relevance import score, terms

    q = terms(query)
    remaining, carry, out, blocks, count = s.budget["total"] - est("## Memory"), 0, [], ["## Memory"], 0
    for layer in ("user", "project", "conversation"):
        entries = sorted(layers[layer], key=lambda e: (e.archived, base_key(e)))  # the positions the rule uses
        scored = []
        for pos, e in enumerate(entries):
            kw, sem = score(q, e.terms), semantic[layer][pos]
            best = max(kw, sem)
            scored.append((e, best, best * decay[layer][pos], (kw, sem), pos))
        key = lambda t: ({"high": 0, "normal": 1, "low": 2}[t[0].importance], -t[2], t[4])  # noqa: E731
        active = sorted([t for t in scored if not t[0].archived and t[0].id not in unreviewed], key=key)
        held = sorted([t for t in scored if not t[0].archived and t[0].id in unreviewed], key=key)
        archived = sorted([t for t in scored if t[0].archived], key=key)
        allowance = min(s.budget[layer] + carry, remaining)
        used, passed, fits, lines = 0, 0, True, []
        for e, sc, _, parts, _ in active:
            line = make_line(e.text, s.max_item_chars, s.redact_secrets)[0]
            if sc < s.gate[layer]:
                status = "below_gate"
            else:
                passed += 1
                limit = s.max_items.get(layer)
                cost = est(line) + (0 if lines else est(HEADERS[layer]))
                if limit is not None and passed > limit:
                    status = "max_items"
                elif fits and used + cost <= allowance:
                    used, status, count = used + cost, "included", count + 1
                    lines.append(line)
                else:
                    fits, status = False, "budget"
            out.append((e.id, sc, status, parts))
        out += [(e.id, sc, "unreviewed", parts) for e, sc, _, parts, _ in held]
        out += [(e.id, sc, "archived", parts) for e, sc, _, parts, _ in archived]
        if lines:
            blocks += ["", HEADERS[layer], *lines]
        carry, remaining = allowance - used, remaining - used
    return ("\n".join(blocks) if count else ""), out


def test_the_rule_with_semantic_scores_and_decay_equals_the_plain_rule():
    from hypothesis import HealthCheck, given
    from hypothesis import settings as hsettings
    from hypothesis import strategies as st

    from memtui.core.injection import ExtraScores, inject
    from memtui.core.store.layer_index import LayerIndex
    from tests.core.test_injection import WORDS, _corpus, rule_settings

    @hsettings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
    @given(seed=st.integers(0, 10_000), sizes=st.tuples(*[st.integers(0, 30)] * 3),
           total=st.integers(0, 900), caps=st.tuples(*[st.integers(0, 400)] * 3),
           gates=st.tuples(*[st.sampled_from([0.0, 0.2, 0.34, 0.5])] * 3),
           limits=st.tuples(*[st.sampled_from([None, 0, 3])] * 3), with_decay=st.booleans(),
           held_share=st.sampled_from([0.0, 0.3, 1.0]),
           query=st.lists(st.sampled_from([*WORDS, "zzz", "数据"]), max_size=4).map(" ".join))
    def check(seed, sizes, total, caps, gates, limits, with_decay, held_share, query):
        import random

        rnd = random.Random(seed)
        names = ("user", "project", "conversation")
        layers = {name: tuple(_corpus(rnd, n, name)) for name, n in zip(names, sizes)}
        semantic = {name: [round(rnd.choice([0.0, rnd.random(), 0.2, 0.5]), 4) for _ in layers[name]] for name in names}
        decay = {name: [rnd.choice([1.0, 0.5, rnd.random()]) if with_decay else 1.0 for _ in layers[name]]
                 for name in names}
        s = rule_settings(total, caps, gates, limits)
        extra = {name: ExtraScores(semantic[name], decay[name] if with_decay else None) for name in names}
        # §12: some entries await review (archived ones among them stay archived)
        unreviewed = frozenset(e.id for name in names for e in layers[name] if rnd.random() < held_share)
        text, expected = reference_hybrid(layers, s, query, semantic, decay, unreviewed)
        for given_layers in (layers, {n: LayerIndex.from_entries(n, e) for n, e in layers.items()}):
            r = inject(given_layers, s, query, extra=extra, unreviewed=unreviewed)
            assert r.text == text
            got = [(c.entry.id, c.score, c.status, c.parts) for c in r.iter_candidates()]
            assert got == expected
            assert r.status_counts() == dict(Counter(status for _, _, status, _ in expected))
            passing = any(st_ not in ("below_gate", "archived", "unreviewed") for _, _, st_, _ in expected)
            if r.count == 0 and r.disabled_reason in ("low_relevance", "over_budget"):
                assert (r.disabled_reason == "over_budget") == passing
            assert r.to_json() == json.dumps(r.as_dict(), ensure_ascii=False)

    check()


def test_without_the_model_the_cli_says_why(tmp_path):
    """The installed CLI's code in a process where the model's package cannot be found."""
    paths = demo(tmp_path)
    set_memory(paths, retrieval="hybrid")
    hide = ("import importlib.util, sys; real = importlib.util.find_spec; "
            "importlib.util.find_spec = lambda name, *a: None if name == 'wordllama' else real(name, *a); "
            "from memtui.cli.main import main; sys.argv[0] = 'memtui'; main()")
    base = [sys.executable, "-c", hide, "--home", str(paths.home), "--workspace", str(paths.workspace)]
    status = subprocess.run([*base, "status"], capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    assert "Retrieval: keyword (hybrid is set but the semantic model is not installed" in status.stdout
    assert "pip install -e '.[semantic]'" in status.stdout  # from the clone: memtui is on no package index
    shown = subprocess.run([*base, "preview", "--json", POSTGRES], capture_output=True, text=True, timeout=120)
    data = json.loads(shown.stdout)
    assert data["retrieval"]["mode"] == "keyword" and "'.[semantic]'" in data["retrieval"]["reason"]
    assert all("semantic" not in c for c in data["candidates"])
    assert any("memory.retrieval" in e["message"] for e in data["errors"])
