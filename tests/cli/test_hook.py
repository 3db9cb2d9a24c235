"""The Claude Code hook (SPEC §11) as Claude Code runs it: a real process, real-shaped JSON on
stdin, a workspace and a Muse home in tmp_path. And installing it into settings.json."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core import history
from memtui.core.assistants import claude_code, hook_files
from memtui.core.assistants.files import ConfigError as HookSettingsError
from memtui.core.assistants.files import Receipts, receipts_path
from tests.helpers import enable, write

PREFS = "---\ntype: preference\nimportance: high\n---\n\n## Testing\n\n- Use vitest, not jest\n- Prefer describe/it style\n"
CONTEXT = "- 数据库连接池 zebracorn 配置过小\n- Use PostgreSQL + pgbouncer\n"
PROMPT = "帮我优化数据库查询 vitest quokkaprompt"
MEMTUI = str(Path(sys.executable).parent / "memtui")  # this installation's console script
HOOK = [sys.executable, "-m", "memtui.cli.hook"]


def hook_command(program: str) -> str:
    return hook_files.hook_command("claude-code", program)


def install(path, command: str, receipts=None):
    return hook_files.install(claude_code.FILES, "claude-code", path, command, Receipts(receipts))


def uninstall(path, receipts=None):
    return hook_files.uninstall(claude_code.FILES, "claude-code", path, Receipts(receipts))


def is_memtui_hook(command) -> bool:
    return hook_files.is_memtui_hook(command, "claude-code")


@pytest.fixture
def ws(paths):
    write(paths.user_root / "preferences.md", PREFS)
    write(paths.project_root / "context.md", CONTEXT)
    (paths.workspace / "src" / "db").mkdir(parents=True)
    enable(paths)
    return paths


def hook_input(cwd, prompt=PROMPT, **extra) -> bytes:
    data = {"session_id": "8c35adc1-0b9e-4c43-9a57-1f0d3b6e2a11",
            "transcript_path": str(Path(cwd) / "transcript.jsonl"), "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    data.update(extra)
    return json.dumps(data, ensure_ascii=False).encode()


def run_hook(home, stdin: bytes, cmd=HOOK, shell=False) -> subprocess.CompletedProcess:
    env = {**os.environ, "MUSE_HOME": str(home)}
    return subprocess.run(cmd, input=stdin, capture_output=True, env=env, timeout=60, shell=shell)


def preview(paths, prompt=PROMPT, *args) -> subprocess.CompletedProcess:
    return subprocess.run([MEMTUI, "--home", str(paths.home), "-w", str(paths.workspace), "preview", prompt, *args],
                          capture_output=True, timeout=60, stdin=subprocess.DEVNULL)


def memtui(*args, input=None) -> subprocess.CompletedProcess:
    return subprocess.run([MEMTUI, *args], capture_output=True, text=True, timeout=60, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL)


# ---------------------------------------------------------------------- the hook
def test_hook_prints_exactly_what_preview_prints(ws):
    r = run_hook(ws.home, hook_input(ws.workspace / "src" / "db"))
    assert (r.returncode, r.stderr) == (0, b"")
    expected = preview(ws)
    assert expected.returncode == 0 and expected.stdout.startswith(b"## Memory\n")
    assert r.stdout == expected.stdout


def test_three_hook_runs_make_three_records_with_ids_and_no_text(ws):
    included = [c for c in json.loads(preview(ws, PROMPT, "--json").stdout)["candidates"] if c["status"] == "included"]
    assert len(included) == 4
    for _ in range(3):
        assert run_hook(ws.home, hook_input(ws.workspace)).returncode == 0
    recs = history.records(ws.db_path)
    assert len(recs) == 3
    for rec in recs:
        assert rec.workspace == str(ws.workspace) and rec.count == 4
        assert list(rec.entries) == [(c["id"], c["source"]) for c in included]
    raw = b"".join(p.read_bytes() for p in ws.home.glob("muse.db*"))
    for text in ("quokkaprompt", PROMPT, "zebracorn", "vitest, not jest", "pgbouncer", "describe/it"):
        assert text.encode() not in raw


def test_memory_off_prints_nothing_and_records_nothing(ws):
    ws.global_settings.write_text('{"memoryEnabled": false}', encoding="utf-8")
    r = run_hook(ws.home, hook_input(ws.workspace))
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert preview(ws).stdout == b""
    assert not ws.db_path.exists()


def test_nothing_passing_prints_nothing(ws):
    enable(ws, {"memory": {"gate": {"user": 0.5, "project": 0.5}}})
    r = run_hook(ws.home, hook_input(ws.workspace, prompt="something unrelated entirely"))
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")
    assert [rec.disabled_reason for rec in history.records(ws.db_path)] == ["low_relevance"]


@pytest.mark.parametrize("case, reason", [
    ("bad-json", "not valid JSON"),
    ("not-object", "not a JSON object"),
    ("not-utf8", "not UTF-8"),
    ("no-prompt", "\"prompt\""),
    ("no-cwd", "\"cwd\""),
    ("relative-cwd", "not an absolute path"),
    ("unknown-cwd", "not a directory"),
    ("other-event", "PreToolUse"),
    ("deep", "nested more than 256 levels deep"),
    ("deep-member", "nested more than 256 levels deep"),
    ("deep-cut", "nested more than 256 levels deep"),
])
def test_any_error_prints_nothing_and_exits_0(ws, case, reason):
    stdin = {
        "bad-json": b'{"prompt": "x", "cwd": ',
        "not-object": b'["UserPromptSubmit"]',
        "not-utf8": b'{"prompt": "caf\xe9", "cwd": "/"}',
        "no-prompt": json.dumps({"cwd": str(ws.workspace), "hook_event_name": "UserPromptSubmit"}).encode(),
        "no-cwd": json.dumps({"prompt": PROMPT}).encode(),
        "relative-cwd": hook_input("some/where"),
        "unknown-cwd": hook_input(ws.workspace / "gone" / "away"),
        "other-event": hook_input(ws.workspace, hook_event_name="PreToolUse"),
        # a 100,000-deep nest: whole, as a member beside a good prompt, and in an input over 1 MiB (cut)
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "deep-member": hook_input(ws.workspace)[:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "deep-cut": hook_input(ws.workspace)[:-1] + b', "x": ' + b"[" * 600_000 + b"]" * 600_000 + b"}",
    }[case]
    r = run_hook(ws.home, stdin)
    assert (r.returncode, r.stdout) == (0, b"")
    err = r.stderr.decode()
    assert err.startswith("memtui hook: ") and err.count("\n") == (2 if case == "deep-cut" else 1) and reason in err, err
    assert "Traceback" not in err


def test_a_damaged_database_costs_only_the_conversation_layer_and_the_record(ws):
    """SPEC §5: a layer that fails to load is skipped, the others inject; §8: only the history
    record is dropped, said on stderr in one line."""
    ws.db_path.write_bytes(b"definitely not an SQLite database " * 200)
    r = run_hook(ws.home, hook_input(ws.workspace))
    assert r.returncode == 0 and r.stdout.startswith(b"## Memory") and b"- Use vitest, not jest" in r.stdout
    err = r.stderr.decode()
    assert err.startswith("memtui hook: ") and err.count("\n") == 1 and "muse.db" in err and "not recorded" in err, err
    assert "Traceback" not in err


def test_hook_does_not_import_textual(ws, tmp_path):
    r = subprocess.run([sys.executable, "-X", "importtime", *HOOK[1:]], input=hook_input(ws.workspace),
                       capture_output=True, env={**os.environ, "MUSE_HOME": str(ws.home)}, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith(b"## Memory")
    modules = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.decode().splitlines() if "|" in line}
    assert "memtui.core.injection" in modules  # the measurement is real
    assert not {m for m in modules if m.split(".")[0] in ("textual", "rich")}


# ---------------------------------------------------------------------- settings.json
FOREIGN = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git diff:*)"], "deny": []},
    "env": {"FOO": "1"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre", "timeout": 30}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}],
    },
    "number": 1.5, "unicode": "数据 ✓", "nested": {"empty": {}, "list": [1, None, True]},
}


def write_settings(path: Path, data) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, indent=4).encode()
    path.write_bytes(raw)
    return raw


def our_handlers(data) -> list[dict]:
    return [h for g in data.get("hooks", {}).get("UserPromptSubmit", []) for h in g.get("hooks", [])
            if is_memtui_hook(h.get("command"))]


def test_install_keeps_every_other_key_is_idempotent_and_uninstall_restores(tmp_path):
    path = tmp_path / "proj" / ".claude" / "settings.json"
    write_settings(path, FOREIGN)
    (tmp_path / "original.json").write_bytes(path.read_bytes())
    receipts = tmp_path / "muse" / "receipts.json"
    cmd = hook_command("/opt/my tools/bin/memtui")
    assert cmd == "'/opt/my tools/bin/memtui' hook claude-code"
    change = install(path, cmd, receipts)
    assert change.changed and str(path) in change.message
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["hooks"]["UserPromptSubmit"][-1] == {"hooks": [{"type": "command", "command": cmd, "timeout": 10}]}
    expected = json.loads(json.dumps(FOREIGN))
    expected["hooks"]["UserPromptSubmit"].append(data["hooks"]["UserPromptSubmit"][-1])
    assert data == expected
    text = path.read_text(encoding="utf-8")
    original = (tmp_path / "original.json")
    # the file's own layout kept: its indent, its `\uXXXX` escapes
    assert text.startswith('{\n    "model": "opus",\n') and '"\\u6570\\u636e \\u2713"' in text
    once = path.read_bytes()
    assert not install(path, cmd, receipts).changed
    assert path.read_bytes() == once
    assert uninstall(path, receipts).changed
    assert json.loads(path.read_text(encoding="utf-8")) == FOREIGN
    assert path.read_bytes() == original.read_bytes()  # byte for byte (SPEC §8)
    assert not uninstall(path, receipts).changed


def test_install_into_nothing_then_uninstall_leaves_nothing(tmp_path):
    path = tmp_path / "ws" / ".claude" / "settings.json"
    (tmp_path / "ws").mkdir()
    receipts = tmp_path / "muse" / "receipts.json"
    install(path, hook_command("/usr/bin/memtui"), receipts)
    assert json.loads(path.read_text()) == {"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "/usr/bin/memtui hook claude-code", "timeout": 10}]}]}}
    uninstall(path, receipts)
    assert not path.exists() and not path.parent.exists()
    assert (tmp_path / "ws").is_dir()


@pytest.mark.parametrize("before", [{}, {"hooks": {}}, {"hooks": {"UserPromptSubmit": []}}, {"a": 1}])
def test_uninstall_removes_only_the_containers_install_made(tmp_path, before):
    path = tmp_path / ".claude" / "settings.json"
    write_settings(path, before)
    receipts = tmp_path / "receipts.json"
    install(path, hook_command("/x/memtui"), receipts)
    uninstall(path, receipts)
    assert json.loads(path.read_text()) == before


def test_a_stale_memtui_hook_is_updated_not_duplicated(tmp_path):
    path = tmp_path / "settings.json"
    receipts = tmp_path / "receipts.json"
    install(path, hook_command("/old/venv/bin/memtui"), receipts)
    assert install(path, hook_command("/new/venv/bin/memtui"), receipts).changed
    data = json.loads(path.read_text())
    assert [h["command"] for h in our_handlers(data)] == ["/new/venv/bin/memtui hook claude-code"]
    uninstall(path, receipts)
    assert not path.exists()


@pytest.mark.parametrize("content, reason", [
    (b'{"model": "opus",', "invalid JSON"),
    (b'["a"]', "must be a JSON object"),
    (b'{"hooks": []}', '"hooks" is not a JSON object'),
    (b'{"hooks": {"UserPromptSubmit": {}}}', '"hooks.UserPromptSubmit" is not a JSON array'),
    (b'\xff\xfe{}', "not UTF-8"),
])
def test_invalid_settings_are_reported_and_never_overwritten(tmp_path, content, reason):
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    for action in (lambda: install(path, "/x/memtui hook claude-code"), lambda: uninstall(path)):
        with pytest.raises(HookSettingsError) as info:
            action()
        assert str(path) in str(info.value) and reason in str(info.value)
        assert path.read_bytes() == content
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no temp file left


def test_a_symlinked_settings_file_is_written_through(tmp_path):
    real = tmp_path / "dotfiles" / "claude-settings.json"
    write_settings(real, {"model": "opus"})
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    install(link, hook_command("/x/memtui"), tmp_path / "r.json")
    assert link.is_symlink() and our_handlers(json.loads(real.read_text()))
    uninstall(link, tmp_path / "r.json")
    assert link.is_symlink() and json.loads(real.read_text()) == {"model": "opus"}


def test_settings_paths(tmp_path):
    files = claude_code.FILES
    assert files.user(tmp_path) == tmp_path / ".claude" / "settings.json"
    assert files.shared_project(tmp_path / "ws") == tmp_path / "ws" / ".claude" / "settings.json"
    assert files.personal_project and files.personal_project(tmp_path / "ws") == tmp_path / "ws" / ".claude" / "settings.local.json"
    assert receipts_path(tmp_path).parent == tmp_path
    assert is_memtui_hook(f"{shlex.quote(sys.executable)} -m memtui.cli.hook")
    assert not is_memtui_hook("memtui-other hook claude-code") and not is_memtui_hook("echo 'unclosed")


# ---------------------------------------------------------------------- the commands
def test_install_command_writes_a_hook_claude_code_can_run(ws):
    claude_home = Path(os.environ["HOME"])  # tests run with HOME in tmp_path
    settings = claude_home / ".claude" / "settings.json"
    write_settings(settings, FOREIGN)
    r = memtui("--home", str(ws.home), "hook", "install", "claude-code")
    assert r.returncode == 0, r.stderr
    assert str(settings) in r.stdout
    [handler] = our_handlers(json.loads(settings.read_text()))
    assert shlex.split(handler["command"])[0] == MEMTUI
    # Claude Code runs the command through a shell, in the project, with the input on stdin
    ran = run_hook(ws.home, hook_input(ws.workspace / "src"), cmd=handler["command"], shell=True)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, preview(ws).stdout, b"")
    assert memtui("--home", str(ws.home), "hook", "uninstall", "claude-code").returncode == 0
    assert json.loads(settings.read_text()) == FOREIGN


def test_install_command_project_and_invalid_file(ws):
    settings = ws.workspace / ".claude" / "settings.local.json"  # --project: the personal, uncommitted file
    r = memtui("--home", str(ws.home), "-w", str(ws.workspace), "hook", "install", "claude-code", "--project")
    assert r.returncode == 0 and our_handlers(json.loads(settings.read_text()))
    r = memtui("--home", str(ws.home), "-w", str(ws.workspace), "hook", "uninstall", "claude-code", "--project")
    assert r.returncode == 0 and not settings.exists()
    settings.parent.mkdir(exist_ok=True)
    settings.write_text("{oops", encoding="utf-8")
    r = memtui("--home", str(ws.home), "-w", str(ws.workspace), "hook", "install", "claude-code", "--project")
    assert r.returncode == 1 and str(settings) in r.stderr and "invalid JSON" in r.stderr
    assert "Traceback" not in r.stderr and settings.read_text() == "{oops"


def test_history_command(ws):
    here = ("--home", str(ws.home), "-w", str(ws.workspace))
    r = memtui(*here, "history")
    assert r.returncode == 0 and "No injections recorded" in r.stdout
    for _ in range(2):
        run_hook(ws.home, hook_input(ws.workspace))
    data = json.loads(memtui(*here, "history", "--json").stdout)
    assert [rec["count"] for rec in data["records"]] == [4, 4]
    assert data["records"][0]["entries"][0]["source"] == "preferences.md:8"
    elsewhere = ws.workspace.parent / "elsewhere"
    elsewhere.mkdir()
    assert json.loads(memtui("--home", str(ws.home), "-w", str(elsewhere), "history", "--json").stdout)["records"] == []
    assert len(json.loads(memtui("--home", str(ws.home), "-w", str(elsewhere), "history", "--all", "--json").stdout)["records"]) == 2
    text = memtui(*here, "history").stdout
    assert "4 memories" in text and str(ws.workspace) in text and "quokka" not in text
    ws.db_path.write_bytes(b"not a database " * 100)
    r = memtui(*here, "history")
    assert r.returncode == 1 and str(ws.db_path) in r.stderr and "Traceback" not in r.stderr


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)
HOOKS = st.dictionaries(
    st.sampled_from(["UserPromptSubmit", "PreToolUse", "Stop"]),
    st.lists(st.fixed_dictionaries({"hooks": st.lists(st.fixed_dictionaries(
        {"type": st.just("command"), "command": st.sampled_from(["date", "echo hi", "./x.sh"])}), max_size=2)},
        optional={"matcher": st.sampled_from(["", "Bash", "*"])}), max_size=3),
    max_size=3)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(other=st.dictionaries(st.text(max_size=10).filter(lambda k: k != "hooks"), JSON, max_size=5),
       hooks=st.none() | HOOKS)
def test_install_then_uninstall_gives_back_any_settings_object(tmp_path, other, hooks):
    original = dict(other)
    if hooks is not None:
        original["hooks"] = hooks
    path = tmp_path / "settings.json"
    receipts = tmp_path / "receipts.json"
    write_settings(path, original)
    install(path, hook_command("/x/memtui"), receipts)
    installed = json.loads(path.read_text(encoding="utf-8"))
    assert {k: v for k, v in installed.items() if k != "hooks"} == other
    assert len(our_handlers(installed)) == 1
    uninstall(path, receipts)
    assert json.loads(path.read_text(encoding="utf-8")) == original


# ---------------------------------------------------------------------- bounded input, exit 0 always
def hook_shell(ws, script: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """`script` run by sh, with $MEMTUI and $HOME_DIR set: the surroundings Claude Code gives."""
    env = {**os.environ, "MEMTUI": MEMTUI, "HOME_DIR": str(ws.home), "MUSE_HOME": str(ws.home)}
    return subprocess.run(["sh", "-c", script], input=stdin, capture_output=True, env=env, timeout=60,
                          stdin=None if stdin is not None else subprocess.DEVNULL)


TARGETS = ("claude-code", "codex", "gemini")


def target_input(target: str, cwd, prompt=PROMPT) -> bytes:
    from memtui.core.assistants.delivery import protocol

    return hook_input(cwd, prompt, hook_event_name=protocol(target).event)


def nothing(target: str) -> bytes:
    from memtui.core.assistants.delivery import protocol

    return protocol(target).nothing


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case, script, reason", [
    ("closed-stdin", 'exec <&-; exec "$MEMTUI" hook "$TARGET"', "stdin is closed"),
    ("home-is-a-file", 'exec "$MEMTUI" --home "$HOME_DIR/settings.json" hook "$TARGET"', "not a directory"),
    ("unknown-option-after", 'exec "$MEMTUI" hook "$TARGET" --verbose', "'--verbose'"),
    ("unknown-option-before", 'exec "$MEMTUI" --quiet hook "$TARGET"', "'--quiet'"),
    ("home-is-empty", 'exec "$MEMTUI" --home= hook "$TARGET"', "--home is empty"),
    ("option-without-value", 'exec "$MEMTUI" --home hook "$TARGET"', "--home needs a value"),
    ("extra-argument", 'exec "$MEMTUI" --home "$HOME_DIR" hook "$TARGET" now', "'now'"),
    ("module-extra-argument", 'exec "$PYTHON" -m memtui.cli.hook "$TARGET" now', "'now'"),
])
def test_the_hook_exits_0_whatever_its_surroundings(ws, case, script, reason, target):
    """Every target: exit 0, its own "nothing" on stdout, one reason on stderr."""
    stdin = None if case == "closed-stdin" else target_input(target, ws.workspace)
    r = hook_shell(ws, f"TARGET={target}; PYTHON={shlex.quote(sys.executable)}; {script}", stdin)
    assert (r.returncode, r.stdout) == (0, nothing(target)), r.stderr
    err = r.stderr.decode()
    assert err.startswith("memtui hook: ") and err.count("\n") == 1 and reason in err, err


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("command", ['"$MEMTUI" --home "$HOME_DIR" hook', f"{shlex.quote(sys.executable)} -m memtui.cli.hook"])
def test_a_vanished_current_directory_does_not_matter(ws, tmp_path, command, target):
    from memtui.core.assistants.delivery import protocol

    gone = tmp_path / "gone"
    gone.mkdir()
    r = hook_shell(ws, f'cd "{gone}" && rmdir "{gone}" && exec {command} {target}', target_input(target, ws.workspace))
    assert (r.returncode, r.stderr) == (0, b"")
    shown = preview(ws, PROMPT, "--target", target).stdout.decode()
    assert shown.startswith("## Memory") and r.stdout == protocol(target).render(shown.removesuffix("\n"))


def test_only_a_hook_run_is_taken_before_click():
    from memtui.cli.hook import hook_argv

    assert hook_argv(["--home", "/h", "-w", "/w", "hook", "claude-code"]) == ("claude-code", "/h", None)
    assert hook_argv(["--home=/h", "-w/w", "hook", "claude-code"]) == ("claude-code", "/h", None)
    assert hook_argv(["hook", "claude-code"]) == ("claude-code", None, None)
    assert hook_argv(["--home", "/h", "hook", "codex"]) == ("codex", "/h", None)
    assert hook_argv(["hook", "gemini", "x"]) == ("gemini", None, "unexpected argument 'x' after 'hook gemini'")
    for other in (["remember", "hook", "claude-code"], ["hook", "install", "claude-code"], ["list"], [],
                  ["hook", "claude-code", "--help"], ["-w", "/w", "search", "hook"], ["--home", "hook"],
                  ["hook", "install", "codex"], ["hook", "uninstall", "gemini"], ["hook", "copilot"]):
        assert hook_argv(other) is None, other


@pytest.mark.parametrize("target", TARGETS)
def test_a_closed_stdout_is_not_a_failure(ws, target):
    r = hook_shell(ws, f'exec "$MEMTUI" hook {target} >&-', target_input(target, ws.workspace))
    assert (r.returncode, r.stderr) == (0, b"")


@pytest.mark.parametrize("target", TARGETS)
def test_an_input_over_1_mib_is_cut_for_every_target(ws, target):
    """A 3 MiB prompt: the reason on stderr, and the injection for the prompt up to the cut."""
    from memtui.cli.hook import LIMIT
    from memtui.core.assistants.delivery import for_target, protocol
    from memtui.core.serve import build_injection

    prompt = "vitest " + "y" * (3 << 20)
    stdin = target_input(target, ws.workspace, prompt)
    r = hook_shell(ws, f'exec "$MEMTUI" hook {target}', stdin)
    assert r.returncode == 0 and r.stderr.decode() == (
        "memtui hook: hook input is longer than 1 MiB; the prompt was cut there for matching\n"), r.stderr
    kept = LIMIT - len(stdin.split(b'"prompt": "')[0]) - len('"prompt": "')
    shown = for_target(build_injection(ws.workspace, prompt[:kept], home=ws.home), target).text
    assert b"vitest" in r.stdout and r.stdout == protocol(target).render(shown)


# The real entry point (memtui.cli.entry:main, what the console script calls), reporting the
# process's own peak memory on stderr after the hook's own line: VmHWM, the peak of this
# program's memory since exec (ru_maxrss would count the forking test process too).
MEASURED = ("import re, sys\nfrom memtui.cli.entry import main\nsys.argv = ['memtui', 'hook', 'claude-code']\n"
            "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
            "peak = re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1)\n"
            "sys.stderr.write(f'rc={code} peak_kb={peak}\\n')\n")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from /proc")
def test_a_100_mb_prompt_is_cut_at_1_mib_in_little_memory(ws):
    """(How fast is a benchmark's business, not this test's: under load the 100 MB written
    into the pipe alone took seconds.)"""
    from memtui.cli.hook import LIMIT
    from memtui.core.serve import build_injection

    prompt = "vitest " + "x" * 100_000_000
    stdin = hook_input(ws.workspace, prompt=prompt)
    r = run_hook(ws.home, stdin, cmd=[sys.executable, "-c", MEASURED])
    lines = r.stderr.decode().splitlines()
    assert r.returncode == 0 and len(lines) == 2, r.stderr
    assert lines[0] == "memtui hook: hook input is longer than 1 MiB; the prompt was cut there for matching"
    code, rss = (field.split("=")[1] for field in lines[1].split())
    assert code == "0"
    # what was matched is the prompt up to the first 1 MiB of the input ("pgbouncer" is past it)
    kept = LIMIT - len(stdin.split(b'"prompt": "')[0]) - len('"prompt": "')
    assert r.stdout == (build_injection(ws.workspace, prompt[:kept], home=ws.home).text + "\n").encode()
    assert b"Use vitest, not jest" in r.stdout
    assert int(rss) < 120_000, f"peak memory {int(rss) // 1024} MB"  # it was 573 MB


def test_input_cut_anywhere_gives_a_prefix_of_the_prompt():
    from memtui.core.assistants.protocol import HookInputError, parse_input

    prompt = 'é "quoted" \\ back\nslash\t数据库 🙂 \u2028 end\x01'
    raw = json.dumps({"cwd": "/", "hook_event_name": "UserPromptSubmit", "prompt": prompt}).encode()
    starts = raw.index(b'"prompt": "') + len(b'"prompt": "')  # where the prompt's characters start
    got = []
    for cut in range(len(raw) + 1):
        try:
            found, cwd = parse_input(raw[:cut], "UserPromptSubmit", cut=True)
        except HookInputError as exc:
            assert cut < starts, (cut, exc)
            continue
        assert cwd == "/" and prompt.startswith(found), (cut, found)
        got.append(found)
    assert got == sorted(got, key=len) and got[-1] == prompt and len(set(got)) == len(prompt) + 1
