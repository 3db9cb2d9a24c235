"""The injection (SPEC §5) on worked examples with hand-computed text, and its properties."""

from __future__ import annotations

import json
import logging
import os
import random
import sqlite3
import tempfile
import time
from collections import Counter
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core.injection import est, inject
from memtui.core.model import Entry
from memtui.core.paths import Paths, Problem
from memtui.core.relevance import entry_terms, terms
from memtui.core.serve import build_injection
from memtui.core.settings import Settings, load_settings
from memtui.core.store import current_layers, saved_file
from memtui.core.store import prepared as prep
from memtui.core.store.conversations import Conversations
from memtui.core.store.patched_layer import PatchedLayer
from tests.helpers import enable, write

PREFS = "---\ntype: preference\nimportance: high\n---\n\n## Testing\n\n- Use vitest, not jest\n- Prefer describe/it style\n"
CONTEXT = "- 数据库连接池配置过小，高并发时超时\n- Use PostgreSQL + pgbouncer\n\nSome paragraph here.\n"


@pytest.fixture
def worked(paths):
    write(paths.user_root / "preferences.md", PREFS)
    write(paths.project_root / "context.md", CONTEXT)
    enable(paths)
    return paths


def test_terms_rules():
    assert terms("帮我优化数据库查询 vitest") == {"帮我", "我优", "优化", "化数", "数据", "据库", "库查", "查询", "vitest"}
    assert terms("The cat is in the HAT") == {"cat", "hat"}
    assert terms("ｖｉｔｅｓｔ") == {"vitest"}  # NFKC folds full-width letters
    assert terms("库") == {"库"}
    assert terms("snake_case, x-y") == {"snake_case", "x", "y"}
    assert terms("") == frozenset()


def test_est_counts_wide_and_narrow():
    assert est("## Memory") == 3
    assert est("- 数据库连接池配置过小，高并发时超时") == 18
    assert est("") == 0


def test_worked_example_from_the_spec(worked):
    r = build_injection(worked.workspace, "帮我优化数据库查询 vitest", home=worked.home)
    assert r.text == (
        "## Memory\n\n### User Preferences\n- Use vitest, not jest\n- Prefer describe/it style\n\n"
        "### Project Knowledge\n- 数据库连接池配置过小，高并发时超时\n- Use PostgreSQL + pgbouncer\n- Some paragraph here."
    )
    assert (r.count, r.truncated, r.tokens, r.chars, r.disabled_reason) == (5, False, 58, 176, None)
    assert [c.entry.source_ref for c in r.candidates] == [
        "preferences.md:8", "preferences.md:9", "context.md:1", "context.md:2", "context.md:4"]
    assert [round(c.score, 4) for c in r.candidates] == [round(1 / 9, 4), 0.0, round(2 / 9, 4), 0.0, 0.0]


def test_memory_off_injects_nothing(paths):
    write(paths.user_root / "a.md", "- something\n")
    r = build_injection(paths.workspace, "something", home=paths.home)
    assert (r.text, r.count, r.disabled_reason, r.enabled) == ("", 0, "switch_off", False)


def test_workspace_switch_wins_over_global(paths):
    write(paths.user_root / "a.md", "- something\n")
    enable(paths)
    write(paths.workspace_settings, json.dumps({"memoryEnabled": False}))
    assert build_injection(paths.workspace, "x", home=paths.home).disabled_reason == "switch_off"


def test_empty_query_passes_zero_gates_only(worked, paths):
    db = Conversations(paths.db_path)
    db.add("we chose sqlite", conversation_id=None)
    db.close()
    r = build_injection(worked.workspace, "", home=worked.home)
    assert r.count == 5
    conv = [c for c in r.candidates if c.layer == "conversation"]
    assert [c.status for c in conv] == ["below_gate"]


def test_clipping_and_budget_cut(paths):
    long = "word " * 100
    write(paths.user_root / "a.md", f"- {long}\n- short one\n")
    enable(paths, {"memory": {"budget": {"total": 2000, "user": 60}, "maxItemChars": 40}})
    r = build_injection(paths.workspace, "", home=paths.home)
    clipped = r.candidates[0]
    assert clipped.line == "- " + ("word " * 8)[:39] + "…"
    assert clipped.clipped and clipped.status == "included"
    assert r.truncated
    # budget: header 6 + first line est + second line; shrink the cap so the second doesn't fit
    enable(paths, {"memory": {"budget": {"user": est("### User Preferences") + clipped.tokens}, "maxItemChars": 40}})
    r = build_injection(paths.workspace, "", home=paths.home)
    assert [c.status for c in r.candidates] == ["included", "budget"]
    assert r.truncated and r.count == 1


def test_carry_over_from_empty_user_layer(paths):
    lines = [f"- project fact number {i}" for i in range(40)]
    write(paths.project_root / "facts.md", "\n".join(lines) + "\n")
    enable(paths, {"memory": {"budget": {"user": 100, "project": 50, "conversation": 0}}})
    r = build_injection(paths.workspace, "", home=paths.home)
    used = sum(c.tokens for c in r.candidates if c.status == "included") + est("### Project Knowledge")
    assert used <= 150 and used > 50  # the unused user allowance carried into the project layer
    assert [c.status for c in r.candidates][: r.count] == ["included"] * r.count
    assert set(c.status for c in r.candidates[r.count :]) == {"budget"}


def test_gate_max_items_and_archived(paths):
    write(paths.user_root / "old.md", "---\nstatus: superseded\n---\n- archived thing about sqlite\n")
    db = Conversations(paths.db_path)
    for i in range(12):
        db.add(f"sqlite tip {i}", memory_id=f"m{i:02d}", updated_at=1000)
    db.add("unrelated note", memory_id="z")
    db.close()
    enable(paths)
    r = build_injection(paths.workspace, "sqlite tip", home=paths.home)
    conv = [c for c in r.candidates if c.layer == "conversation"]
    assert [c.status for c in conv] == ["included"] * 10 + ["max_items"] * 2 + ["below_gate"]
    assert [c.entry.id for c in conv[:12]] == [f"m{i:02d}" for i in range(12)]
    user = [c for c in r.candidates if c.layer == "user"]
    assert [c.status for c in user] == ["archived"]
    assert "archived thing" not in r.text


def test_reasons_when_nothing_is_injected(paths):
    enable(paths)
    assert build_injection(paths.workspace, "x", home=paths.home).disabled_reason == "empty_result"
    write(paths.user_root / "old.md", "---\nstatus: archived\n---\n- gone\n")
    assert build_injection(paths.workspace, "x", home=paths.home).disabled_reason == "empty_result"
    db = Conversations(paths.db_path)
    db.add("nothing relevant")
    db.close()
    assert build_injection(paths.workspace, "zebra", home=paths.home).disabled_reason == "low_relevance"
    enable(paths, {"memory": {"budget": {"total": 3}, "gate": {"conversation": 0.0}}})
    assert build_injection(paths.workspace, "zebra", home=paths.home).disabled_reason == "over_budget"


