"""The doctor (SPEC §10): it finds exactly what was planted, nothing on a clean store, and
never changes a memory."""

from __future__ import annotations

import json
import os
import subprocess
import time

from hypothesis import example, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from memtui.core import doctor
from memtui.core.paths import Paths

from ..helpers import enable, write


def cli(paths: Paths, *args: str) -> subprocess.CompletedProcess:
    """memtui in a process of its own (a forked entry point: tests/cli/run.py)."""
    from tests.cli.run import memtui

    return memtui(paths, *args)


def memory_bytes(paths: Paths) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for root in (paths.user_root, paths.project_root) for p in root.rglob("*.md")}


def clean_fixture(paths: Paths) -> None:
    enable(paths)
    write(paths.workspace / "src" / "db" / "pool.ts", "export {}\n")
    write(paths.workspace / "package.json", "{}\n")
    write(paths.user_root / "preferences.md", "---\ntype: preference\n---\n\n- Use vitest, not jest\n- Prefer pnpm\n")
    write(paths.project_root / "context.md",
          "- The pool is configured in `src/db/pool.ts`\n"
          "- Scripts live in `package.json`; see https://example.com/docs/setup.md for and/or details\n"
          "- Globs like `src/**/*.ts` and packages like `@types/node` or `lodash/fp` are not paths\n"
          "- Call `os.path.join`, e.g. on v1.2.3\n")


def test_a_clean_store_has_no_findings(paths):
    clean_fixture(paths)
    assert doctor.findings(paths) == []
    r = cli(paths, "doctor")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "No findings" in r.stdout


def test_finds_exactly_what_was_planted_and_changes_nothing(paths):
    clean_fixture(paths)
    enable(paths, {"memory": {"budget": {"total": 2000, "user": 30, "project": 800, "conversation": 600}}})
    # stale: the file moved away
    write(paths.project_root / "moved.md", "- The retry helper is in `src/net/retry.ts` and src/net/backoff.py\n")
    # duplicate across layers (user has "Use vitest, not jest")
    write(paths.project_root / "dupe.md", "- use vitest,  not JEST\n")
    # unreachable: the user layer's cap is 30 tokens; the high-importance entries take them all
    write(paths.user_root / "important.md",
          "---\nimportance: high\n---\n\n- " + "always keep the changelog in sync with releases " * 2 + "\n")
    write(paths.user_root / "low.md", "---\nimportance: low\n---\n\n- a small low note\n")
    # invalid: a date YAML cannot construct
    write(paths.user_root / "bad.md", "---\nupdatedAt: 2026-13-45\n---\n\n- x\n")
    before = memory_bytes(paths)

    found = {(f.kind, f.source) for f in doctor.findings(paths)}

    assert memory_bytes(paths) == before  # the doctor only reads
    assert ("stale_reference", "moved.md:1") in found
    assert ("duplicate", "dupe.md:1") in found
    assert ("unreachable", "low.md:5") in found
    assert any(kind == "invalid" and source.endswith("bad.md") for kind, source in found)
    expected_kinds = {"stale_reference": 1, "duplicate": 1, "invalid": 1}
    for kind, n in expected_kinds.items():
        assert sum(1 for k, _ in found if k == kind) == n, (kind, found)
    # the high entry (5 + 25 tokens) fits the 30-token cap exactly; nothing of lower importance
    # can follow it, whatever the query
    assert {s for k, s in found if k == "unreachable"} == {"preferences.md:5", "preferences.md:6", "low.md:5"}

    r = cli(paths, "doctor", "--json")
    assert r.returncode == 1
    data = json.loads(r.stdout)
    assert {(f["kind"], f["source"]) for f in data["findings"]} == found
    assert data["counts"]["stale_reference"] == 1


def test_index_out_of_step_is_found_and_fixed(paths):
    clean_fixture(paths)
    assert cli(paths, "status").returncode == 0  # builds the index
    write(paths.project_root / "context.md", "- changed behind memtui's back\n")
    found = doctor.findings(paths, ("index",))
    assert [f.kind for f in found] == ["index"]
    r = cli(paths, "doctor", "--fix", "--json")
    data = json.loads(r.stdout)
    assert not [f for f in data["findings"] if f["kind"] == "index"], data
    assert data["fixed"]
    assert doctor.findings(paths, ("index",)) == []


