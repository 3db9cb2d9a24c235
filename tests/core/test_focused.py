"""Focused injection (SPEC §15, docs/injection.md "Focused injection"): its plain reference,
the engine held equal to it (over entries and over the prepared index's layers), and the
cases the issue names."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import unicodedata

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memtui.core.injection import ExtraScores, est, inject
from memtui.core.model import Entry
from memtui.core.relevance import entry_terms
from memtui.core.serve import build_injection
from memtui.core.settings import Settings, load_settings
from tests.core.test_injection import reference_terms
from tests.helpers import enable, write

LAYERS = ("user", "project", "conversation")
HEADERS = {"user": "### User Preferences", "project": "### Project Knowledge", "conversation": "### Relevant Context"}
WORDS = ["sqlite", "vitest", "数据库", "pool", "pools", "timeout", "timeouts", "react", "deploy", "cache", "caches",
         "what", "how", "s", "x", "aiko's", "policies", "policy", "class", "classes", "the", "数", "status"]


# ---------------------------------------------------------------------- the rule, written out plainly
def reference_content_terms(s: str) -> set[str]:
    """F3 character by character: §5's terms (the §5 oracle's), less the common words and the
    one-character terms that are not a wide letter, each plural folded."""
    from memtui.core.focused import COMMON_WORDS

    out = set()
    for t in reference_terms(s):
        if t in COMMON_WORDS:
            continue
        if len(t) == 1 and not (unicodedata.category(t).startswith("L") and unicodedata.east_asian_width(t) in "WF"):
            continue
        if len(t) >= 4 and t.isascii() and t.isalpha():
            if t.endswith("ies") and len(t) >= 5:
                t = t[:-3] + "y"
            elif t.endswith("sses"):
                t = t[:-2]
            elif t.endswith("s") and t[-2:] not in ("ss", "us", "is"):
                t = t[:-1]
        out.add(t)
    return out


def reference_focused(layers, s: Settings, query: str, semantic=None, decay=None):
    """docs/injection.md's focused rule, F2–F12, over plain entries: every candidate scored,
    every list sorted. `semantic`, `decay`: {entry id: value} or None. The oracle for `inject`."""
    from memtui.core.injection import make_line

    def memory(e):
        out = set()
        for part in (e.text, e.section, e.name, e.description, *e.tags):
            if part:
                out |= reference_content_terms(part)
        return out

    q = reference_content_terms(query)
    live = [e for layer in LAYERS for e in layers[layer] if not e.archived]
    n = len(live)
    weight = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t in q for df in [sum(t in memory(e) for e in live)]}
    sems = [semantic[e.id] for e in live] if semantic is not None else []
    base = sorted(sems)[(len(sems) - 1) // 2] if sems else 0.0

    def parts(e):
        m = memory(e)
        total = math.fsum(weight[t] for t in sorted(q))
        kw = round(math.fsum(weight[t] for t in sorted(q & m)) / total, 4) if q and total else 0.0
        sem = semantic[e.id] if semantic is not None else None
        lift = round((sem - base) / (1 - base), 4) if sem is not None and base < 1 and sem > base else 0.0
        rel = round(kw + (1 - kw) * lift, 4)
        dec = decay[e.id] if decay is not None else None
        damp = 1.0 if dec is None or e.pinned else 0.5 + 0.5 * dec
        score = round(rel * {"high": 1.25, "low": 0.8}.get(e.importance, 1.0) * damp, 4)
        return kw, rel, score, lift

    scored = {e.id: parts(e) for layer in LAYERS for e in layers[layer]}
    best = max((scored[e.id][2] for e in live if not e.pinned), default=0.0)
    cut = round(0.5 * best, 4)

    def base_key(e):
        place = (e.id,) if e.layer == "conversation" else (e.rel_path, e.line_start)
        return ({"high": 0, "normal": 1, "low": 2}[e.importance], -e.updated_at, place)

    # the user and project layers' closest in meaning passes too, when its lift is 0.1 or more
    nearest = set()
    for layer in ("user", "project") if semantic is not None else ():
        rivals = sorted((e for e in layers[layer] if not e.archived and not e.pinned), key=base_key)
        if rivals:
            top = max(rivals, key=lambda e: semantic[e.id])  # max keeps the first of equals
            if scored[top.id][3] >= 0.1:
                nearest.add(top.id)

    remaining, carry, blocks, out, truncated, count = s.budget["total"] - est("## Memory"), 0, ["## Memory"], [], False, 0
    for layer in LAYERS:
        in_base_order = sorted(layers[layer], key=base_key)
        rank = {e.id: i for i, e in enumerate(in_base_order)}
        active = sorted((e for e in in_base_order if not e.archived),
                        key=lambda e: (not e.pinned, -scored[e.id][2], -scored[e.id][1], rank[e.id]))
        archived = sorted((e for e in in_base_order if e.archived), key=lambda e: (-scored[e.id][2], rank[e.id]))
        allowance = min(s.budget[layer] + carry, remaining)
        used, passed, fits, lines = 0, 0, True, []
        for e in active:
            _, rel, score, _ = scored[e.id]
            line, clipped, _ = make_line(e.text, s.max_item_chars, s.redact_secrets)
            if not (e.pinned or e.id in nearest or (rel >= 0.2 and score >= cut)):
                status = "below_gate"
            else:
                passed += 1
                limit = s.max_items.get(layer)
                cost = est(line) + (0 if lines else est(HEADERS[layer]))
                if limit is not None and passed > limit:
                    status = "max_items"
                elif fits and used + cost <= allowance:
                    used += cost
                    lines.append(line)
                    status = "included"
                    count += 1
                    truncated |= clipped
                else:
                    fits = False
                    status = "budget"
                    truncated = True
            out.append((e.id, score, status, line))
        out += [(e.id, scored[e.id][2], "archived", make_line(e.text, s.max_item_chars, s.redact_secrets)[0])
                for e in archived]
        if lines:
            blocks += ["", HEADERS[layer], *lines]
        carry, remaining = allowance - used, remaining - used
    return ("\n".join(blocks) if count else ""), out, truncated, count, cut


# ---------------------------------------------------------------------- the engine is the rule
def focused_settings(total: int, caps: tuple[int, int, int], limit: int | None = 10) -> Settings:
    s = Settings(enabled=True, injection="focused")
    s.budget = {"total": total, **dict(zip(LAYERS, caps))}
    s.max_items = {"user": None, "project": None, "conversation": limit}
    return s


def corpus(rnd: random.Random, n: int, layer: str, whole_terms: bool = False) -> list[Entry]:
    """`n` entries of a layer; their terms are their text's (what focused M reads beyond the
    text is not indexed: focused injection may not narrow), or with `whole_terms` the text's,
    section's and tags', as the store makes them (it may)."""
    out = []
    for i in range(n):
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 12)))
        md = layer != "conversation"
        section = rnd.choice(["", "Pools", "React"]) if md else ""
        tags = tuple(rnd.sample(["cache", "deploy", "sqlite"], rnd.randint(0, 2)))
        out.append(Entry(id=f"{layer}{i}", layer=layer, text=text, importance=rnd.choice(["high", "normal", "low"]),
                         status=rnd.choice(["active"] * 6 + ["archived"]), updated_at=float(rnd.randint(0, 5)),
                         section=section, tags=tags,
                         rel_path=f"f{i % 3}.md", line_start=i, conversation_id=None if md else "c",
                         pinned=md and rnd.random() < 0.1,
                         terms=entry_terms(text, section, tags=tags) if whole_terms else entry_terms(text)))
    return out


QUERIES = st.lists(st.sampled_from(WORDS + ["zzz", "what's"]), max_size=6).map(" ".join)


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), sizes=st.tuples(*[st.integers(0, 30)] * 3), total=st.integers(0, 600),
       caps=st.tuples(*[st.integers(0, 300)] * 3), limit=st.sampled_from([None, 0, 2, 10]),
       extras=st.sampled_from(["none", "semantic", "decay", "both", "close", "near"]), query=QUERIES, narrow=st.booleans(),
       whole_terms=st.booleans())
@example(seed=1, sizes=(3, 3, 3), total=600, caps=(200, 200, 200), limit=10, extras="both", query="", narrow=False,
         whole_terms=False)
@example(seed=2, sizes=(20, 20, 30), total=600, caps=(200, 200, 200), limit=10, extras="decay",
         query="pools timeout cache", narrow=True, whole_terms=True)
@example(seed=3, sizes=(20, 20, 30), total=600, caps=(200, 200, 200), limit=10, extras="close",
         query="zzz", narrow=True, whole_terms=True)
@example(seed=4, sizes=(20, 20, 30), total=600, caps=(200, 200, 200), limit=10, extras="near",
         query="zzz", narrow=True, whole_terms=True)
def test_inject_focused_equals_the_plain_rule(seed, sizes, total, caps, limit, extras, query, narrow, whole_terms):
    """... also read through the layers' postings (`narrow`: every layer narrowed when its
    terms cover what focused M reads, `whole_terms`, as the store's do)."""
    rnd = random.Random(seed)
    layers = {name: tuple(corpus(rnd, n, name, whole_terms)) for name, n in zip(LAYERS, sizes)}
    s = focused_settings(total, caps, limit)
    semantic = decay = None
    extra = {}
    if extras in ("semantic", "both"):
        semantic = {e.id: round(rnd.random(), 4) for es in layers.values() for e in es}
    if extras in ("close", "near"):  # semantic scores close together: every lift under the floor (close) or
        # a few just over it (near), the best match a weak one
        spread = 0.1 if extras == "close" else 0.25
        semantic = {e.id: round(0.5 + spread * rnd.random(), 4) for es in layers.values() for e in es}
    if extras in ("decay", "both"):
        decay = {e.id: rnd.random() for es in layers.values() for e in es}
    if semantic or decay:
        from memtui.core.injection import EntryLayer

        for name, es in layers.items():
            ordered = EntryLayer(name, es).entries  # the positions the engine's layer gives them
            extra[name] = ExtraScores([semantic[e.id] for e in ordered] if semantic else None,
                                      [decay[e.id] for e in ordered] if decay else None)
    text, expected, truncated, count, cut = reference_focused(layers, s, query, semantic, decay)
    r = inject(layers, s, query, extra=extra or None, narrow_min=0 if narrow else None)
    if not narrow:
        assert r._lazy is None
    elif whole_terms:  # every layer's terms cover focused M: narrowed
        assert r._lazy is not None
    assert r.text == text
    assert (r.truncated, r.count) == (truncated, count)
    assert [(c.entry.id, c.score, c.status, c.line) for c in r.candidates] == expected
    assert all(c.why is not None and c.why.score == c.score and c.why.cut == cut for c in r.candidates)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), sizes=st.tuples(*[st.integers(0, 30)] * 3), total=st.integers(0, 600),
       query=QUERIES, whole_terms=st.booleans(), pin=st.booleans())