def test_corrupt_database_still_injects_files(worked):
    worked.db_path.write_bytes(b"this is not a database" * 100)
    r = build_injection(worked.workspace, "vitest", home=worked.home)
    assert r.count == 5
    assert any(e.source == str(worked.db_path) for e in r.errors)
    assert worked.db_path.read_bytes() == b"this is not a database" * 100


def test_conversation_memories_of_other_workspaces_are_left_out(paths, tmp_path):
    enable(paths)
    db = Conversations(paths.db_path)
    db.ensure_conversation("here", "This one", str(paths.workspace))
    db.ensure_conversation("there", "Other", str(tmp_path / "elsewhere"))
    db.add("sqlite here", conversation_id="here")
    db.add("sqlite there", conversation_id="there")
    db.add("sqlite anywhere", conversation_id=None)
    db.close()
    r = build_injection(paths.workspace, "sqlite", home=paths.home)
    assert sorted(c.line for c in r.candidates) == ["- sqlite anywhere", "- sqlite here"]


def test_secrets_are_redacted_before_clamping(paths):
    write(paths.user_root / "a.md", "- deploy with password=hunter2 and key AKIAIOSFODNN7EXAMPLE\n")
    enable(paths)
    r = build_injection(paths.workspace, "", home=paths.home)
    assert r.candidates[0].line == "- deploy with password=[REDACTED] and key [REDACTED]"
    assert r.redacted == 2 and "hunter2" not in r.text
    enable(paths, {"memory": {"redactSecrets": False}})
    assert "hunter2" in build_injection(paths.workspace, "", home=paths.home).text


# ---------------------------------------------------------------- properties over generated corpora

WORDS = ["sqlite", "vitest", "数据库", "连接", "pool", "timeout", "react", "测试", "deploy", "cache"]


LAYER_NAMES = ("user", "project", "conversation")


def rule_settings(total: int, caps: tuple[int, int, int], gates: tuple[float, float, float] | None = None,
                  limits: tuple[int | None, int | None, int | None] | None = None) -> Settings:
    """Memory on, with the given budget (total and one cap per layer), gates and max items."""
    s = Settings(enabled=True)
    s.budget = {"total": total, **dict(zip(LAYER_NAMES, caps))}
    if gates is not None:
        s.gate = dict(zip(LAYER_NAMES, gates))
    if limits is not None:
        s.max_items = dict(zip(LAYER_NAMES, limits))
    return s


def _corpus(rnd: random.Random, n: int, layer: str) -> list[Entry]:
    out = []
    for i in range(n):
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 30)))
        out.append(Entry(id=f"{layer}{i}", layer=layer, text=text, importance=rnd.choice(["high", "normal", "low"]),
                         status=rnd.choice(["active"] * 5 + ["archived"]), updated_at=float(rnd.randint(0, 5)),
                         rel_path=f"f{i % 3}.md", line_start=i, conversation_id="c" if layer == "conversation" else None,
                         terms=entry_terms(text)))
    return out


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), sizes=st.tuples(*[st.integers(0, 25)] * 3),
       total=st.integers(0, 700), caps=st.tuples(*[st.integers(0, 300)] * 3),
       query=st.lists(st.sampled_from(WORDS + ["zzz"]), max_size=4).map(" ".join))
def test_budget_properties(seed, sizes, total, caps, query):
    rnd = random.Random(seed)
    layers = {name: _corpus(rnd, n, name) for name, n in zip(("user", "project", "conversation"), sizes)}
    s = rule_settings(total, caps)
    r = inject(layers, s, query)
    assert r.tokens <= total
    remaining, carry = total - est("## Memory"), 0
    for name, cap, header in zip(("user", "project", "conversation"), caps,
                                 ("### User Preferences", "### Project Knowledge", "### Relevant Context")):
        cands = [c for c in r.candidates if c.layer == name]
        passing = [c for c in cands if c.status in ("included", "budget", "max_items")]
        included = [c for c in passing if c.status == "included"]
        assert included == passing[: len(included)]  # a prefix of the passing ones, in sort order
        statuses = [c.status for c in cands]
        assert statuses == sorted(statuses, key=lambda s: s == "archived")  # archived last in their layer
        allowance = min(cap + carry, remaining)
        used = sum(c.tokens for c in included) + (est(header) if included else 0)
        assert used == 0 or used <= allowance  # each layer's cost stays within its allowance
        carry, remaining = allowance - used, remaining - used
    # The same inputs in another enumeration order give the same text, byte for byte.
    shuffled = {k: rnd.sample(v, len(v)) for k, v in layers.items()}
    assert inject(shuffled, s, query).text == r.text


def test_no_log_record_contains_memory_text(worked, caplog):
    with caplog.at_level(logging.DEBUG):
        r = build_injection(worked.workspace, "vitest 数据库", home=worked.home)
    assert r.count
    assert caplog.records, "the injection logs its statistics"
    for record in caplog.records:
        message = record.getMessage()
        for c in r.candidates:
            assert c.entry.text not in message
        assert "vitest" not in message and "数据库" not in message


def reference_terms(s: str) -> frozenset[str]:
    """§5 step 3 written out character by character: the oracle for the fast `terms`."""
    import unicodedata

    from memtui.core.relevance import STOP_WORDS

    s = unicodedata.normalize("NFKC", s).casefold()

    def kind(ch):
        if unicodedata.category(ch).startswith("L") and unicodedata.east_asian_width(ch) in ("W", "F"):
            return "wide"
        return "word" if (ch.isalnum() or ch == "_") else "sep"

    out, i = set(), 0
    while i < len(s):
        k, j = kind(s[i]), i + 1
        while j < len(s) and kind(s[j]) == k:
            j += 1
        run = s[i:j]
        if k == "word" and run not in STOP_WORDS:
            out.add(run)
        elif k == "wide":
            out.update([run] if len(run) == 1 else [run[x : x + 2] for x in range(len(run) - 1)])
        i = j
    return frozenset(out)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.one_of(st.characters(), st.sampled_from("数据库ｖｉｔｅ〇ー々가나 _-,.AbC1²½ß"))))
def test_fast_terms_equal_the_rule(s):
    assert terms(s) == reference_terms(s)


def test_every_ideograph_the_fast_path_takes_is_a_wide_letter():
    """`terms` splits a run of CJK Unified Ideographs into bigrams without asking each
    character's kind: that is only right while every one of them is a wide letter."""
    from memtui.core.relevance import _IDEOGRAPHS, _WIDE, _kind

    lo, hi = (ord(c) for c in _IDEOGRAPHS.pattern.strip("[]+").split("-"))
    assert [chr(c) for c in range(lo, hi + 1) if _kind(chr(c)) != _WIDE] == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.one_of(st.characters(min_codepoint=0x4DF0, max_codepoint=0xA010),
                                  st.sampled_from("ぁアｶ가〇々ー_a1 ,。，")), max_size=40),
       st.lists(st.sampled_from(["redis", "数据库", "", "The pool", "连接池"]), max_size=3))
def test_fast_entry_terms_equal_the_rule(text, tags):
    assert terms(text) == reference_terms(text)
    want = reference_terms(text).union(*(reference_terms(t) for t in tags if t))
    assert entry_terms(text, tags=tags) == want


