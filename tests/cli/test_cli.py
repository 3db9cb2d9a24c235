"""The commands of SPEC §6, run as a user runs them: a real `memtui` process."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import enable, write

PREFS = "---\ntype: preference\nimportance: high\n---\n\n## Testing\n\n- Use vitest, not jest\n- Prefer describe/it style\n"


def run(paths, *args, input=None):
    cmd = [sys.executable, "-m", "memtui.cli.main", "--home", str(paths.home), "-w", str(paths.workspace), *args]
    return subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=60,
                          stdin=None if input is not None else subprocess.DEVNULL)


def test_preview_json_and_text(paths):
    write(paths.user_root / "preferences.md", PREFS)
    enable(paths)
    r = run(paths, "preview", "vitest", "--json")
    assert r.returncode == 0
    data = json.loads(r.stdout)
    for key in ("workspace", "query", "enabled", "injected", "disabled_reason", "count", "truncated", "tokens",
                "chars", "retrieval_ms", "budget", "redacted", "text", "errors", "candidates"):
        assert key in data
    assert data["count"] == 2 and data["candidates"][0]["source"] == "preferences.md:8"
    for key in ("id", "layer", "source", "score", "status", "clipped", "tokens", "line"):
        assert key in data["candidates"][0]
    r = run(paths, "preview", "vitest")
    assert r.stdout == data["text"] + "\n"
    assert r.stderr.strip() == f"2 memories injected · {data['tokens']}/2000 tokens"


def test_preview_counts_its_problems_and_status_names_an_unreadable_settings_file(paths):
    write(paths.user_root / "preferences.md", PREFS)
    write(paths.user_root / "bad.md", "---\na: [\n---\n- x\n")
    enable(paths)
    r = run(paths, "preview", "vitest")
    assert r.returncode == 0 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("2 memories injected") and "1 problem (files skipped or settings ignored" in r.stderr
    write(paths.global_settings, "{}")
    write(paths.workspace_settings, '{"memoryEnabled": true, // on\n}')
    r = run(paths, "status")
    memory_line = next(line for line in r.stdout.splitlines() if line.startswith("Memory:"))
    assert "cannot be read (invalid JSON" in memory_line and str(paths.workspace_settings) in memory_line
    assert "memtui enable" not in r.stdout and "Fix that file by hand" in r.stdout


def test_preview_does_not_import_textual(paths):
    enable(paths)
    argv = ["memtui", "--home", str(paths.home), "-w", str(paths.workspace), "preview", "x"]
    code = (f"import sys; from memtui.cli.main import main; sys.argv={argv!r}\n"
            "try: main()\nexcept SystemExit: pass\n"
            "assert not any(m.startswith('textual') for m in sys.modules), 'textual imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_remember_refuses_when_off_and_writes_nothing(paths):
    r = run(paths, "remember", "use pnpm")
    assert r.returncode == 1
    assert "memtui enable" in r.stderr
    assert not paths.default_file("user").exists()
    assert not paths.db_path.exists()


def test_enable_remember_list_forget_undo(paths):
    r = run(paths, "enable")
    assert r.returncode == 0 and str(paths.workspace_settings) in r.stdout
    assert json.loads(paths.workspace_settings.read_text()) == {"memoryEnabled": True}
    assert run(paths, "remember", "Prefer pnpm over npm", "--category", "preference", "--tag", "js").returncode == 0
    assert run(paths, "remember", "uses Postgres 16", "--project").returncode == 0
    dup = run(paths, "remember", "prefer pnpm over npm")
    assert dup.returncode == 0 and "Already remembered" in dup.stdout
    notes = paths.default_file("user").read_text()
    assert notes.count("pnpm") == 1 and "type: preference" in notes and "tags: [js]" in notes
    listed = json.loads(run(paths, "list", "--json").stdout)["entries"]
    assert [(e["layer"], e["text"]) for e in listed] == [("user", "Prefer pnpm over npm"), ("project", "uses Postgres 16")]
    assert "notes.md:" in run(paths, "list", "--layer", "user").stdout
    # forget with no terminal to ask on deletes nothing
    r = run(paths, "forget", "pnpm")
    assert r.returncode == 1 and "nothing deleted" in r.stderr.lower()
    assert "pnpm" in paths.default_file("user").read_text()
    assert run(paths, "forget", "no-such-thing", "--yes").returncode == 1
    r = run(paths, "forget", "pnpm", "--yes")
    assert r.returncode == 0
    assert "pnpm" not in paths.default_file("user").read_text()
    assert run(paths, "undo").returncode == 0
    assert paths.default_file("user").read_text() == notes


def test_forget_refuses_when_off(paths):
    write(paths.user_root / "a.md", "- secret plan\n")
    r = run(paths, "forget", "secret", "--yes")
    assert r.returncode == 1 and "memtui enable" in r.stderr
    assert (paths.user_root / "a.md").read_text() == "- secret plan\n"


def test_status_reports_problems_with_paths(paths):
    bad = write(paths.user_root / "bad.md", "---\n[1, 2]\n---\n- x\n")
    write(paths.user_root / "good.md", "- fine\n")
    enable(paths)
    r = run(paths, "status", "--json")
    assert r.returncode == 0
    data = json.loads(r.stdout)
    assert data["enabled"] is True and data["counts"]["user"] == {"total": 1, "active": 1, "archived": 0}
    assert any(e["source"] == str(bad) for e in data["errors"])
    text = run(paths, "status").stdout
    assert "Memory: on" in text and str(bad) in text


def test_usage_error_exit_code(paths):
    assert run(paths, "list", "--layer", "nope").returncode == 2
    assert run(paths, "no-such-command").returncode == 2


def test_read_only_commands_create_nothing_on_a_fresh_machine(tmp_path):
    from memtui.core.paths import Paths

    fresh = Paths(tmp_path / "no-muse-yet", tmp_path / "project")
    (tmp_path / "project").mkdir()
    for args in (["status"], ["list"], ["preview", "x"]):
        assert run(fresh, *args).returncode == 0
    assert not fresh.home.exists()


def test_preview_json_is_written_as_json_dumps_writes_it(paths):
    """`preview --json` writes its candidates a piece at a time: the bytes are still exactly
    `json.dumps(..., ensure_ascii=False)` of the result, every candidate in order, from a
    warm run (the prepared index) as from the first."""
    from memtui.core.serve import build_injection
    from memtui.core.store.conversations import Conversations

    write(paths.user_root / "preferences.md", PREFS)
    write(paths.project_root / "context.md", "- 数据库连接池配置过小\n- Use PostgreSQL + pgbouncer\n- vitest 数据库 \"quoted\"\n")
    enable(paths)
    db = Conversations(paths.db_path)
    db.ensure_conversation("here", "This one", str(paths.workspace))
    for i in range(30):
        db.add(f"note {i} " + ("vitest 数据库" if i % 3 == 0 else "other"), conversation_id="here")
    db.close()
    outputs = [run(paths, "preview", "vitest 数据库", "--json") for _ in range(2)]  # builds, then reads, the index
    expected = build_injection(paths.workspace, "vitest 数据库", home=paths.home).as_dict()
    for r in outputs:
        assert r.returncode == 0, r.stderr
        data = json.loads(r.stdout)
        assert r.stdout == json.dumps(data, ensure_ascii=False) + "\n"
        assert {s["status"] for s in data["candidates"]} >= {"included", "below_gate"}
        data["retrieval_ms"] = expected["retrieval_ms"]
        assert data == json.loads(json.dumps(expected, ensure_ascii=False))


def test_the_console_script_ends_preview_with_its_output_and_exit_code(paths):
    """The installed script ends `preview` without the interpreter's teardown: everything it
    printed is there, and its exit code is click's (2 for a usage error)."""
    from pathlib import Path

    write(paths.user_root / "preferences.md", PREFS)
    enable(paths)
    script = [str(Path(sys.executable).parent / "memtui"), "--home", str(paths.home), "-w", str(paths.workspace)]
    done = subprocess.run([*script, "preview", "vitest"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == run(paths, "preview", "vitest").stdout, done.stderr
    assert done.stderr.startswith("2 memories injected")
    as_json = subprocess.run([*script, "preview", "vitest", "--json"], capture_output=True, text=True, timeout=60)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["count"] == 2 and as_json.stdout.endswith("}\n")
    bad = subprocess.run([*script, "preview", "vitest", "--now", "soon"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "is not an ISO 8601 time" in bad.stderr and bad.stdout == ""