def test_focused_over_the_prepared_index_layers_answers_as_over_entries(seed, sizes, total, query, whole_terms, pin):
    """The prepared index's layers (`LayerIndex`, what the hook reads) give the plain answer,
    read through their postings (narrowed) or entry by entry, saved and read again or not."""
    from memtui.core.injection import LineMaker
    from memtui.core.store.layer_index import LayerIndex
    from memtui.core.store.patched_layer import PatchedLayer

    rnd = random.Random(seed)
    layers = {name: tuple(corpus(rnd, n, name, whole_terms)) for name, n in zip(LAYERS, sizes)}
    pinned = frozenset(e.id for es in layers.values() for e in es if pin and rnd.random() < 0.1)
    s = focused_settings(total, (200, 250, 150))
    plain = inject(layers, s, query, pinned=pinned)
    indexes = {name: LayerIndex.from_entries(name, es) for name, es in layers.items()}
    indexed = inject(indexes, s, query, pinned=pinned, narrow_min=0)
    if whole_terms:  # the indexed terms cover focused M: narrowed
        assert indexed._lazy is not None
    assert _json(indexed) == _json(plain)
    saved = {name: _saved_and_read(index, LineMaker(s.max_item_chars, s.redact_secrets))
             for name, index in indexes.items()}
    assert _json(inject(saved, s, query, pinned=pinned, narrow_min=0)) == _json(plain)
    # a saved layer with entries taken out and others taken in since (what the hook reads after an edit)
    patched, now = {}, {}
    for name, es in layers.items():
        kept, late = es[: len(es) // 2], es[len(es) // 2:]
        base = _saved_and_read(LayerIndex.from_entries(name, kept), LineMaker(s.max_item_chars, s.redact_secrets))
        removed = [p for p in range(base.size) if rnd.random() < 0.2]
        gone = {base.entry(p).id for p in removed}
        patched[name] = PatchedLayer(base, removed, LayerIndex.from_entries(name, late))
        now[name] = tuple(e for e in es if e.id not in gone)
        if whole_terms:
            assert patched[name].focus() is not None
    assert _json(inject(patched, s, query, pinned=pinned, narrow_min=0)) == _json(inject(now, s, query, pinned=pinned))


def _saved_and_read(index, maker):
    """The index as the prepared index saves it (`core` marshalled) and a later process reads it."""
    import marshal

    from memtui.core.store.layer_index import LayerIndex

    state = index.state(maker)
    lists = [state.pop(name) for name in ("rows", "shown", "made", "frags")]
    postings = state.pop("postings")
    core = marshal.loads(marshal.dumps({**state, "size": len(lists[0])}))
    return LayerIndex.from_state(core, *lists, postings)


def _json(r) -> str:
    data = json.loads(r.to_json())
    data.pop("retrieval_ms")
    return json.dumps(data, ensure_ascii=False)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 60), limit=st.sampled_from([0, 1, 2, 5, 10]),
       semantic=st.booleans(), pins=st.integers(0, 3))