_PIECES = st.sampled_from(["数据库连接池", "ｖｉｔｅｓｔ", "The pool", "password=hunter22", "token: abc12345", "İ", "…",
                           "ghp_" + "a" * 36, " \t\n", "密钥是 abc123", "가나", "__", "x-y", "½", "é"])
_TEXTS = st.lists(st.text() | st.lists(_PIECES | st.text(max_size=5), max_size=6).map(" ".join), max_size=12)


@settings(max_examples=200, deadline=None)
@given(_TEXTS, st.lists(st.lists(st.sampled_from(["redis", "数据库", "", "The pool", "a", "İx"]), max_size=3).map(tuple),
                        min_size=12, max_size=12))
def test_terms_in_bulk_equal_the_rule(texts, tags):
    from memtui.core.relevance import entry_terms_many, terms_many

    assert terms_many(texts) == [reference_terms(t) for t in texts]
    tags = tags[:len(texts)]
    assert entry_terms_many(texts, tags) == [entry_terms(t, tags=g) for t, g in zip(texts, tags)]


@settings(max_examples=200, deadline=None)
@given(_TEXTS, st.integers(1, 40), st.booleans())
def test_lines_made_in_bulk_equal_the_rule(texts, max_chars, redact):
    import unicodedata

    from memtui.core.injection import LineMaker

    maker = LineMaker(max_chars, redact)
    made = maker.made_many(texts)
    assert made == [maker.made(t) for t in texts]
    for line, _, _, tokens in made:  # est, against the width of each character
        wide = sum(unicodedata.east_asian_width(ch) in ("W", "F") for ch in line)
        assert tokens == wide + -(-(len(line) - wide) // 4)


_ROW_VALUES = st.none() | st.integers(-3, 3) | st.sampled_from(["", "x", "knowledge", "数据库", "a b"])


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(
    st.sampled_from(["m1", "m2", "m3", "m4", 7, "数据库"]), _ROW_VALUES,
    st.text(max_size=12) | _PIECES, st.sampled_from([None, "", "[]", '["redis"]', '["a", "数据库", 3, null]', "x, y", "{",
                                                     '"one"', "5", b'["b"]']),
    _ROW_VALUES, st.none() | st.sampled_from(["c1", "c2", 3]), _ROW_VALUES, st.none() | st.just("/w"),
    _ROW_VALUES, st.none() | st.integers(0, 4) | st.sampled_from(["3", 2.5, 1_760_000_000_123, "x"])),
    max_size=8, unique_by=lambda r: r[0]), st.integers(1, 30), st.booleans(), st.booleans())
def test_the_conversation_state_made_in_bulk_is_its_entries_index(raw, max_chars, redact, seeded):
    """`rows.conversation_state` makes the conversation layer's saved state from the rows as
    read, column by column: exactly the state of the index of their entries."""
    from memtui.core.injection import LineMaker
    from memtui.core.model import Layer
    from memtui.core.store.conversations import conversation_row
    from memtui.core.store.layer_index import LayerIndex
    from memtui.core.store.line_cache import LineCache
    from memtui.core.store.memory import _conversation_entries
    from memtui.core.store.rows import conversation_columns, conversation_state

    try:
        rows = [conversation_row(r) for r in raw]
    except Exception as exc:  # a row the store refuses: refused alike, with the same error
        with pytest.raises(type(exc)) as refused:
            conversation_columns(raw)
        assert str(refused.value) == str(exc)
        return
    maker = LineMaker(max_chars, redact)
    want = LayerIndex.from_entries(Layer.CONVERSATION, _conversation_entries(rows), keep_terms=False).state(maker)
    lines = LineCache()
    if seeded and raw:  # a line made before is taken as it was
        lines.make(maker, str(raw[0][2] or ""))
    core, lists, postings = conversation_state(conversation_columns(raw), maker, lines)
    assert lists == [want[name] for name in ("rows", "shown", "made", "frags")]
    assert postings == want["postings"] and list(map(type, lists[2])) == [tuple] * len(raw)
    assert core == {**{k: v for k, v in want.items() if k not in ("rows", "shown", "made", "frags", "postings")},
                    "size": len(raw)}


def reference_inject(layers, s: Settings, query: str):
    """§5 written out plainly (score every entry, sort everything): the oracle for `inject`."""
    from memtui.core.injection import HEADERS, make_line
    from memtui.core.relevance import score

    q = reference_terms(query)
    remaining, carry, blocks, out, truncated, count = s.budget["total"] - est("## Memory"), 0, ["## Memory"], [], False, 0
    for layer in ("user", "project", "conversation"):
        def key(pair, layer=layer):
            e, sc = pair
            place = (e.id,) if layer == "conversation" else (e.rel_path, e.line_start)
            return ({"high": 0, "normal": 1, "low": 2}[e.importance], -sc, -e.updated_at, place)

        scored = [(e, score(q, e.terms)) for e in layers[layer]]
        active = sorted([p for p in scored if not p[0].archived], key=key)
        archived = sorted([p for p in scored if p[0].archived], key=key)
        allowance = min(s.budget[layer] + carry, remaining)
        used, passed, fits, lines = 0, 0, True, []
        for e, sc in active:
            line, clipped, _ = make_line(e.text, s.max_item_chars, s.redact_secrets)
            if sc < s.gate[layer]:
                status = "below_gate"
            else:
                passed += 1
                limit = s.max_items.get(layer)
                if limit is not None and passed > limit:
                    status = "max_items"
                elif fits and used + est(line) + (0 if lines else est(HEADERS[layer])) <= allowance:
                    used += est(line) + (0 if lines else est(HEADERS[layer]))
                    lines.append(line)
                    status = "included"
                    count += 1
                    truncated |= clipped
                else:
                    fits = False
                    status = "budget"
                    truncated = True
            out.append((e.id, sc, status, line))
        out += [(e.id, sc, "archived", make_line(e.text, s.max_item_chars, s.redact_secrets)[0]) for e, sc in archived]
        if lines:
            blocks += ["", HEADERS[layer], *lines]
        carry, remaining = allowance - used, remaining - used
    return ("\n".join(blocks) if count else ""), out, truncated, count


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), sizes=st.tuples(*[st.integers(0, 40)] * 3),
       total=st.integers(0, 900), caps=st.tuples(*[st.integers(0, 400)] * 3),
       gates=st.tuples(*[st.sampled_from([0.0, 0.2, 0.34, 0.5, 1.0])] * 3),
       limits=st.tuples(*[st.sampled_from([None, 0, 1, 3, 10])] * 3),
       max_chars=st.sampled_from([2, 30, 200]),
       query=st.lists(st.sampled_from(WORDS + ["zzz", "数据", "库"]), max_size=5).map(" ".join))