def test_never_injected_uses_the_history(paths):
    from memtui.core.serve import build_injection

    enable(paths, {"memory": {"budget": {"total": 2000, "user": 12, "project": 0, "conversation": 0}}})
    write(paths.user_root / "notes.md", "- alpha beta gamma\n- delta epsilon zeta\n")
    assert doctor.findings(paths, ("never_injected",)) == []  # no history yet: nothing to judge by
    for _ in range(3):
        result = build_injection(paths.workspace, "alpha", home=paths.home, record=True)
        assert result.count == 1
    # both entries were just written: neither has had its 30 days yet, so neither is flagged
    assert doctor.findings(paths, ("never_injected",)) == []
    old = time.time() - 40 * 86400
    os.utime(paths.user_root / "notes.md", (old, old))  # no updatedAt: the file's age is its mtime
    found = doctor.findings(paths, ("never_injected",))
    assert [(f.kind, f.source) for f in found] == [("never_injected", "notes.md:2")]


def test_non_ascii_paths_are_judged_whole_and_globs_are_not_paths(paths):
    """Real-world false positives: names cut at the first non-ASCII character, and a
    backticked glob judged by its folder part."""
    enable(paths)
    write(paths.workspace / "docs" / "1.关键词策略.md", "# 关键词\n")
    write(paths.workspace / "docs" / "notes-été.md", "notes\n")
    write(paths.workspace / "src" / "main" / "App.java", "class App {}\n")
    write(paths.project_root / "refs.md",
          "- 关键词策略见 `docs/1.关键词策略.md`，也见 docs/1.关键词策略.md\n"
          "- Meeting notes: docs/notes-été.md\n"
          "- Java sources match `src/main/**/*.java`; tests match src/main/**/*Test.java\n")
    assert doctor.findings(paths) == []
    write(paths.project_root / "gone.md", "- 旧的策略在 `docs/2.旧策略.md`\n")
    [finding] = doctor.findings(paths)
    assert finding.kind == "stale_reference" and "`docs/2.旧策略.md`" in finding.reason


def test_a_memory_made_today_is_not_never_injected(paths):
    """SPEC §10: only entries older than the window; `remember` then doctor flags nothing."""
    from memtui.core.serve import build_injection

    enable(paths, {"memory": {"budget": {"total": 2000, "user": 12, "project": 0, "conversation": 0}}})
    write(paths.user_root / "old.md", "---\nupdatedAt: 2020-01-01\n---\n- alpha beta gamma\n")
    assert build_injection(paths.workspace, "alpha", home=paths.home, record=True).count == 1
    assert cli(paths, "remember", "a brand new memory about queues").returncode == 0
    data = json.loads(cli(paths, "doctor", "--json").stdout)
    assert [f for f in data["findings"] if f["kind"] == "never_injected"] == []


def _unreachable_by_definition(layers, settings):
    """SPEC §10's unreachable as written: for each entry, every entry of higher importance in
    its layer is ahead of it (compared pair by pair, each line made on its own)."""
    from memtui.core.injection import HEADERS, TITLE, est, make_line
    from memtui.core.model import IMPORTANCE_RANK, LAYERS

    remaining, carry, out = settings.budget["total"] - est(TITLE), 0, []
    for layer in LAYERS:
        cap = settings.budget.get(layer, 0)
        largest = min(cap + carry, remaining)
        carry += cap
        if settings.gate.get(layer, 0.0) > 0:
            continue
        active = [e for e in layers.get(layer, []) if not e.archived]

        def cost(e):
            return est(make_line(e.text, settings.max_item_chars, settings.redact_secrets)[0])

        limit = settings.max_items.get(layer)
        for e in active:
            rank = IMPORTANCE_RANK.get(e.importance, 1)
            ahead = [x for x in active if IMPORTANCE_RANK.get(x.importance, 1) < rank]
            if limit is not None and len(ahead) >= limit:
                out.append((e.id, f"{len(ahead)} entries of higher importance fill max items ({limit})"))
                continue
            need = est(HEADERS[layer]) + sum(cost(x) for x in ahead) + cost(e)
            if need > largest:
                out.append((e.id, f"with the {len(ahead)} entries of higher importance it needs {need} tokens; "
                                  f"the {layer} layer gets at most {largest}" if ahead else
                                  f"it alone needs {need} tokens; the {layer} layer gets at most {largest}"))
    return out