@example(seed=5, n=40, limit=2, semantic=False, pins=0)
def test_a_narrowed_layer_with_max_items_ranks_its_passing_as_the_rule(seed, n, limit, semantic, pins):
    """A large layer with a limit (F9): its candidates share the message's words, importance
    and decay tell their scores apart, so a later one in relevance can outrank an earlier one;
    only the candidates that can reach the first `limit` are scored, the others listed as
    past max items (or below the gate) as the rule says."""
    rnd = random.Random(seed)
    texts = [" ".join(rnd.sample(["pool", "timeout", "cache", "deploy"], 2)) for _ in range(n)]
    entries = tuple(Entry(id=f"c{i}", layer="conversation", text=text, importance=rnd.choice(["high", "normal", "low"]),
                          updated_at=float(rnd.randint(0, 9)), conversation_id="c", pinned=i < pins, terms=entry_terms(text))
                    for i, text in enumerate(texts))
    layers = {"user": (), "project": (), "conversation": entries}
    s = focused_settings(2000, (600, 800, 600), limit)
    sem = {e.id: round(rnd.random(), 4) for e in entries} if semantic else None
    decay = {e.id: rnd.random() for e in entries}
    from memtui.core.injection import EntryLayer

    ordered = EntryLayer("conversation", entries).entries
    extra = {"conversation": ExtraScores([sem[e.id] for e in ordered] if sem else None, [decay[e.id] for e in ordered])}
    text, expected, truncated, count, cut = reference_focused(layers, s, "pool timeout", sem, decay)
    r = inject(layers, s, "pool timeout", extra=extra, narrow_min=0)
    assert r._lazy is not None  # narrowed
    assert (r.text, r.truncated, r.count) == (text, truncated, count)
    assert [(c.entry.id, c.score, c.status, c.line) for c in r.candidates] == expected