def test_inject_equals_the_plain_rule(seed, sizes, total, caps, gates, limits, max_chars, query):
    rnd = random.Random(seed)
    layers = {name: tuple(_corpus(rnd, n, name)) for name, n in zip(("user", "project", "conversation"), sizes)}
    s = rule_settings(total, caps, gates, limits)
    s.max_item_chars = max_chars
    text, expected, truncated, count = reference_inject(layers, s, query)
    r = inject(layers, s, query)
    assert r.status_counts() == dict(Counter(status for _, _, status, _ in expected))  # counted, not produced
    assert r._candidates is None
    assert r.text == text
    assert (r.truncated, r.count) == (truncated, count)
    assert [(c.entry.id, c.score, c.status, c.line) for c in r.candidates] == expected


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), sizes=st.tuples(*[st.integers(0, 40)] * 3),
       total=st.integers(0, 900), caps=st.tuples(*[st.integers(0, 400)] * 3),
       gates=st.tuples(*[st.sampled_from([0.0, 0.2, 0.5])] * 3),
       limits=st.tuples(*[st.sampled_from([None, 0, 3])] * 3),
       query=st.lists(st.sampled_from(WORDS + ["zzz", "数据", "库"]), max_size=5).map(" ".join))
def test_the_inverted_index_answers_as_the_plain_layer(seed, sizes, total, caps, gates, limits, query):
    """The rule over `LayerIndex` (postings, a lazy heap, JSON kept ready) gives what it gives
    over plain entries (every entry scored, every list sorted), candidates and JSON included."""
    from memtui.core.store.layer_index import LayerIndex

    rnd = random.Random(seed)
    layers = {name: tuple(_corpus(rnd, n, name)) for name, n in zip(("user", "project", "conversation"), sizes)}
    s = rule_settings(total, caps, gates, limits)
    plain = inject(layers, s, query)
    indexed = inject({name: LayerIndex.from_entries(name, entries) for name, entries in layers.items()}, s, query)
    assert indexed.text == plain.text and indexed.status_counts() == plain.status_counts()
    assert _json(indexed) == _json(plain)
    assert indexed.to_json() == json.dumps(indexed.as_dict(), ensure_ascii=False)
    with mock.patch.object(LayerIndex, "BITMAP_MIN", 0):  # every layer counted as a large one is: bitmaps
        bits = inject({name: LayerIndex.from_entries(name, entries) for name, entries in layers.items()}, s, query)
        assert bits.text == plain.text and bits.status_counts() == plain.status_counts()
        assert _json(bits) == _json(plain)
        assert [(c.id, c.score, c.status) for c in bits.iter_candidates()] == \
            [(c.id, c.score, c.status) for c in plain.iter_candidates()]


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 600), high=st.sampled_from([0, 1, 5, 50]),
       gates=st.tuples(*[st.sampled_from([0.0, 0.2, 0.5])] * 3), limits=st.tuples(*[st.sampled_from([None, 0, 7])] * 3),
       total=st.integers(0, 3000), query=st.lists(st.sampled_from(WORDS + ["zzz"]), max_size=8).map(" ".join))
def test_large_layers_in_order_and_json_as_the_plain_layer(seed, n, high, gates, limits, total, query):
    """Layers of hundreds of entries, a few of them high importance: the index finds each
    importance group's positions of one count either from the group or from the whole layer;
    both give the plain order, and the JSON written a run at a time is `json.dumps`'s."""
    from memtui.core.injection import EntryLayer
    from memtui.core.store.layer_index import LayerIndex

    rnd = random.Random(seed)
    layers = {}
    for name in LAYER_NAMES:
        entries = _corpus(rnd, n, name)
        layers[name] = tuple(e if i >= high else Entry(**{**{f: getattr(e, f) for f in e.__dataclass_fields__},
                                                          "importance": "high"})
                             for i, e in enumerate(entries))
    q = terms(query)
    for name, entries in layers.items():
        plain, index = EntryLayer(name, entries), LayerIndex.from_entries(name, entries)
        shared = index.shared(q)
        assert dict(shared) == plain.shared(q)
        for scored_only in (False, True):
            runs = list(index.in_order(shared, scored_only))
            assert all(run for _, run in runs) and all(shared.get(p, 0) == k for k, run in runs for p in run)
            assert [p for _, run in runs for p in run] == [p for _, run in plain.in_order(shared, scored_only) for p in run]
    s = rule_settings(total, (total // 3, total // 3, total // 2), gates, limits)
    plain_r = inject(layers, s, query)
    indexed = inject({name: LayerIndex.from_entries(name, entries) for name, entries in layers.items()}, s, query)
    assert _json(indexed) == _json(plain_r)
    assert indexed.to_json() == json.dumps(indexed.as_dict(), ensure_ascii=False)


# ---------------------------------------------------------------------- the prepared index
# `build_injection` answers from a saved state when it still describes the memories. These
# check that it is the same answer, byte for byte, as a fresh load, across every kind of change.


PHRASES = ["database pool timeout", "use vitest not jest", "数据库连接池配置过小", "deploy with token=abcd1234efgh5678",
           "redis queue retry backoff", "password=hunter22 in the config", "缓存 索引 查询", "release branch review"]


def _fresh(paths: Paths, query: str) -> tuple[str, str]:
    """The answer without any saved state: the store loaded from the files and rows."""
    settings = load_settings(paths)
    p = prep.prepare(paths, settings, save=False)
    r = inject(p.indexes, settings, query, workspace=str(paths.workspace), failed_layers=p.failed_layers,
               errors=list(settings.problems) + p.problems)
    assert r.to_json() == json.dumps(r.as_dict(), ensure_ascii=False)  # the pre-rendered JSON is the JSON
    return r.text, _json(r)


def _json(r) -> str:
    # `preview --json` to a pipe: the same JSON as UTF-8, from the saved records where they are
    assert b"".join(r.json_bytes()) == r.to_json().encode()
    data = json.loads(r.to_json())
    data.pop("retrieval_ms")
    return json.dumps(data, ensure_ascii=False)


def _built(paths: Paths, query: str) -> tuple[str, str]:
    r = build_injection(paths.workspace, query, home=paths.home)
    return r.text, _json(r)


def _md(rnd: random.Random, n: int) -> str:
    head = rnd.choice(["", "---\nimportance: high\n---\n\n", "---\nstatus: archived\n---\n\n", "## Section\n\n"])
    return head + "".join(f"- {rnd.choice(PHRASES)} {rnd.randint(0, 99)}\n" for _ in range(n))


def _corpus_on_disk(base: Path, rnd: random.Random) -> Paths:
    (base / "home" / "memory").mkdir(parents=True)
    (base / "ws" / ".muse" / "memory").mkdir(parents=True)
    paths = Paths((base / "home").resolve(), (base / "ws").resolve())
    enable(paths, {"maxItemChars": rnd.choice([20, 200])})
    for i in range(rnd.randint(0, 4)):
        write(paths.user_root / f"u{i}.md", _md(rnd, rnd.randint(1, 5)))
    for i in range(rnd.randint(0, 4)):
        write(paths.project_root / f"p{i}.md", _md(rnd, rnd.randint(1, 5)))
    db = Conversations(paths.db_path)
    db.ensure_conversation("c-here", "here", str(paths.workspace))
    db.ensure_conversation("c-else", "elsewhere", str(base / "other"))
    for i in range(rnd.randint(0, 6)):
        db.add(f"{rnd.choice(PHRASES)} {i}", conversation_id=rnd.choice(["c-here", "c-else", None]),
               memory_id=f"row{i}", updated_at=1_700_000_000_000 + i)
    db.close()
    return paths


def _change(paths: Paths, rnd: random.Random, op: str) -> None:
    files = sorted(paths.user_root.glob("*.md")) + sorted(paths.project_root.glob("*.md"))
    conn = sqlite3.connect(paths.db_path)
    try:
        if op == "edit" and files:
            f = rnd.choice(files)
            f.write_text(_md(rnd, rnd.randint(1, 5)), encoding="utf-8")
        elif op == "same_size_same_mtime" and files:
            f = rnd.choice(files)  # a same-size edit within one mtime tick: size, mtime and inode unchanged
            st = f.stat()
            data = f.read_bytes()
            swapped = data.replace(b"- ", b"+ ", 1) if b"- " in data else data[::-1]
            f.write_bytes(swapped)
            os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
        elif op == "add":
            root = rnd.choice([paths.user_root, paths.project_root])
            write(root / f"new{rnd.randint(0, 999)}.md", _md(rnd, rnd.randint(1, 3)))
        elif op == "delete" and files:
            rnd.choice(files).unlink()
        elif op == "bad_file":
            (paths.user_root / "bad.md").write_bytes(b"\xff\xfe not utf-8 \x00")
        elif op == "row_add":
            conn.execute("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, "
                         "created_at, updated_at) VALUES (?, 'conversation', 'knowledge', ?, '[]', 'auto', 'c-here', NULL, 1, 2)",
                         [f"w{rnd.randint(0, 10**6)}", rnd.choice(PHRASES)])
        elif op == "row_change":  # another writer changes the text and keeps updated_at
            conn.execute("UPDATE memories SET content = ? WHERE rowid = (SELECT min(rowid) FROM memories "
                         "WHERE type = 'conversation')", [rnd.choice(PHRASES) + " changed"])
        elif op == "row_delete":
            conn.execute("DELETE FROM memories WHERE rowid = (SELECT max(rowid) FROM memories WHERE type = 'conversation')")
        elif op == "touch" and files:  # the mtime alone moves: the entries' updated_at with it
            f = rnd.choice(files)
            later = f.stat().st_mtime + rnd.randint(1, 10**6)
            os.utime(f, (later, later))
        elif op == "row_batch":  # one statement, many rows, old and new
            conn.executemany("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, "
                             "file_path, created_at, updated_at) VALUES (?, 'conversation', 'knowledge', ?, '[]', "
                             "'auto', ?, NULL, 1, ?)",
                             [(f"b{rnd.randint(0, 10**6)}-{k}", rnd.choice(PHRASES), rnd.choice(["c-here", "c-else", None]),
                               rnd.choice([0, 1_700_000_000_000 + k, 1_900_000_000_000])) for k in range(rnd.randint(2, 5))])
        elif op == "row_not_conversation":  # a row turned into another type leaves the layer
            conn.execute("UPDATE memories SET type = 'note' WHERE rowid = (SELECT min(rowid) FROM memories "
                         "WHERE type = 'conversation')")
        elif op == "conversation_title":
            conn.execute("UPDATE conversations SET title = ? WHERE id = 'c-here'", [rnd.choice(PHRASES)])
        elif op == "conversation_delete":
            conn.execute("DELETE FROM conversations WHERE id = ?", [rnd.choice(["c-here", "c-else"])])
        elif op == "move_conversation":
            conn.execute("UPDATE conversations SET workspace_path = ? WHERE id = 'c-else'", [str(paths.workspace)])
        elif op == "settings":
            enable(paths, {"maxItemChars": rnd.choice([10, 30, 500]), "redactSecrets": rnd.random() < 0.5})
        conn.commit()
    finally:
        conn.close()


OPS = ["edit", "same_size_same_mtime", "add", "delete", "bad_file", "touch", "row_add", "row_change", "row_delete",
       "row_batch", "row_not_conversation", "conversation_title", "conversation_delete", "move_conversation",
       "settings", "nothing"]


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=6),
       query=st.sampled_from(PHRASES + ["", "zzz"]), rebase=st.sampled_from([1, 3, current_layers.REBASE_ROWS]),
       bitmaps=st.booleans())