@hyp_settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 60))
def test_unreachable_is_the_pair_by_pair_definition(seed, n):
    """The doctor counts what is ahead of an entry per importance, once per layer; the
    findings are those of comparing every entry with every other."""
    import random

    from memtui.core.model import LAYERS, Entry
    from memtui.core.settings import Settings

    rnd = random.Random(seed)
    words = "alpha beta 数据库 连接池 token=sk-abcdefghijklmnopqrstuvwx retry the a".split()
    layers: dict[str, list[Entry]] = {layer: [] for layer in LAYERS}
    for i in range(n):
        layer = rnd.choice(LAYERS)
        layers[layer].append(Entry(id=f"e{i}", layer=layer, text=" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 30))),
                                   importance=rnd.choice(["high", "normal", "low", "weird"]),
                                   status="archived" if rnd.random() < 0.1 else "active"))
    settings = Settings(
        budget={"total": rnd.randint(0, 400), **{layer: rnd.randint(0, 150) for layer in LAYERS}},
        gate={layer: rnd.choice([0.0, 0.0, -1.0, 0.5]) for layer in LAYERS},
        max_items={layer: rnd.choice([None, 0, 1, 3, 10]) for layer in LAYERS},
        max_item_chars=rnd.choice([20, 80, 400]), redact_secrets=rnd.random() < 0.5)
    found = doctor.unreachable(layers, settings)
    assert [(f.entry_id, f.reason) for f in found] == _unreachable_by_definition(layers, settings)


def test_unreachable_definition_finds_some():
    """The property above is not vacuous: with a tight budget the definition finds entries."""
    from memtui.core.model import Entry
    from memtui.core.settings import Settings

    layers = {"user": [Entry(id=f"u{i}", layer="user", text="alpha beta gamma " * (i + 1),
                             importance=["high", "normal", "low"][i % 3]) for i in range(9)]}
    settings = Settings(budget={"total": 2000, "user": 20, "project": 0, "conversation": 0}, gate={"user": 0.0},
                        max_items={"user": 4})
    expected = _unreachable_by_definition(layers, settings)
    assert len(expected) >= 3
    assert [(f.entry_id, f.reason) for f in doctor.unreachable(layers, settings)] == expected


def test_line_sizes_taken_from_the_prepared_index_are_those_made_here(paths):
    """The doctor reads the lines `memtui preview` saved instead of redacting every text
    again: for each entry they give the same sizes as making its line, and the findings are
    the same with or without them."""
    from memtui.core.settings import load_settings
    from memtui.core.store import MemoryStore

    enable(paths, {"memory": {"budget": {"total": 6000, "user": 10, "project": 3000, "conversation": 600},
                              "maxItemChars": 60}})
    write(paths.user_root / "notes.md", "".join(f"- note {i} about the 数据库 连接池 and token=sk-{'x' * 30}{i}\n"
                                                for i in range(40)))
    write(paths.project_root / "long.md", "".join(f"- {'a long project memory ' * (i % 7 + 1)}{i}\n" for i in range(300)))
    without = doctor.findings(paths)
    assert {f.kind for f in without} >= {"unreachable", "over_limit"}
    assert cli(paths, "preview", "note").returncode == 0  # saves the prepared index
    settings = load_settings(paths)
    store = MemoryStore(paths, index=False)
    store.load()
    try:
        entries = store.current.entries()
        taken = doctor.LineSizes(settings)
        taken.take_saved(paths, settings, [e.text for e in entries])
        made = doctor.LineSizes(settings)
        assert len(taken.known) == len(entries) == 340
        assert taken.known == {e.text: made(e.text) for e in entries}
        assert doctor.findings(paths, store=store) == without
    finally:
        store.close()


def test_the_demo_starts_in_step_and_shows_what_the_doctor_finds(tmp_path):
    """The demo's search index is built with it (no `index` finding on a fresh demo), and its
    repository gives the doctor two real findings to show: a memory repeating AGENTS.md, and
    one naming a folder that is not there."""
    from memtui.core.demo import write_demo

    paths = write_demo(tmp_path / "home", tmp_path / "shop-app")
    found = doctor.findings(paths)
    assert sorted((f.kind, f.source) for f in found) == [("already_loaded", "context.md:11"),
                                                         ("stale_reference", "patterns.md:7")]


def test_already_loaded_says_nearly_when_the_memory_is_not_the_line(paths):
    (paths.workspace / "AGENTS.md").write_text("- Migrations live in db/migrations and run with pnpm db:migrate\n")
    write(paths.project_root / "context.md", "- Migrations live in db/migrations and run with pnpm db:migrate\n"
                                             "- Migrations live in db/migrations and they run with pnpm db:migrate\n")
    found = sorted((f.source, f.reason) for f in doctor.findings(paths, ("already_loaded",)))
    assert [reason.split(" AGENTS.md")[0] for _, reason in found] == ["repeats", "nearly repeats"]