@settings(max_examples=300, deadline=None)
@given(word=st.one_of(st.sampled_from(WORDS + ["policies", "classes", "buses", "ways", "news", "gas", "status"]),
                      st.text(alphabet="abcdefghijklmnopqrsuy", min_size=1, max_size=9)),
       plural=st.sampled_from(["", "s", "es", "ies", "sses"]))
def test_the_stored_forms_of_a_content_term_are_exactly_the_terms_it_comes_from(word, plural):
    """`stored_forms(t)`: the §5 terms whose content term is `t`, all of them (the narrowed
    read finds an entry's focused M through them)."""
    from memtui.core.focused import content_term, stored_forms

    x = word + plural
    t = content_term(x)
    if t:
        assert x in stored_forms(t)
    for form in stored_forms(t or x):
        assert content_term(form) == (t or x)


# ---------------------------------------------------------------------- the cases of the issue
def _entry(i: int, layer: str, text: str, **kw) -> Entry:
    return Entry(id=f"{layer}{i}", layer=layer, text=text, rel_path="a.md", line_start=i,
                 conversation_id="c" if layer == "conversation" else None, **kw)


def test_a_possessive_or_a_one_letter_term_matches_nothing_alone():
    layers = {"user": (_entry(0, "user", "Aiko's coffee is a flat white"), _entry(1, "user", "Timeouts are 30 s")),
              "project": (), "conversation": ()}
    r = inject(layers, focused_settings(2000, (600, 800, 600)), "what's x")
    assert r.count == 0 and r.text == "" and r.disabled_reason == "low_relevance"