def test_prepared_index_answers_as_a_fresh_load(seed, ops, query, rebase, bitmaps):
    """Every change (files edited, touched, added, removed, bad; rows added, changed, deleted,
    moved by another writer; settings) is taken in by the next run as a fresh load would see
    it: a file parsed again alone, rows laid over the saved layer or, past `rebase` of them,
    spliced in and saved. With `bitmaps`, every layer is counted (and saved) as a large one
    is: its frequent terms' bitmaps saved, a query's counts kept as bitmaps (`LevelCounts`)."""
    from memtui.core.store.layer_index import LayerIndex

    rnd = random.Random(seed)

    def built() -> tuple[str, str]:
        with mock.patch.object(LayerIndex, "BITMAP_MIN", 0 if bitmaps else LayerIndex.BITMAP_MIN):
            return _built(paths, query)

    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(current_layers, "REBASE_ROWS", rebase):
        paths = _corpus_on_disk(Path(tmp), rnd)
        assert built() == _fresh(paths, query)  # the first run builds and saves it
        used = 0
        for op in ops:
            _change(paths, rnd, op)
            used += prep.load_prepared(paths, load_settings(paths)) is not None
            assert built() == _fresh(paths, query), op
        if "bad_file" not in ops:  # (a bad file that just changed cannot be checked later: never saved)
            assert prep.load_prepared(paths, load_settings(paths)) is not None  # unchanged since: it is used


@pytest.mark.parametrize("bad_file", [False, True])
def test_a_first_run_builds_the_markdown_layers_aside_and_answers_as_a_fresh_load(tmp_path, bad_file):
    """A cold `memtui preview --json` builds the Markdown layers in a child process while it
    builds the conversation layer: the same answer as a fresh load, every layer saved. A bad
    file that just changed is not saved by the child (nothing to hash it against later): that
    layer is built again by the parent, with the file's problem."""
    from tests.cli.run import memtui, ok

    rnd = random.Random(11)
    paths = _corpus_on_disk(tmp_path, rnd)
    for i in range(3):
        write(paths.user_root / f"more{i}.md", _md(rnd, 4))
        write(paths.project_root / f"more{i}.md", _md(rnd, 4))
    db = Conversations(paths.db_path)
    for i in range(5):
        db.add(f"{rnd.choice(PHRASES)} row {i}", conversation_id="c-here", memory_id=f"aside{i}")
    db.close()
    if bad_file:
        write(paths.user_root / "broken.md", "---\nname: [unclosed\n---\n- a database pool note\n")
    query = "database pool 数据库 token"
    _, want = _fresh(paths, query)
    done = ok(memtui(paths, "preview", query, "--json", real=True, env={"MEMTUI_LOG": "INFO"}))
    assert "user and project layers built by a child process" in done.stderr
    got = json.loads(done.stdout)
    got.pop("retrieval_ms")
    assert json.dumps(got, ensure_ascii=False) == want
    assert ("broken.md" in json.dumps(got["errors"])) == bad_file, got["errors"]
    assert prep.cache_path(paths, "project").is_file() and prep.cache_path(paths, "conversation").is_file()
    assert prep.cache_path(paths, "user").is_file() != bad_file
    assert _built(paths, query)[1] == want  # and warm, from what was saved