def test_duplicates_do_not_depend_on_the_order_the_entries_come_in(paths):
    """A store that took its conversation entries from the prepared index lists them in
    another order than one that read the rows: the doctor reports the same pairs either way,
    the newer conversation memory against the older, a later file line against an earlier."""
    import random

    from memtui.core.actions import open_store
    from memtui.core.store.conversations import Conversations

    enable(paths)
    write(paths.user_root / "a.md", "- The deploy pipeline caches the pnpm store between runs\n"
                                    "- Something else entirely about the linter\n")
    write(paths.project_root / "b.md", "- The deploy pipeline caches the pnpm store between runs!\n")
    db = Conversations(paths.db_path)
    db.ensure_conversation("c1", "Chat", str(paths.workspace))
    for i, (when, text) in enumerate([(3, "Flaky checkout test waited on a fixed sleep; wait on the condition"),
                                      (1, "Flaky checkout test waited on a fixed sleep; wait on the condition."),
                                      (2, "Flaky checkout test waited on a fixed sleep, wait on the condition"),
                                      (4, "Unrelated: the api lives on port 8080")]):
        db.add(text, memory_id=f"row-{i}", conversation_id="c1", updated_at=1_700_000_000_000 + when * 1000)
    db.close()
    store = open_store(paths)
    try:
        entries = store.entries()
    finally:
        store.close()
    found = doctor.duplicates(entries)
    for seed in range(5):
        shuffled = list(entries)
        random.Random(seed).shuffle(shuffled)
        assert doctor.duplicates(shuffled) == found
    by_id = {e.id: e for e in entries}
    conversation = [by_id[f.entry_id] for f in found if f.layer == "conversation"]
    assert sorted(e.id for e in conversation) == ["row-0", "row-2"]  # reported against row-1, the oldest
    assert ("b.md:1", "near-duplicate of a.md:1") in [(f.source, f.reason) for f in found]


def test_a_path_relative_to_a_sub_crate_is_not_stale_while_a_root_folder_of_that_name_exists(paths):
    """Issue 40: `src/lib.rs` of `crates/foo`, in a workspace that also has a root `src/`."""
    enable(paths)
    write(paths.workspace / "src" / "main.rs", "fn main() {}\n")
    write(paths.workspace / "crates" / "foo" / "Cargo.toml", "[package]\n")
    write(paths.workspace / "crates" / "foo" / "src" / "lib.rs", "pub fn f() {}\n")
    write(paths.project_root / "crates" / "foo" / "notes.md", "- The public API is in `src/lib.rs`\n")
    write(paths.project_root / "crate.md", "- `crates/foo/Cargo.toml` pins serde; its API is in `src/lib.rs`\n")
    assert doctor.findings(paths) == []
    write(paths.project_root / "gone.md", "- The parser lives in `src/parser.rs`\n")  # no crate has it: stale
    [finding] = doctor.findings(paths)
    assert finding.kind == "stale_reference" and "`src/parser.rs`" in finding.reason


@hyp_settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=1, max_size=60), st.integers(1, 3000), st.integers(0, 2**32))
@example([350] * 60, 2900, 7)  # the bound over a hook's limit: the budget that fits is searched
def test_over_limit_sorts_only_what_the_budget_can_reach(lengths, total, seed):
    """`over_limit` takes the entries with the most text per token, as many as the total pays
    for (`heapq.nlargest`): the same findings as when every entry is sorted."""
    import random
    from unittest import mock

    from memtui.core.model import Entry
    from memtui.core.settings import Settings

    rng = random.Random(seed)
    entries = [Entry(id=f"e{i}", layer="project", text=("x" if rng.random() < 0.5 else "a lot ") * n or "-",
                     rel_path="notes.md", line_start=i) for i, n in enumerate(lengths)]
    settings = Settings()
    settings.budget = {**settings.budget, "total": total}
    here = os.path.dirname(__file__)
    paths = Paths.resolve(home=os.path.join(here, "no-home"), workspace=here)  # (only named in a finding)
    found = doctor.over_limit(entries, settings, paths)
    with mock.patch.object(doctor.heapq, "nlargest", lambda n, items, key: sorted(items, key=key, reverse=True)):
        everything = doctor.over_limit(entries, settings, paths)
    assert found == everything
    if total >= 2600 and len(lengths) >= 55 and min(lengths) >= 300:
        assert found  # (the example below: the bound is over a hook's limit, the budget to fit is searched)



def test_the_doctor_pauses_the_cycle_collector_and_leaves_it_as_it_was(paths, monkeypatch):
    import gc

    seen = []
    inner = doctor._findings

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return inner(*args, **kwargs)

    monkeypatch.setattr(doctor, "_findings", watched)
    was = gc.isenabled()
    try:
        gc.enable()
        doctor.findings(paths)
        doctor.findings_read(paths)
        assert gc.isenabled()
        gc.disable()
        doctor.findings(paths)
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False, False, False]