def test_nothing_stored_injects_nothing_and_pinned_memories_still_come_first():
    user = (_entry(0, "user", "Use vitest for unit tests"), _entry(1, "user", "Answer in English", pinned=True))
    conv = tuple(_entry(i, "conversation", f"Raised the pool size to {i}") for i in range(30))
    layers = {"user": user, "project": (), "conversation": conv}
    s = focused_settings(2000, (600, 800, 600))
    nothing = inject(layers, s, "a recipe for banana bread")
    assert [c.entry.text for c in nothing.included] == ["Answer in English"]  # pinned alone
    asked = inject(layers, s, "which unit test runner, vitest?")
    assert [c.entry.text for c in asked.included] == ["Answer in English", "Use vitest for unit tests"]


def test_relevance_comes_before_importance():
    """A low-importance exact match is not buried under high-importance entries that share nothing."""
    user = tuple(_entry(i, "user", f"Prefer tabs in file {i}", importance="high") for i in range(40))
    project = (_entry(0, "project", "pgbouncer runs in transaction mode", importance="low"),)
    r = inject({"user": user, "project": project, "conversation": ()}, focused_settings(2000, (600, 800, 600)),
               "pgbouncer transaction mode")
    assert [c.entry.text for c in r.included] == ["pgbouncer runs in transaction mode"]


def test_a_rare_term_weighs_more_than_a_common_one():
    conv = [_entry(i, "conversation", f"Fixed the pool of workers {i}") for i in range(50)]
    conv.append(_entry(99, "conversation", "pgbouncer default_pool_size is 60"))
    r = inject({"user": (), "project": (), "conversation": tuple(conv)}, focused_settings(2000, (600, 800, 600)),
               "pool pgbouncer")
    assert r.included[0].entry.text == "pgbouncer default_pool_size is 60"
    assert len(r.included) == 1  # "pool" alone does not reach half the best score


def test_an_exact_match_is_never_beaten_by_a_vague_one():
    conv = (_entry(0, "conversation", "The vite proxy sends api calls to port 8000"),
            _entry(1, "conversation", "Something vaguely similar"))
    layers = {"user": (), "project": (), "conversation": conv}
    from memtui.core.injection import EntryLayer

    order = [e.id for e in EntryLayer("conversation", conv).entries]
    sem = {"conversation0": 0.1, "conversation1": 0.99}
    extra = {"conversation": ExtraScores([sem[i] for i in order], None)}
    r = inject(layers, focused_settings(2000, (600, 800, 600)), "vite proxy port", extra=extra)
    assert r.included[0].entry.id == "conversation0" and r.included[0].why.relevance == 1.0


def test_a_layers_nearest_in_meaning_passes_whatever_the_cut():
    """A paraphrase shares no word with the memory it needs: the user and project layers'
    closest memory in meaning passes when its lift is 0.1 or more, even below the cut that an
    exact match elsewhere sets; never in the conversation layer, never below that lift."""
    from memtui.core.injection import EntryLayer

    user = (_entry(0, "user", "Commit messages follow Conventional Commits"), _entry(1, "user", "Use tabs"))
    project = (_entry(0, "project", "Standup is at ten on weekdays"), _entry(1, "project", "The team sync notes"))
    conv = (_entry(0, "conversation", "Raised the pool size"), _entry(1, "conversation", "Renamed a table"))
    layers = {"user": user, "project": project, "conversation": conv}
    sem = {"user0": 0.30, "user1": 0.05, "project0": 0.35, "project1": 0.10, "conversation0": 0.40,
           "conversation1": 0.02}

    def run(scores):
        extra = {name: ExtraScores([scores[e.id] for e in EntryLayer(name, es).entries], None)
                 for name, es in layers.items()}
        return inject(layers, focused_settings(2000, (600, 800, 600)), "when is the team sync", extra=extra)

    r = run(sem)
    got = {c.entry.id: c for c in r.candidates}
    assert got["project1"].status == "included"  # the exact match, relevance 1
    assert got["project0"].status == "included" and got["project0"].why.nearest  # below the cut, nearest
    assert got["user0"].status == "included" and got["user0"].why.nearest
    assert got["conversation0"].status == "below_gate" and not got["conversation0"].why.nearest
    low = run({**sem, "user0": 0.12})  # lift (0.12 - 0.10) / 0.9 < 0.1: not near enough
    assert {c.entry.id: c.status for c in low.candidates}["user0"] == "below_gate"