def test_to_json_is_json_dumps_of_as_dict(worked):
    r = build_injection(worked.workspace, "帮我优化数据库查询 vitest \"quoted\"", home=worked.home)
    assert r.to_json() == json.dumps(r.as_dict(), ensure_ascii=False)
    r = build_injection(worked.workspace, "帮我优化数据库查询 vitest \"quoted\"", home=worked.home)  # from the saved state
    assert r.to_json() == json.dumps(r.as_dict(), ensure_ascii=False)
    assert b"".join(r.json_bytes()) == json.dumps(r.as_dict(), ensure_ascii=False).encode()


def test_saved_state_is_used_and_rebuilt_when_in_doubt(worked):
    query = "vitest 数据库"
    db = Conversations(worked.db_path)
    db.add("数据库 in a conversation", memory_id="r1")
    db.close()
    first = build_injection(worked.workspace, query, home=worked.home)
    assert "数据库 in a conversation" in first.text
    settings = load_settings(worked)
    assert prep.load_prepared(worked, settings) is not None
    assert prep.cache_path(worked, "conversation").parent == worked.home / "cache"
    # the triggers that count row changes are gone (Muse recreated its table): never trusted
    conn = sqlite3.connect(worked.db_path)
    conn.execute("DROP TRIGGER memtui_gen_memories_upd")
    conn.commit()
    conn.close()
    assert prep.load_prepared(worked, settings) is None
    assert build_injection(worked.workspace, query, home=worked.home).text == first.text
    assert prep.load_prepared(worked, settings) is not None  # rebuilt, triggers added back
    # a damaged file is not trusted: its checked header ...
    path = prep.cache_path(worked, "conversation")
    good = path.read_bytes()
    data = bytearray(good)
    data[saved_file.HEADER + 3] ^= 0xFF
    path.write_bytes(bytes(data))
    assert prep.load_prepared(worked, settings) is None
    assert build_injection(worked.workspace, query, home=worked.home).text == first.text
    # ... or a section, checked when first read: the error names the file, which is removed
    data = bytearray(good)
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    r = build_injection(worked.workspace, query, home=worked.home)
    assert r.text == first.text
    with pytest.raises(prep.DamagedPreparedIndex, match="prepared index is damaged"):
        r.to_json()
    assert not path.exists()
    again = build_injection(worked.workspace, query, home=worked.home)
    assert again.text == first.text and json.loads(again.to_json())["count"] == first.count


def test_preview_json_survives_a_damaged_section_of_the_prepared_index(worked):
    """The installed `memtui preview --json` after damage to one section: the same answer
    as before the damage, rebuilt from the files, no DamagedPreparedIndex traceback."""
    from tests.cli.run import memtui, ok

    query = "vitest 数据库"
    first = json.loads(ok(memtui(worked, "preview", query, "--json")).stdout)
    path = prep.cache_path(worked, "conversation")
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    again = json.loads(ok(memtui(worked, "preview", query, "--json")).stdout)
    assert again["text"] == first["text"] and again["candidates"] == first["candidates"]
    assert path.exists()  # saved again by the rebuild


