"""What a newcomer met on a first run (issue 39): each friction, as the person meets it, through
the real `memtui` process."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.run import entries, memtui, ok, run_cli
from tests.helpers import enable, write

RULES = "# Rules\n\n- Use PostgreSQL 16 with pgbouncer everywhere.\n- Run `make test` before pushing a branch.\n"


# ---------------------------------------------------------------------- import agents-md: said before, in a dry run too
@pytest.mark.parametrize("dry_run", [True, False])
def test_importing_the_instructions_files_says_the_doctor_will_call_them_already_loaded(paths, dry_run):
    enable(paths)
    write(paths.workspace / "CLAUDE.md", RULES)
    r = ok(memtui(paths, "import", "agents-md", *(["--dry-run"] if dry_run else [])))
    assert "2 of these memories" in r.stderr and "CLAUDE.md" in r.stderr and "already_loaded" in r.stderr
    assert ("would come" in r.stderr) == dry_run
    written = paths.project_root / "imported" / "agents-md" / "CLAUDE.md"
    assert written.exists() != dry_run
    if not dry_run:  # and the doctor does flag them, as said
        found = json.loads(memtui(paths, "doctor", "--json").stdout)["counts"]
        assert found["already_loaded"] == 2


def test_importing_other_files_says_nothing_of_already_loaded(paths, tmp_path):
    enable(paths)
    source = tmp_path / "elsewhere" / "AGENTS.md"
    write(source, RULES)
    r = ok(memtui(paths, "import", "agents-md", str(source)))
    assert "already_loaded" not in r.stderr


def test_undoing_an_import_leaves_no_empty_folder_it_made(paths):
    enable(paths)
    write(paths.workspace / "CLAUDE.md", RULES)
    (paths.project_root / "kept-empty").mkdir()  # the person's own empty folder stays
    ok(memtui(paths, "import", "agents-md"))
    assert (paths.project_root / "imported" / "agents-md").is_dir()
    ok(memtui(paths, "undo"))
    assert not (paths.project_root / "imported").exists()
    assert paths.project_root.is_dir() and (paths.project_root / "kept-empty").is_dir()


# ---------------------------------------------------------------------- global options after the command
def test_global_options_are_taken_after_the_command_too(paths):
    enable(paths)
    write(paths.project_root / "context.md", "- The zebracorn service deploys on Fridays\n")
    before = ok(run_cli(["--home", str(paths.home), "-w", str(paths.workspace), "preview", "zebracorn"]))
    after = ok(run_cli(["preview", "-w", str(paths.workspace), "--home", str(paths.home), "zebracorn"]))
    assert "zebracorn service" in after.stdout and after.stdout == before.stdout
    joined = ok(run_cli(["list", f"--home={paths.home}", f"-w{paths.workspace}", "--layer", "project"]))
    assert "zebracorn service" in joined.stdout
    nested = ok(run_cli(["hook", "install", "codex", "--project", "-w", str(paths.workspace), "--home", str(paths.home)]))
    assert (paths.workspace / ".codex" / "hooks.json").exists(), nested


def test_text_after_double_dash_is_never_taken_for_an_option(paths):
    enable(paths)
    r = ok(run_cli(["remember", "--home", str(paths.home), "-w", str(paths.workspace), "--", "-w is the workspace flag"]))
    assert "Remembered" in r.stdout
    assert [e["text"] for e in entries(paths)] == ["-w is the workspace flag"]


# ---------------------------------------------------------------------- hook install where memory is off
def test_hook_install_says_memory_is_off_here_and_how_to_turn_it_on(paths):
    r = ok(memtui(paths, "hook", "install", "claude-code", "--project"))
    assert "memory is off" in r.stdout and "memtui enable" in r.stdout
    enable(paths)
    ok(memtui(paths, "hook", "uninstall", "claude-code", "--project"))
    r = ok(memtui(paths, "hook", "install", "claude-code", "--project"))
    assert "memory is off" not in r.stdout


# ---------------------------------------------------------------------- status in the home folder
def test_status_in_the_home_folder_reports_the_user_layer(tmp_path):
    user_home = tmp_path / "me"
    write(user_home / ".muse" / "memory" / "notes.md", "- I prefer tabs\n- Answer in British English\n")
    env = {"HOME": str(user_home), "MUSE_HOME": str(user_home / ".muse")}
    cwd = os.getcwd()
    os.chdir(user_home)
    try:
        r = run_cli(["status"], env=env)
        data = json.loads(run_cli(["status", "--json"], env=env).stdout)
        other = run_cli(["list"], env=env)
    finally:
        os.chdir(cwd)
    assert r.returncode == 0 and "Usage" not in r.stderr, r
    assert "none here" in r.stdout and "user: 2" in r.stdout and "project:" not in r.stdout
    assert data["workspace"] is None and "cannot be a workspace" in data["no_workspace"]
    assert data["counts"]["user"]["active"] == 2
    assert other.returncode == 2  # a command that needs a workspace still says why


def test_your_own_installers_work_in_the_home_folder_and_project_ones_say_why_not(tmp_path):
    user_home = tmp_path / "me"
    (user_home / ".muse" / "memory").mkdir(parents=True)
    env = {"HOME": str(user_home), "MUSE_HOME": str(user_home / ".muse"), "XDG_CONFIG_HOME": str(user_home / ".config")}
    cwd = os.getcwd()
    os.chdir(user_home)
    try:
        mine = run_cli(["hook", "install", "claude-code"], env=env)
        project = run_cli(["hook", "install", "claude-code", "--project"], env=env)
        mcp = run_cli(["mcp", "install", "cursor"], env=env)
        desktop = run_cli(["mcp", "install", "claude-desktop"], env=env)
    finally:
        os.chdir(cwd)
    assert mine.returncode == 0 and "memtui enable" in mine.stdout, mine
    assert "hook claude-code" in (user_home / ".claude" / "settings.json").read_text()
    assert mcp.returncode == 0 and (user_home / ".cursor" / "mcp.json").exists(), mcp
    for refused in (project, desktop):  # a project's file, or the workspace Claude Desktop is to serve
        assert refused.returncode == 2 and "cannot be a workspace" in refused.stderr, refused
    assert not (user_home / ".claude" / "settings.local.json").exists()


# ---------------------------------------------------------------------- long memories
def test_remember_says_the_injection_clips_a_long_memory(paths):
    enable(paths)
    r = ok(memtui(paths, "remember", "word " * 100))
    assert "499 characters" in r.stderr and "clips each memory to 200" in r.stderr
    r = ok(memtui(paths, "remember", "short and sweet"))
    assert "clips" not in r.stderr


def test_delete_echoes_a_long_memory_shortened(paths):
    enable(paths)
    text = "x" * 25_000
    write(paths.user_root / "notes.md", f"- {text}\n")
    r = ok(memtui(paths, "delete", "notes.md:1", "--yes"))
    assert text not in r.stdout and "(25,000 characters)" in r.stdout and len(r.stdout) < 400
    assert "Deleted" in r.stdout


# ---------------------------------------------------------------------- remember --project and its place
CONTEXT = "---\ntype: knowledge\n---\n\n## Build\n\n- make build\n\n## Testing\n\n- run pytest -n 2\n"


def test_remember_says_when_the_file_ends_under_a_heading(paths):
    enable(paths)
    write(paths.project_root / "context.md", CONTEXT)
    r = ok(memtui(paths, "remember", "--project", "deploys go through CI"))
    assert "ends under the heading 'Testing'" in r.stderr and "--section" in r.stderr


def test_remember_section_puts_the_memory_under_that_heading(paths):
    enable(paths)
    path = write(paths.project_root / "context.md", CONTEXT)
    ok(memtui(paths, "remember", "--project", "--section", "Build", "cache the wheels"))
    r = ok(memtui(paths, "remember", "--project", "--section", "Style", "ruff, not black"))
    assert "ends under" not in r.stderr
    assert path.read_text() == ("---\ntype: knowledge\n---\n\n## Build\n\n- make build\n- cache the wheels\n\n"
                                "## Testing\n\n- run pytest -n 2\n\n## Style\n\n- ruff, not black\n")
    got = {e["text"]: e["section"] for e in entries(paths, "--layer", "project")}
    assert got == {"make build": "Build", "cache the wheels": "Build", "run pytest -n 2": "Testing",
                   "ruff, not black": "Style"}
    ok(memtui(paths, "undo"))
    ok(memtui(paths, "undo"))
    assert path.read_text() == CONTEXT


def test_remember_section_in_a_new_file(paths):
    enable(paths)
    ok(memtui(paths, "remember", "--project", "--section", "Deploys", "Fridays are frozen"))
    got = [(e["text"], e["section"]) for e in entries(paths, "--layer", "project")]
    assert got == [("Fridays are frozen", "Deploys")]


def test_remember_section_must_be_one_line(paths):
    enable(paths)
    r = memtui(paths, "remember", "--section", "a\nb", "text")
    assert r.returncode == 2 and "one line" in r.stderr


# ---------------------------------------------------------------------- forget and delete while memory is off
def test_forget_while_off_says_delete_works(paths):
    write(paths.user_root / "notes.md", "- Use vitest\n")
    r = memtui(paths, "forget", "vitest", "--yes")
    assert r.returncode == 1 and "memtui enable" in r.stderr and "memtui delete REF" in r.stderr
    assert ok(memtui(paths, "delete", "notes.md:1", "--yes"))
    assert entries(paths) == []


# ---------------------------------------------------------------------- help and installers
def test_mcp_install_help_names_the_clients_without_breaking_a_word(paths):
    r = ok(memtui(paths, "mcp", "install", "--help", env={"COLUMNS": "80"}))
    assert "claude-\n" not in r.stdout and "CLIENT is one of: claude-desktop, claude-code" in " ".join(r.stdout.split())


def test_mcp_install_project_writes_plain_memtui_and_desktop_names_the_workspace(paths, monkeypatch):
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    ok(memtui(paths, "mcp", "install", "claude-code", "--project"))
    entry = json.loads((paths.workspace / ".mcp.json").read_text())["mcpServers"]["memtui"]
    assert entry == {"type": "stdio", "command": "memtui", "args": ["mcp"]}
    r = ok(memtui(paths, "mcp", "install", "claude-desktop"))
    config = Path(os.environ["HOME"]) / ".config" / "Claude" / "claude_desktop_config.json"
    desktop = json.loads(config.read_text())["mcpServers"]["memtui"]
    assert desktop["args"] == ["--home", str(paths.home), "-w", str(paths.workspace), "mcp"]
    assert os.path.isabs(desktop["command"]) and f"-w {paths.workspace} mcp" in r.stdout
    ok(memtui(paths, "mcp", "uninstall", "claude-desktop"))  # found again as memtui's, with its -w
    assert not config.exists()  # install made the file: uninstall takes it away