# ---------------------------------------------------------------------- settings, files, faces
def test_the_mode_is_read_from_global_and_workspace_settings(paths):
    enable(paths, {"memory": {"injection": "focused"}})
    s = load_settings(paths)
    assert (s.injection, s.injection_source) == ("focused", "global")
    write(paths.workspace / ".muse" / "settings.json", json.dumps({"memory": {"injection": "muse"}}))
    s = load_settings(paths)
    assert (s.injection, s.injection_source) == ("muse", "workspace")
    assert not any("read only from the global" in p.message for p in s.problems)  # the one key a workspace may set
    write(paths.workspace / ".muse" / "settings.json", json.dumps({"memory": {"injection": "loud", "budget": {}}}))
    s = load_settings(paths)
    assert s.injection == "focused"  # an unknown value is reported and ignored; the global one holds
    messages = [p.message for p in s.problems]
    assert any("memory.injection must be" in m for m in messages)
    assert any("read only from the global" in m for m in messages)


def test_pinned_and_always_apply_are_read_from_the_frontmatter(paths):
    enable(paths, {"memory": {"injection": "focused"}})
    write(paths.user_root / "always.md", "---\nalwaysApply: true\n---\n\n- Answer in English\n")
    write(paths.user_root / "pinned.md", "---\npinned: true\n---\n\n- Keep answers short\n")
    write(paths.user_root / "string.md", "---\npinned: \"true\"\n---\n\n- Not pinned: a string\n")
    write(paths.project_root / "db.md", "- The database is PostgreSQL 16\n")
    r = build_injection(paths.workspace, "banana bread", home=paths.home)
    assert sorted(c.entry.text for c in r.included) == ["Answer in English", "Keep answers short"]
    r = build_injection(paths.workspace, "which PostgreSQL version", home=paths.home)
    assert [c.entry.text for c in r.included][-1] == "The database is PostgreSQL 16"


def test_preview_json_gives_a_why_per_candidate_and_the_hook_agrees(paths):
    enable(paths, {"memory": {"injection": "focused"}})
    write(paths.project_root / "db.md", "---\nimportance: high\n---\n\n- The database is PostgreSQL 16\n- Use pnpm\n")
    out = subprocess.run([sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace),
                          "preview", "postgresql database", "--json"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["count"] == 1 and "PostgreSQL" in data["text"]
    why = data["candidates"][0]["why"]
    assert set(why) >= {"keyword", "semantic", "importance", "decay", "pinned", "scope"}
    assert why["keyword"] == 1.0 and why["importance"] == "high" and why["pinned"] is False
    assert data["candidates"][1]["status"] == "below_gate"
    assert build_injection(paths.workspace, "postgresql database", home=paths.home).text == data["text"]


def test_the_hook_injects_what_preview_shows_in_focused_mode(paths):
    from memtui.core.assistants import Target
    from tests.cli.test_assistants import context_of, hook_input, preview_text, run_hook

    enable(paths, {"memory": {"injection": "focused"}})
    write(paths.project_root / "db.md", "- The database is PostgreSQL 16\n- Use pnpm for packages\n")
    write(paths.user_root / "always.md", "---\nalwaysApply: true\n---\n\n- Answer in English\n")
    prompt = "which postgresql database do we run?"
    ran = run_hook(paths.home, Target.CLAUDE_CODE, hook_input(Target.CLAUDE_CODE, paths.workspace, prompt))
    assert (ran.returncode, ran.stderr) == (0, b"")
    text = context_of(Target.CLAUDE_CODE, ran.stdout)
    assert text == preview_text(paths, Target.CLAUDE_CODE, prompt)
    assert "PostgreSQL" in text and "Answer in English" in text and "pnpm" not in text


def test_status_names_the_focused_mode(paths):
    enable(paths, {"memory": {"injection": "focused"}})
    out = subprocess.run([sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace),
                          "status"], capture_output=True, text=True, check=True)
    assert "Injection: focused (SPEC §15; set in the global settings)" in out.stdout
    data = json.loads(subprocess.run([sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w",
                                      str(paths.workspace), "status", "--json"], capture_output=True, text=True,
                                     check=True).stdout)
    assert data["injection"] == {"mode": "focused", "source": "global"}