def test_a_same_size_edit_with_the_mtime_put_back_is_not_served_stale(worked):
    """README: "never a stale answer". A file rewritten in place (same inode, same size) with
    its old mtime put back looks unchanged by size, mtime and inode; its ctime moved, so it
    is hashed again, by the prepared index (`memtui preview`) and by a live store's reload."""
    from memtui.core.store import MemoryStore
    from tests.cli.run import memtui, ok

    path = worked.user_root / "preferences.md"
    old = time.time() - 3600
    os.utime(path, (old, old))
    store = MemoryStore(worked)
    store.load()
    first = json.loads(ok(memtui(worked, "preview", "vitest", "--json")).stdout)
    assert "vitest" in first["text"].lower() and prep.cache_path(worked, "conversation").exists()
    data = path.read_bytes()
    changed = data.replace(b"vitest", b"jestxx")
    assert changed != data and len(changed) == len(data)
    st = os.stat(path)
    with open(path, "r+b") as fh:  # in place: the inode stays
        fh.write(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the mtime put back
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    assert "Use vitest" in first["text"]
    again = json.loads(ok(memtui(worked, "preview", "vitest", "--json")).stdout)
    assert "Use vitest" not in again["text"]
    assert "Use jestxx" in json.loads(ok(memtui(worked, "preview", "jestxx", "--json")).stdout)["text"]
    store.reload()
    assert any("jestxx" in e.text for e in store.entries("user"))
    store.close()


def test_no_saved_state_without_a_home(tmp_path):
    paths = Paths(tmp_path / "nohome", tmp_path)
    r = build_injection(paths.workspace, "anything", home=paths.home)
    assert r.count == 0 and not paths.home.exists()


def test_same_size_edit_within_one_mtime_tick_is_seen(worked):
    path = worked.user_root / "preferences.md"
    assert "vitest" in build_injection(worked.workspace, "vitest", home=worked.home).text
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"vitest", b"mocha!"))  # same size, same inode
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same mtime, as within one tick
    assert (path.stat().st_size, path.stat().st_mtime_ns, path.stat().st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    r = build_injection(worked.workspace, "vitest mocha", home=worked.home)
    assert "mocha!" in r.text and "vitest" not in r.text


def test_the_tui_takes_saved_lines_and_answers_the_same(worked, monkeypatch):
    from memtui.core import injection
    from memtui.core.serve import inject_from_store
    from memtui.core.store import MemoryStore

    write(worked.user_root / "secret.md", "- deploy with password=hunter22 on vitest day\n")
    query = "vitest 数据库 deploy"
    saved = build_injection(worked.workspace, query, home=worked.home)  # saves the prepared index
    store = MemoryStore(worked)
    store.load()
    settings = load_settings(worked)
    assert store.lines.made == {}  # a new store starts with no made lines: they come from the saved state

    def no_redaction(*args):
        raise AssertionError("a saved line was made again")

    monkeypatch.setattr(injection, "make_line", no_redaction)  # every line must come from the saved state
    r = inject_from_store(store, settings, query)
    store.close()
    assert r.text == saved.text and "[REDACTED]" in r.text
    assert [(c.entry.id, c.status, c.line) for c in r.candidates] == [(c.entry.id, c.status, c.line) for c in saved.candidates]


def _file_ids(paths: Paths) -> dict[str, tuple[int, int]]:
    out = {}
    for layer in ("user", "project", "conversation"):
        st = prep.cache_path(paths, layer).stat()
        out[layer] = (st.st_ino, st.st_mtime_ns)
    return out


def test_an_outside_edit_parses_that_file_alone(worked, monkeypatch):
    """One edited Markdown file is parsed again alone and spliced into its saved layer, whose
    file is saved again; the other layers' files are not touched, and the answer is a fresh
    load's, before and after the splice is saved."""
    from memtui.core import markdown

    db = Conversations(worked.db_path)
    db.add("数据库 in a conversation", memory_id="r1")
    db.close()
    write(worked.user_root / "other.md", "- vitest in another file of the layer\n")
    query = "vitest 数据库"
    build_injection(worked.workspace, query, home=worked.home)
    before = _file_ids(worked)
    write(worked.user_root / "preferences.md", PREFS.replace("vitest", "mocha 数据库"))
    parsed: list[str] = []
    real = markdown.parse_text
    monkeypatch.setattr(markdown, "parse_text", lambda text: parsed.append(text) or real(text))
    built = _built(worked, query)
    assert len(parsed) == 1 and "mocha" in parsed[0]  # the edited file alone
    monkeypatch.setattr(markdown, "parse_text", real)
    assert built == _fresh(worked, query)
    after = _file_ids(worked)
    assert after["project"] == before["project"] and after["conversation"] == before["conversation"]
    assert after["user"] != before["user"]  # the spliced layer, saved again
    settings = load_settings(worked)
    prepared = prep.load_prepared(worked, settings)
    assert prepared is not None and prepared.stamp is not None  # used as saved, no parsing
    user, fresh = prepared.indexes["user"], prep.prepare(worked, settings, save=False).indexes["user"]
    assert [user.entry(p) for p in range(user.size)] == [fresh.entry(p) for p in range(fresh.size)]
    # a file removed and one added: the same, each alone
    (worked.user_root / "other.md").unlink()
    write(worked.user_root / "third.md", "- 数据库 vitest in a new file\n")
    assert _built(worked, query) == _fresh(worked, query)
    assert prep.load_prepared(worked, settings) is not None


def test_rows_of_another_writer_are_laid_over_the_saved_layer(worked):
    """Rows added, changed and deleted by another writer (and a conversation moved to this
    workspace) are read alone and laid over the saved conversation layer, whose file is not
    rewritten; every answer is a fresh load's, the JSON of every candidate included."""
    db = Conversations(worked.db_path)
    db.ensure_conversation("c-here", "here", str(worked.workspace))
    db.ensure_conversation("c-else", "elsewhere", str(worked.home / "elsewhere"))
    for i in range(30):
        db.add(f"数据库 row {i} vitest" if i % 3 else f"row {i}", memory_id=f"r{i:02}",
                                   conversation_id=["c-here", "c-else", None][i % 3], updated_at=1_700_000_000_000 + i)
    db.close()
    query = "vitest 数据库 row"
    build_injection(worked.workspace, query, home=worked.home)
    before = _file_ids(worked)
    settings = load_settings(worked)
    conn = sqlite3.connect(worked.db_path)  # another writer
    steps = [
        ("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, created_at, "
         "updated_at) VALUES ('new1', 'conversation', 'knowledge', '数据库 newest row', '[]', 'auto', 'c-here', NULL, 1, "
         "1800000000000)", []),
        ("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, created_at, "
         "updated_at) VALUES ('old1', 'conversation', 'knowledge', 'vitest oldest row', '[\"t\"]', 'auto', NULL, NULL, 1, 5)", []),
        ("UPDATE memories SET content = 'vitest changed in place' WHERE id = 'r04'", []),
        ("UPDATE memories SET updated_at = 1900000000000 WHERE id = 'r07'", []),
        ("DELETE FROM memories WHERE id IN ('r01', 'r10')", []),
        ("UPDATE conversations SET workspace_path = ? WHERE id = 'c-else'", [str(worked.workspace)]),
        ("UPDATE conversations SET title = 'renamed' WHERE id = 'c-here'", []),
        ("DELETE FROM conversations WHERE id = 'c-here'", []),
        ("UPDATE memories SET type = 'note' WHERE id = 'r13'", []),
        ("UPDATE memories SET id = 'r16-renamed' WHERE id = 'r16'", []),
    ]
    for sql, args in steps:
        conn.execute(sql, args)
        conn.commit()
        prepared = prep.load_prepared(worked, settings)
        assert prepared is not None, sql
        assert isinstance(prepared.indexes["conversation"], PatchedLayer), sql
        assert _built(worked, query) == _fresh(worked, query), sql
        assert _file_ids(worked) == before, sql  # no layer saved again
    conn.close()


def test_many_changed_rows_are_spliced_in_and_saved(worked, monkeypatch):
    """Past `REBASE_ROWS` changed rows the layer is spliced and saved again as of now; a log
    that lost changes (triggers dropped and added back) rebuilds the layer whole."""
    db = Conversations(worked.db_path)
    for i in range(12):
        db.add(f"数据库 row {i}", memory_id=f"r{i:02}", updated_at=1_700_000_000_000 + i)
    db.close()
    monkeypatch.setattr(current_layers, "REBASE_ROWS", 3)
    query = "数据库 row"
    build_injection(worked.workspace, query, home=worked.home)
    settings = load_settings(worked)
    before = _file_ids(worked)
    conn = sqlite3.connect(worked.db_path)
    conn.execute("UPDATE memories SET content = content || ' again' WHERE id < 'r05'")
    conn.commit()
    assert _built(worked, query) == _fresh(worked, query)
    after = _file_ids(worked)
    assert after["conversation"] != before["conversation"] and after["user"] == before["user"]
    prepared = prep.load_prepared(worked, settings)
    assert prepared is not None and not isinstance(prepared.indexes["conversation"], PatchedLayer)
    # the log loses a change: memtui cannot tell what changed, so the layer is rebuilt whole
    conn.execute("DELETE FROM memtui_row_log")
    conn.execute("UPDATE memories SET content = 'vanished change' WHERE id = 'r07'")
    conn.execute("DELETE FROM memtui_row_log")
    conn.commit()
    conn.close()
    assert prep.load_prepared(worked, settings) is None
    assert _built(worked, "vanished") == _fresh(worked, "vanished")
    assert prep.load_prepared(worked, settings) is not None


def test_the_tui_takes_the_saved_layers_that_hold_its_entries(worked):
    """A store whose snapshot holds exactly a saved layer's entries answers from that layer
    (no indexing on the first preview); a layer changed since is indexed from the store."""
    from memtui.core.serve import inject_from_store
    from memtui.core.store import MemoryStore
    from memtui.core.store.layer_index import snapshot_index

    db = Conversations(worked.db_path)
    db.add("数据库 in a conversation", memory_id="r1")
    db.close()
    query = "vitest 数据库"
    build_injection(worked.workspace, query, home=worked.home)  # saves the prepared index
    write(worked.project_root / "context.md", CONTEXT + "- 数据库 added after it was saved\n")
    store = MemoryStore(worked)
    store.load()
    try:
        r = inject_from_store(store, load_settings(worked), query)
        taken = {layer: snapshot_index(store.lines, layer, store.snapshot(layer)).rows is not None
                 for layer in ("user", "project", "conversation")}
        assert taken == {"user": True, "project": False, "conversation": True}
        assert (r.text, _json(r)) == _fresh(worked, query)
    finally:
        store.close()


@pytest.mark.parametrize("length_bytes", [b"\xff\xff\xff\xff", b"\x00\xff\xff\xff"])
def test_a_huge_length_in_the_prepared_index_header_is_damage_not_a_crash(worked, length_bytes):
    """Bytes 8-11 of the saved file are the top of the header body's length: flipped, it
    claims exabytes (an OverflowError from pread) or petabytes (a MemoryError). Every length
    is checked against the file's size first: the file is damaged, so it is rebuilt, and both
    `memtui preview --json` and the hook answer as before."""
    from tests.cli.run import memtui, ok

    query = "vitest 数据库"
    first = json.loads(ok(memtui(worked, "preview", query, "--json")).stdout)
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": query, "cwd": str(worked.workspace)})
    hooked = memtui(worked, "hook", "claude-code", input=event)
    assert hooked.returncode == 0 and hooked.stdout == first["text"] + "\n"
    path = prep.cache_path(worked, "conversation")

    def damage() -> None:
        data = bytearray(path.read_bytes())
        data[8:12] = length_bytes
        path.write_bytes(bytes(data))

    damage()
    assert prep.load_prepared(worked, load_settings(worked)) is None
    again = ok(memtui(worked, "preview", query, "--json"))
    assert json.loads(again.stdout)["candidates"] == first["candidates"] and "Traceback" not in again.stderr
    damage()
    hooked = memtui(worked, "hook", "claude-code", input=event)
    assert (hooked.returncode, hooked.stdout, hooked.stderr) == (0, first["text"] + "\n", "")


def test_a_section_longer_than_the_file_is_damage(worked):
    """A section's offset and length are checked against the file's size before it is read."""
    build_injection(worked.workspace, "vitest", home=worked.home)
    path = prep.cache_path(worked, "conversation")
    size = path.stat().st_size
    sections = saved_file.Sections(path, os.open(path, os.O_RDONLY), saved_file.HEADER, size)  # it owns the descriptor
    try:
        for offset, length in ((0, 1 << 56), (size, 1), (-1, 4)):
            with pytest.raises(prep.DamagedPreparedIndex):
                sections.raw(offset, length, 0)
    finally:
        sections.close()
    assert not path.exists()  # removed: rebuilt by the next run
    assert build_injection(worked.workspace, "vitest", home=worked.home).count


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.text(), min_size=5, max_size=5), clipped=st.booleans(), tokens=st.integers(0, 10**9),
       layer=st.sampled_from(["user", "project", "conversation"]), score=st.floats(0, 1),
       status=st.sampled_from(["included", "budget", "below_gate"]))
