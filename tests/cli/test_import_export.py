"""`memtui import` / `memtui export` (SPEC §9) through the real CLI, on fixtures written the
way each tool writes its files (tests/core/interop/fixtures)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from memtui.core.paths import Paths

FIXTURES = Path(__file__).resolve().parents[1] / "core" / "interop" / "fixtures"


def cli(paths: Paths, *args: str) -> subprocess.CompletedProcess:
    """memtui in a process of its own (a forked entry point: tests/cli/run.py)."""
    from tests.cli.run import memtui

    return memtui(paths, *args)


def listed(paths: Paths) -> list[dict]:
    r = cli(paths, "list", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["entries"]


def fresh(tmp_path: Path, name: str) -> Paths:
    home, ws = tmp_path / name / "home", tmp_path / name / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    return Paths(home.resolve(), ws.resolve())


def memory_bytes(paths: Paths) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for root in (paths.user_root, paths.project_root) for p in root.rglob("*.md")}


def test_claude_code_import_is_complete_idempotent_and_round_trips(paths, tmp_path):
    source = tmp_path / "claude" / "memory"
    shutil.copytree(FIXTURES / "claude-code" / "memory", source)
    r = cli(paths, "import", "claude-code", str(source), "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["added"] >= 5 and report["skipped_invalid"] == 0
    entries = listed(paths)
    named = {e["name"]: e for e in entries if e.get("name")}
    # every topic file is one memory in its layer, with its name and description
    topic_files = [p for p in source.glob("*.md") if p.name != "MEMORY.md"]
    assert len(named) == len(topic_files)
    for e in named.values():
        assert e["description"] and e["layer"] in ("user", "project")
    feedback = next(e for e in named.values() if "**Why:**" in e["text"])
    assert "**How to apply:**" in feedback["text"] and feedback["layer"] == "user"
    # each imported file says where it came from
    for data in memory_bytes(paths).values():
        assert b"source: import" in data and b"origin: " in data

    again = json.loads(cli(paths, "import", "claude-code", str(source), "--json").stdout)
    assert again["added"] == 0 and again["skipped_duplicate"] == report["added"]

    out = tmp_path / "exported"
    r = cli(paths, "export", "claude-code", str(out))
    assert r.returncode == 0, r.stderr
    index = (out / "MEMORY.md").read_text()
    assert len(index.splitlines()) <= 200 and len(index.encode()) <= 25_000
    assert re.search(r"^- \[.+\]\(.+\.md\)", index, re.M)

    empty = fresh(tmp_path, "empty")
    r = cli(empty, "import", "claude-code", str(out), "--json")
    assert r.returncode == 0, r.stderr
    back = {(e["layer"], e["text"]) for e in listed(empty)}
    assert back == {(e["layer"], e["text"]) for e in entries}


def test_dry_run_writes_nothing(paths, tmp_path):
    before = memory_bytes(paths)
    r = cli(paths, "import", "cline", str(FIXTURES / "cline" / "memory-bank"), "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["dry_run"] and report["added"] > 0 and report["files"]
    assert memory_bytes(paths) == before
    assert "No changes logged" in cli(paths, "undo", "--list").stdout


@pytest.mark.parametrize(("fmt", "source"), [
    ("agents-md", "agents/AGENTS.md"),
    ("agents-md", "agents/CLAUDE.md"),
    ("agents-md", "agents/.github/copilot-instructions.md"),
    ("cursor", "cursor/.cursor/rules"),
    ("cline", "cline/memory-bank"),
])
def test_other_formats_import_realistic_files_once(paths, fmt, source):
    r = cli(paths, "import", fmt, str(FIXTURES / source), "--project", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["added"] > 0 and report["skipped_invalid"] == 0, report
    entries = listed(paths)
    assert len(entries) == report["added"] and {e["layer"] for e in entries} == {"project"}
    again = json.loads(cli(paths, "import", fmt, str(FIXTURES / source), "--project", "--json").stdout)
    assert again["added"] == 0


def test_jsonl_export_then_import_into_an_empty_home_gives_the_same_entries(paths, tmp_path):
    src = FIXTURES / "cline" / "memory-bank"
    assert cli(paths, "import", "cline", str(src)).returncode == 0
    assert cli(paths, "remember", "--project", "ignored while memory is off").returncode == 1
    dump = tmp_path / "all.jsonl"
    assert cli(paths, "export", "jsonl", str(dump)).returncode == 0
    empty = fresh(tmp_path, "empty")
    r = cli(empty, "import", "jsonl", str(dump), "--json")
    assert r.returncode == 0, r.stderr

    def key(e: dict) -> tuple:
        return (e["layer"], e["text"], e["section"], tuple(e["tags"]), e["importance"], e["status"], e.get("name"))

    assert sorted(map(key, listed(empty))) == sorted(map(key, listed(paths)))


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def export_json(paths: Paths, *args: str) -> tuple[int, dict]:
    r = cli(paths, "export", *args, "--json")
    return r.returncode, json.loads(r.stdout)


def test_export_is_a_re_runnable_sync(paths, tmp_path):
    assert cli(paths, "import", "cline", str(FIXTURES / "cline" / "memory-bank"), "--project").returncode == 0
    out = tmp_path / "bank"
    rc, first = export_json(paths, "cline", str(out))
    assert rc == 0 and first["added"] == len(tree(out)) > 0 and first["conflict"] == first["left"] == 0
    before = tree(out)
    # the marks live in the Muse home, not in the exported files nor at the destination
    assert not any(name.startswith(".") for name in before)
    assert list((paths.home / "exports").glob("*.json"))

    rc, again = export_json(paths, "cline", str(out))  # twice: nothing to do, nothing refused
    assert rc == 0 and again["unchanged"] == len(before) and again["added"] == again["replaced"] == 0
    assert tree(out) == before

    # a memory changes in memtui: the file memtui wrote is replaced (a dry run first shows it)
    entry = next(e for e in listed(paths) if e["text"].startswith("Offline queue"))
    assert cli(paths, "edit", entry["id"], "Offline queue for scans, retried with backoff").returncode == 0
    r = cli(paths, "export", "cline", str(out), "--dry-run")
    assert r.returncode == 0 and "1 replaced" in r.stdout and "replaced: " in r.stdout and "activeContext.md" in r.stdout
    assert tree(out) == before
    rc, synced = export_json(paths, "cline", str(out))
    assert rc == 0 and synced["replaced"] == 1
    assert "retried with backoff" in (out / "activeContext.md").read_text()

    # a file changed by hand at the destination is a conflict: reported, left as the person made it
    hand = (out / "progress.md").read_text() + "\n- added by hand in Cline\n"
    (out / "progress.md").write_text(hand)
    entry = next(e for e in listed(paths) if "progress" in e["tags"])
    assert cli(paths, "edit", entry["id"], entry["text"] + " (checked)").returncode == 0
    r = cli(paths, "export", "cline", str(out))
    assert r.returncode == 1 and "conflict: " in r.stdout and "progress.md" in r.stdout and "left alone" in r.stderr
    assert (out / "progress.md").read_text() == hand

    # a memory file deleted in memtui: the file memtui wrote for it (and nobody changed) goes too
    while brief := [e for e in listed(paths) if "projectbrief" in e["tags"]]:
        assert cli(paths, "delete", brief[0]["id"], "--yes").returncode == 0
    rc, pruned = export_json(paths, "cline", str(out))
    assert pruned["removed"] == 1 and not (out / "projectbrief.md").exists()


def test_export_never_touches_files_memtui_did_not_write(paths, tmp_path):
    assert cli(paths, "import", "agents-md", str(FIXTURES / "agents" / "AGENTS.md")).returncode == 0
    out = tmp_path / "repo"
    out.mkdir()
    (out / "AGENTS.md").write_text("# Mine\n\nWritten by a person.\n")
    r = cli(paths, "export", "agents-md", str(out))
    assert r.returncode == 1 and "left: " in r.stdout and "not written by memtui" in r.stdout
    assert (out / "AGENTS.md").read_text() == "# Mine\n\nWritten by a person.\n"
    # a symlink where a file would go is never written through
    link_out = tmp_path / "linked"
    link_out.mkdir()
    victim = tmp_path / "victim.md"
    victim.write_text("precious\n")
    (link_out / "AGENTS.md").symlink_to(victim)
    assert cli(paths, "export", "agents-md", str(link_out)).returncode == 1
    assert victim.read_text() == "precious\n"
    # a repository that ships `.cursor -> elsewhere`: the default destination is not written through
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (paths.workspace / ".cursor").symlink_to(elsewhere, target_is_directory=True)
    r = cli(paths, "export", "cursor")
    assert r.returncode == 1 and "symlink" in r.stderr and list(elsewhere.iterdir()) == []


def test_a_dry_run_exits_as_the_export_would(paths, tmp_path):
    """Issue 40: `export agents-md` exited 1 (a file left alone) where its `--dry-run` exited 0.
    The exit code says whether the destination is (would be) in step: 0 in step, 1 when a
    file is (would be) left alone or conflicts; the same with --dry-run and --json."""
    assert cli(paths, "import", "agents-md", str(FIXTURES / "agents" / "AGENTS.md")).returncode == 0
    out = tmp_path / "repo"
    out.mkdir()

    def codes() -> list[int]:
        return [cli(paths, "export", "agents-md", str(out), *extra).returncode
                for extra in (("--dry-run",), ("--dry-run", "--json"))]

    assert codes() == [0, 0]  # nothing there yet: would be added
    assert cli(paths, "export", "agents-md", str(out)).returncode == 0
    assert codes() == [0, 0]  # in step: unchanged
    (out / "AGENTS.md").write_text("# Mine now\n")  # changed by hand since memtui wrote it
    r = cli(paths, "export", "agents-md", str(out), "--dry-run")
    assert r.returncode == 1 and "conflict: " in r.stdout and "would leave alone 1 file" in r.stderr, r.stderr
    assert codes() == [1, 1]
    r = cli(paths, "export", "agents-md", str(out))
    assert r.returncode == 1 and "left alone 1 file" in r.stderr
    assert (out / "AGENTS.md").read_text() == "# Mine now\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / "AGENTS.md").write_text("# A person's file\n")  # never written by memtui: left
    for extra in (("--dry-run",), ("--dry-run", "--json"), ("--json",), ()):
        r = cli(paths, "export", "agents-md", str(other), *extra)
        assert r.returncode == 1, (extra, r.stdout, r.stderr)
    assert (other / "AGENTS.md").read_text() == "# A person's file\n"


@pytest.mark.parametrize("fmt", ["agents-md", "cline", "cursor"])
def test_user_memories_through_a_format_without_a_user_layer_come_back_as_project_memories(fmt, paths, tmp_path):
    """Issue 40: Claude Code's `feedback` memories (the user layer) exported to agents-md,
    cline or cursor and imported again land in the project layer. Those files live in the repository,
    which may never write into a person's user layer (SPEC §8), so no marker carries the
    layer: the export says so, and `import --user` brings them back to the user layer."""
    assert cli(paths, "import", "claude-code", str(FIXTURES / "claude-code" / "memory")).returncode == 0
    mine = sorted(e["text"] for e in listed(paths) if e["layer"] == "user")
    assert mine
    out = tmp_path / "out" / {"agents-md": "AGENTS.md", "cline": "memory-bank", "cursor": "rules"}[fmt]
    r = cli(paths, "export", fmt, str(out), "--layer", "user", "--layer", "project")
    assert r.returncode == 0, r.stderr
    assert f"note: {fmt} has no user layer: the {len(mine)} user memories" in r.stderr
    assert "--user" in r.stderr
    rc, said = export_json(paths, fmt, str(out), "--layer", "user", "--layer", "project", "--dry-run")
    assert rc == 0 and said["user_memories_as_project"] == len(mine)
    # without --layer user nothing of the user layer leaves, and nothing is said
    plain = cli(paths, "export", fmt, str(tmp_path / "plain" / out.name))
    assert plain.returncode == 0 and "no user layer" not in plain.stderr
    back = fresh(tmp_path, "back")
    assert cli(back, "import", fmt, str(out)).returncode == 0
    came = listed(back)
    assert {e["layer"] for e in came} == {"project"} and set(mine) <= {e["text"] for e in came}
    chosen = fresh(tmp_path, "chosen")
    assert cli(chosen, "import", fmt, str(out), "--user").returncode == 0
    assert {e["layer"] for e in listed(chosen)} == {"user"}


def test_export_records_stay_in_the_muse_home(paths, tmp_path):
    """The write gate: `<home>/exports` that is a link elsewhere refuses the export before any
    file is written (dry run included), and nothing lands where the link points."""
    assert cli(paths, "import", "agents-md", str(FIXTURES / "agents" / "AGENTS.md")).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (paths.home / "exports").symlink_to(elsewhere, target_is_directory=True)
    out = tmp_path / "repo"
    for extra in (("--dry-run",), ()):
        r = cli(paths, "export", "agents-md", str(out), *extra)
        assert r.returncode == 1 and "exports is a symlink" in r.stderr, r.stderr
    assert not out.exists() and list(elsewhere.iterdir()) == []


def test_claude_code_export_to_its_default_place_twice(paths, tmp_path):
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    env = {**os.environ, "HOME": str(user_home)}
    assert cli(paths, "import", "claude-code", str(FIXTURES / "claude-code" / "memory")).returncode == 0

    def run(*args: str) -> subprocess.CompletedProcess:
        from tests.cli.run import memtui

        return memtui(paths, *args, env=env)

    first = run("export", "claude-code")
    assert first.returncode == 0, first.stderr
    [folder] = list((user_home / ".claude" / "projects").glob("*/memory"))
    made = tree(folder)
    second = run("export", "claude-code")
    assert second.returncode == 0, second.stderr
    assert "0 added, 0 replaced" in second.stdout and tree(folder) == made


def test_an_import_is_one_undoable_change(paths):
    before = memory_bytes(paths)
    assert cli(paths, "import", "agents-md", str(FIXTURES / "agents" / "AGENTS.md")).returncode == 0
    assert memory_bytes(paths) != before
    r = cli(paths, "undo")
    assert r.returncode == 0 and "import" in r.stdout, r
    assert memory_bytes(paths) == before


def test_format_fields_survive_import_then_export(paths, tmp_path):
    """Cursor's globs/alwaysApply and Claude Code's type are kept through memtui and back."""
    rules = FIXTURES / "cursor" / ".cursor" / "rules"
    assert cli(paths, "import", "cursor", str(rules)).returncode == 0
    out = tmp_path / "cursor-out"
    assert cli(paths, "export", "cursor", str(out)).returncode == 0
    exported = {p.read_text() for p in out.rglob("*.mdc")}
    assert any("globs: src/**/*.ts, src/**/*.tsx" in t and "alwaysApply: false" in t for t in exported), exported

    source = tmp_path / "claude" / "memory"
    shutil.copytree(FIXTURES / "claude-code" / "memory", source)
    types_in = {m.group(1) for p in source.glob("*.md") for m in re.finditer(r"^\s*type: (\w+)", p.read_text(), re.M)}
    assert cli(paths, "import", "claude-code", str(source)).returncode == 0
    cc_out = tmp_path / "cc-out"
    assert cli(paths, "export", "claude-code", str(cc_out)).returncode == 0
    types_out = {m.group(1) for p in cc_out.glob("*.md") for m in re.finditer(r"^\s*type: (\w+)", p.read_text(), re.M)}
    assert types_in <= types_out


def test_export_redacts_unless_no_redact_is_said_on_stderr(paths, tmp_path):
    secret = "sk_live_" + "51H8aQ2eZvKYlo2C0Yk3tB9mXqW7rPz"
    (paths.project_root / "keys.md").write_text(f"- The Stripe key is {secret}\n")
    r = cli(paths, "export", "jsonl")
    assert r.returncode == 0 and secret not in r.stdout and "[REDACTED]" in r.stdout
    assert "1 secret written as [REDACTED]" in r.stderr
    r = cli(paths, "export", "jsonl", "--no-redact")
    assert r.returncode == 0 and secret in r.stdout and "--no-redact" in r.stderr
    out = tmp_path / "rules"
    r = cli(paths, "export", "cursor", str(out), "--dry-run")
    assert r.returncode == 0 and "added: " in r.stdout and not out.exists()


def test_exports_of_other_formats_into_one_folder_keep_out_of_each_others_way(paths, tmp_path):
    (paths.project_root / "context.md").write_text("- Deploys go out on Tuesdays\n")
    out = tmp_path / "repo"
    assert cli(paths, "export", "jsonl", str(out / "backup.jsonl")).returncode == 0
    assert cli(paths, "export", "agents-md", str(out / "AGENTS.md")).returncode == 0
    assert cli(paths, "export", "agents-md", str(out / "CLAUDE.md")).returncode == 0
    assert cli(paths, "export", "cline", str(out)).returncode == 0
    # none of them took the others' files for its own stale ones
    assert sorted(p.name for p in out.iterdir()) == ["AGENTS.md", "CLAUDE.md", "activeContext.md", "backup.jsonl"]
    rc, again = export_json(paths, "agents-md", str(out / "AGENTS.md"))
    assert rc == 0 and again["unchanged"] == 1 and again["removed"] == 0


def test_imported_files_write_updated_at_as_a_plain_date(tmp_path):
    """Every writer of memtui writes `updatedAt: 2026-11-24` (a YAML date), never a quoted string."""
    paths = fresh(tmp_path, "dates")
    (paths.workspace / "AGENTS.md").write_text("# Rules\n\n- run the linter before committing\n", encoding="utf-8")
    r = cli(paths, "import", "agents-md", str(paths.workspace / "AGENTS.md"))
    assert r.returncode == 0, r
    written = [p.read_text(encoding="utf-8") for p in paths.project_root.rglob("*.md")]
    assert written and all(re.search(r"^updatedAt: \d{4}-\d{2}-\d{2}$", t, re.M) for t in written), written


def test_a_dry_run_of_the_jsonl_backup_to_stdout_prints_what_it_would_hold_not_the_backup(paths):
    (paths.project_root / "context.md").write_text("- Deploys go out on Tuesdays\n- The pool timeout is 30 s\n")
    full = cli(paths, "export", "jsonl")
    assert full.returncode == 0 and "Tuesdays" in full.stdout
    r = cli(paths, "export", "jsonl", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "Tuesdays" not in r.stdout
    assert r.stdout.startswith("Would export 2 memories to standard output")
    assert f"({len(full.stdout.encode()):,} bytes" in r.stdout
    report = json.loads(cli(paths, "export", "jsonl", "--dry-run", "--json").stdout)
    assert report["dry_run"] is True and report["memories"] == 2 and report["bytes"] == len(full.stdout.encode())


# ---------------------------------------------------------------- Claude Code's own folder, synced both ways

def _claude_folder(paths: Paths, user_home: Path) -> Path:
    """The folder Claude Code keeps this workspace's memories in, made the way Claude Code
    makes it: two topic files from the fixtures and a MEMORY.md linking them."""
    from memtui.core.interop.claude_code import default_source

    folder = default_source(paths.workspace, user_home)
    folder.mkdir(parents=True)
    for name in ("feedback_real_db.md", "user_role.md"):
        shutil.copy(FIXTURES / "claude-code" / "memory" / name, folder / name)
    (folder / "MEMORY.md").write_text(
        "- [Prefers real databases in tests](feedback_real_db.md) — integration tests hit Postgres, never mocks\n"
        "- [User role](user_role.md) — senior backend engineer, new to React\n", encoding="utf-8")
    return folder


def _with_home(paths: Paths, user_home: Path):
    from tests.cli.run import memtui

    env = {**os.environ, "HOME": str(user_home)}
    assert memtui(paths, "enable", env=env).returncode == 0  # memory on for the workspace, so `remember` works
    return lambda *args: memtui(paths, *args, env=env)


def _index_links(text: str) -> list[str]:
    return re.findall(r"^- \[[^\]]*\]\(([^)]+)\)", text, re.MULTILINE)


def test_export_after_an_import_from_claude_code_adds_the_new_topics_to_its_memory_md(paths, tmp_path):
    user_home = tmp_path / "user-home"
    run = _with_home(paths, user_home)
    assert run("remember", "Answer in British English").returncode == 0  # notes.md: a memtui memory of its own
    folder = _claude_folder(paths, user_home)
    original = tree(folder)
    r = run("import", "claude-code")
    assert r.returncode == 0, r.stderr

    first = run("export", "claude-code")
    assert first.returncode == 0, first.stdout + first.stderr
    after = tree(folder)
    for name in ("feedback_real_db.md", "user_role.md"):
        assert after[name] == original[name]
    index = after["MEMORY.md"].decode("utf-8")
    assert index.startswith(original["MEMORY.md"].decode("utf-8"))  # as it was, new lines at its end
    new = _index_links(index)[2:]
    assert new == ["notes.md"] and "notes.md" in after and "British English" in after["notes.md"].decode()
    assert "left" not in first.stdout + first.stderr
    assert "MEMORY.md (not written by memtui; only the line of 1 new topic added at its end)" in first.stdout

    second = run("export", "claude-code")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "0 added, 0 replaced" in second.stdout and tree(folder) == after

    # a memory memtui gains later: its topic file added, its line appended, then in step again
    assert run("remember", "--project", "Deploys go through the staging cluster first").returncode == 0
    third = run("export", "claude-code")
    assert third.returncode == 0, third.stdout + third.stderr
    grown = tree(folder)
    assert grown["MEMORY.md"].decode().startswith(index)
    assert _index_links(grown["MEMORY.md"].decode())[3:] == ["context.md"] and "context.md" in grown
    fourth = run("export", "claude-code")
    assert fourth.returncode == 0 and "0 added, 0 replaced" in fourth.stdout and tree(folder) == grown


@pytest.mark.parametrize("change", ["edited", "appended", "reordered"])
def test_a_memory_md_changed_after_the_import_is_still_left_alone(paths, tmp_path, change):
    user_home = tmp_path / "user-home"
    run = _with_home(paths, user_home)
    assert run("remember", "Answer in British English").returncode == 0
    folder = _claude_folder(paths, user_home)
    assert run("import", "claude-code").returncode == 0
    index = folder / "MEMORY.md"
    lines = index.read_text(encoding="utf-8").splitlines(keepends=True)
    if change == "edited":  # the person reworded a hook
        lines[1] = lines[1].replace("new to React", "learning React")
    elif change == "appended":  # Claude Code saved a memory of its own since
        (folder / "ci.md").write_text("---\nname: CI\ndescription: CI runs on push\ntype: project\n---\n\nCI runs.\n")
        lines.append("- [CI](ci.md) — CI runs on push\n")
    else:
        lines.reverse()
    index.write_text("".join(lines), encoding="utf-8")
    before = index.read_bytes()

    for extra in (("--dry-run",), ()):  # a dry run exits as the export does: 1, a file is left alone
        r = run("export", "claude-code", *extra)
        assert r.returncode == 1, r.stdout + r.stderr
        assert "MEMORY.md (not written by memtui; never touched)" in r.stdout
    assert index.read_bytes() == before
    again = run("export", "claude-code")  # not adopted by the refused run either
    assert again.returncode == 1 and index.read_bytes() == before


def test_export_to_a_fresh_claude_code_folder_then_a_new_memory(paths, tmp_path):
    assert cli(paths, "enable").returncode == 0
    assert cli(paths, "import", "claude-code", str(FIXTURES / "claude-code" / "memory")).returncode == 0
    out = tmp_path / "fresh" / "memory"
    first = cli(paths, "export", "claude-code", str(out))
    assert first.returncode == 0, first.stdout + first.stderr
    made = tree(out)
    assert "MEMORY.md" in made
    assert cli(paths, "remember", "--project", "Deploys go through the staging cluster first").returncode == 0
    second = cli(paths, "export", "claude-code", str(out))
    assert second.returncode == 0, second.stdout + second.stderr
    grown = tree(out)
    assert "context.md" in grown and "context.md" in _index_links(grown["MEMORY.md"].decode())
    assert set(_index_links(made["MEMORY.md"].decode())) < set(_index_links(grown["MEMORY.md"].decode()))
    third = cli(paths, "export", "claude-code", str(out))
    assert third.returncode == 0 and "0 added, 0 replaced" in third.stdout and tree(out) == grown


def test_a_tampered_export_record_never_names_files_outside_the_destination(paths, tmp_path):
    """Issue 32: a manifest in `<home>/exports` edited to name `../outside.md` made `--dry-run`
    list (and plan to remove) a file outside the destination. Such a record is not memtui's."""
    assert cli(paths, "import", "agents-md", str(FIXTURES / "agents" / "AGENTS.md")).returncode == 0
    out = tmp_path / "repo"
    out.mkdir()
    assert cli(paths, "export", "agents-md", str(out)).returncode == 0
    outside = tmp_path / "outside.md"
    outside.write_text("a person's file beside the destination\n")
    [record] = list((paths.home / "exports").glob("*.json"))
    data = json.loads(record.read_text())
    import hashlib

    digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    data["files"].update({"../outside.md": digest, "/etc/hostname": digest, "a/./b.md": digest})
    record.write_text(json.dumps(data))
    for args in (("--dry-run",), ("--dry-run", "--json"), ()):
        r = cli(paths, "export", "agents-md", str(out), *args)
        assert "outside.md" not in r.stdout and "/etc/hostname" not in r.stdout, r.stdout
        assert "outside the destination" in r.stdout + r.stderr, (r.stdout, r.stderr)
    assert outside.read_text() == "a person's file beside the destination\n"


def test_export_to_a_file_that_is_no_folder_says_so(paths):
    assert cli(paths, "import", "agents-md", str(FIXTURES / "agents" / "AGENTS.md")).returncode == 0
    r = cli(paths, "export", "cursor", "/etc/passwd")
    assert r.returncode == 1 and "/etc/passwd: not a directory" in r.stderr and "left" not in r.stdout



def test_importing_from_where_a_tool_keeps_nothing_says_so_plainly(paths):
    """No Claude Code memory folder for this workspace: one error naming the folder, not a
    count of nothing and an 'invalid' record."""
    r = cli(paths, "import", "claude-code", "--dry-run")
    assert r.returncode == 1 and r.stdout == ""
    assert "does not exist (where claude-code keeps this workspace's memories" in r.stderr
    assert "invalid" not in r.stderr
