"""The doctor (SPEC §10): it finds exactly what was planted, nothing on a clean store, and
never changes a memory."""

from __future__ import annotations

import json
import os
import subprocess
import time

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


def test_the_demo_starts_in_step_and_shows_what_the_doctor_finds(tmp_path):
    """The demo's search index is built with it (no `index` finding on a fresh demo), and its
    repository gives the doctor two real findings to show: a memory repeating AGENTS.md, and
    one naming a folder that is not there."""
    from memtui.core.demo import write_demo

    paths = write_demo(tmp_path / "home", tmp_path / "shop-app")
    found = doctor.findings(paths)
    assert sorted((f.kind, f.source) for f in found) == [("already_loaded", "context.md:11"),
                                                         ("stale_reference", "patterns.md:7")]