def test_a_saved_candidate_json_is_json_dumps(texts, clipped, tokens, layer, score, status):
    """`json_pieces` writes each field as the encoder does (any text: quotes, controls, lone
    surrogates, wide characters); with the score and status between them they are exactly
    `json.dumps(candidate_fields(...), ensure_ascii=False)`."""
    from memtui.core.injection import candidate_fields
    from memtui.core.store.candidate_json import json_pieces

    entry_id, source, importance, updated, line = texts
    made = (line, clipped, 0, tokens)
    head, tail = json_pieces(layer, (entry_id, source, importance, updated), made)
    whole = json.dumps(candidate_fields(entry_id, layer, source, score, status, made, importance, updated),
                       ensure_ascii=False)
    assert head + json.dumps(score) + ', "status": "' + status + tail == whole


_FIELD = st.text(max_size=6) | st.sampled_from([None, 3, "数据库", '"q"', "\ud800"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.tuples(_FIELD, _FIELD, _FIELD, _FIELD),
                          st.tuples(_FIELD, st.booleans() | st.just(1), st.just(0), st.integers(0, 99) | st.just(True))),
                max_size=5), st.sampled_from(["user", "conversation"]))
def test_json_pieces_in_bulk_are_each_candidates_pieces(pairs, layer):
    """`json_pieces_many` over whole columns is `json_pieces` of each candidate, whatever the
    types of its fields (the columns of plain text are written without a check per field)."""
    from memtui.core.store.candidate_json import json_pieces, json_pieces_many

    shown, made = [p[0] for p in pairs], [p[1] for p in pairs]
    try:
        want = [json_pieces(layer, s, m) for s, m in zip(shown, made)]
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            json_pieces_many(layer, shown, made)
        return
    assert json_pieces_many(layer, shown, made) == want


def test_the_saved_files_are_closed_with_their_answers(worked):
    """A process that answers many times (the MCP server, a test run) keeps no saved file open
    once nothing reads from it: each layer's file is closed with the last index reading it."""
    db = Conversations(worked.db_path)
    db.add("数据库 in a conversation", memory_id="r1")
    db.close()
    build_injection(worked.workspace, "vitest", home=worked.home)

    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_files()
    for i in range(40):
        if i % 10 == 5:  # an edit and a new row now and then: the spliced and overlaid paths too
            write(worked.project_root / "context.md", CONTEXT + f"- 数据库 edit {i}\n")
            conn = sqlite3.connect(worked.db_path)
            conn.execute("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, "
                         "created_at, updated_at) VALUES (?, 'conversation', 'knowledge', 'vitest row', '[]', 'auto', "
                         "NULL, NULL, 1, 2)", [f"n{i}"])
            conn.commit()
            conn.close()
        r = build_injection(worked.workspace, "vitest 数据库", home=worked.home)
        assert r.count and json.loads(r.to_json())["count"] == r.count
        del r
    assert open_files() <= before + 3


def test_a_first_runs_conversation_read_locked_out_by_its_own_child_is_read_again(tmp_path, monkeypatch):
    """On a first run the child that builds the Markdown layers opens muse.db beside the parent
    (a fresh database turned to WAL); under load it can hold it past the parent's wait. Once the
    child is gone the rows are read again: a first preview shows them as a warm one does."""
    rnd = random.Random(5)
    paths = _corpus_on_disk(tmp_path, rnd)
    db = Conversations(paths.db_path)
    db.add("database pool row", conversation_id="c-here", memory_id="r1")
    db.close()
    want = prep.prepare(paths, load_settings(paths), save=False).indexes["conversation"].size
    assert want >= 1
    real = prep.build_layers
    calls: list[list[str]] = []

    def locked_once(paths_, settings_, save, missing):
        calls.append(list(missing))
        if missing == ["conversation"] and len([c for c in calls if c == ["conversation"]]) == 1:
            built, failed = real(paths_, settings_, save, missing)
            problem = Problem(str(paths_.db_path), "conversation memories unavailable: database is locked")
            return {**built, "conversation": (built["conversation"][0], [problem])}, failed | {"conversation"}
        return real(paths_, settings_, save, missing)

    monkeypatch.setattr(prep, "build_layers", locked_once)
    monkeypatch.setattr(prep, "start_aside", lambda *args: -1)  # a child that is gone at once
    monkeypatch.setattr(prep, "wait_aside", lambda child: None)
    settings = load_settings(paths)
    p = prep.prepare(paths, settings, save=True)
    assert calls.count(["conversation"]) == 2
    assert "conversation" not in p.failed_layers and not any("locked" in x.message for x in p.problems)
    assert p.indexes["conversation"].size == want
