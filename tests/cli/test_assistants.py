"""Every assistant, one memory (SPEC §11): each prompt hook as its assistant runs it (a real
process, input shaped like the assistant's, checked against that assistant's published
schema, kept in tests/cli/schemas/), and every installer round-tripping a real file."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import tomlkit
from hypothesis import given
from hypothesis import strategies as st

from memtui.core import history
from memtui.core.assistants import Target
from memtui.core.assistants.delivery import protocol
from memtui.core.assistants.protocol import fit
from memtui.core.injection import InjectionResult
from memtui.core.serve import build_injection
from tests.cli.run import run_cli
from tests.helpers import enable, write

SCHEMAS = Path(__file__).parent / "schemas"
MEMTUI = str(Path(sys.executable).parent / "memtui")
PROMPT = "帮我优化数据库查询 vitest quokkaprompt"
PREFS = "---\ntype: preference\nimportance: high\n---\n\n## Testing\n\n- Use vitest, not jest\n- Prefer describe/it style\n"
CONTEXT = "- 数据库连接池 zebracorn 配置过小\n- Use PostgreSQL + pgbouncer\n"
CHECKER = jsonschema.Draft7Validator.FORMAT_CHECKER


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def validate(data, name: str) -> None:
    jsonschema.Draft7Validator(schema(name), format_checker=CHECKER).validate(data)


INPUT_SCHEMA = {Target.CLAUDE_CODE: "claude-code-user-prompt-submit.input", Target.CODEX: "codex-user-prompt-submit.input",
                Target.GEMINI: "gemini-before-agent.input"}
OUTPUT_SCHEMA = {Target.CODEX: "codex-user-prompt-submit.output", Target.GEMINI: "gemini-before-agent.output"}


def hook_input(target: Target, cwd: Path, prompt: str = PROMPT) -> bytes:
    """What the assistant sends, field for field, checked against its input schema."""
    if target is Target.CODEX:
        data: dict = {"session_id": "019a3c7e-5b1f-7d20-8c4e-2f6a9b1d0e33", "turn_id": "1", "transcript_path": None,
                      "cwd": str(cwd), "hook_event_name": "UserPromptSubmit", "model": "gpt-5-codex",
                      "permission_mode": "default", "prompt": prompt}
    elif target is Target.GEMINI:
        data = {"session_id": "5d0f2b8e-4c1a-4e7b-9f3d-6a2c8e1b7f40", "transcript_path": str(cwd / "chat.json"),
                "cwd": str(cwd), "hook_event_name": "BeforeAgent", "timestamp": "2026-11-24T10:15:00.000Z",
                "prompt": prompt}
    else:
        data = {"session_id": "8c35adc1-0b9e-4c43-9a57-1f0d3b6e2a11", "transcript_path": str(cwd / "t.jsonl"),
                "cwd": str(cwd), "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    validate(data, INPUT_SCHEMA[target])
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def run_hook(home: Path, target: Target, stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([MEMTUI, "--home", str(home), "hook", str(target)], input=stdin, capture_output=True,
                          timeout=60, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def memtui(paths, *args: str) -> subprocess.CompletedProcess:
    """An installer, the doctor, history: `memtui` as its own process, forked from the test run
    (tests/cli/run.py; MEMTUI_TEST_SUBPROCESS=1 spawns the console script). The hooks
    themselves (`run_hook`, `hook_shell`) always run as the assistant runs them: a new process."""
    return run_cli(["--home", str(paths.home), "-w", str(paths.workspace), *args])


def preview_text(paths, target: Target, prompt: str = PROMPT) -> str:
    r = run_cli(["--home", str(paths.home), "-w", str(paths.workspace), "preview", prompt, "--target", str(target)])
    assert r.returncode == 0, r.stderr
    return r.stdout


def context_of(target: Target, out: bytes) -> str:
    """The context the assistant takes from the hook's stdout, after checking the stdout is
    exactly what the assistant accepts."""
    if target is Target.CLAUDE_CODE:
        text = out.decode("utf-8")
        assert not text.startswith("{")  # plain text, never mistaken for JSON output
        assert len(text) <= 10_000
        return text
    data = json.loads(out)
    validate(data, OUTPUT_SCHEMA[target])
    assert list(data) == ["hookSpecificOutput"]  # no other field (Codex forbids extra ones)
    assert data["hookSpecificOutput"]["hookEventName"] == protocol(target).event
    return data["hookSpecificOutput"]["additionalContext"] + "\n"  # preview ends the text with a newline


@pytest.fixture
def ws(paths):
    write(paths.user_root / "preferences.md", PREFS)
    write(paths.project_root / "context.md", CONTEXT)
    (paths.workspace / "src").mkdir()
    enable(paths)
    return paths


# ---------------------------------------------------------------------- the hooks
@pytest.mark.parametrize("target", list(Target))
def test_each_hook_prints_what_its_assistant_accepts_and_equals_preview(ws, target):
    ran = run_hook(ws.home, target, hook_input(target, ws.workspace / "src"))
    assert (ran.returncode, ran.stderr) == (0, b"")
    text = context_of(target, ran.stdout)
    assert text == preview_text(ws, target)
    assert "vitest" in text and "zebracorn" in text
    [rec] = history.records(ws.db_path)
    assert rec.target == str(target) and rec.count == 4 and rec.chars == len(text) - 1


@pytest.mark.parametrize("target", list(Target))
def test_nothing_is_the_assistants_own_nothing(ws, target):
    nothing = {Target.CLAUDE_CODE: b"", Target.CODEX: b"", Target.GEMINI: b"{}\n"}[target]
    assert memtui(ws, "disable").returncode == 0
    ran = run_hook(ws.home, target, hook_input(target, ws.workspace))
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, nothing, b"")
    if target in OUTPUT_SCHEMA:
        assert preview_text(ws, target) == ""
    if nothing.strip():
        validate(json.loads(nothing), OUTPUT_SCHEMA[target])
    assert history.records(ws.db_path) == []  # memory off: nothing recorded


@pytest.mark.parametrize("target", list(Target))
@pytest.mark.parametrize("stdin, reason", [
    (b"{not json", "not valid JSON"),
    (b'{"prompt": "x"}', 'no "cwd"'),
    (json.dumps({"hook_event_name": "Stop", "prompt": "x", "cwd": "/"}).encode(), "'Stop'"),
])
def test_any_failure_is_nothing_and_exit_0_never_a_block(ws, target, stdin, reason):
    ran = run_hook(ws.home, target, stdin)
    assert ran.returncode == 0  # never 2: every assistant would block (and erase) the prompt
    assert ran.stdout == protocol(target).nothing
    assert reason in ran.stderr.decode() and b"Traceback" not in ran.stderr


def test_a_hook_for_another_assistants_event_is_refused(ws):
    ran = run_hook(ws.home, Target.GEMINI, hook_input(Target.CODEX, ws.workspace))
    assert ran.returncode == 0 and ran.stdout == b"{}\n" and b"BeforeAgent" in ran.stderr


def test_a_budget_past_the_limit_is_cut_to_whole_entries_the_assistant_keeps(paths):
    lines = "".join(f"- Deploy note {i:04d}: the quokka service restarts the worker pool after "
                    f"each release window; {'x' * 60}\n" for i in range(400))
    write(paths.project_root / "notes.md", lines)
    enable(paths, {"memory": {"budget": {"total": 60000, "user": 20000, "project": 40000, "conversation": 0}}})
    full = build_injection(paths.workspace, "quokka", home=paths.home)
    assert len(full.text) > 30_000 and full.count == 400
    for target in (Target.CLAUDE_CODE, Target.CODEX):
        ran = run_hook(paths.home, target, hook_input(target, paths.workspace, "quokka"))
        text = context_of(target, ran.stdout)
        assert text == preview_text(paths, target, "quokka")
        proto = protocol(target)
        assert proto.limit is not None and proto.measure(text[:-1]) <= proto.limit
        assert text.endswith("x\n") and text.count("\n- ") < 400  # whole entries only
        rec = history.records(paths.db_path, limit=1)[0]
        assert rec.target == str(target) and rec.truncated and rec.count == text.count("\n- ")
    as_json = json.loads(memtui(paths, "preview", "quokka", "--json", "--target", "claude-code").stdout)
    statuses = [c["status"] for c in as_json["candidates"]]
    assert statuses.count("included") == as_json["count"] < 400 and statuses.count("budget") == 400 - as_json["count"]
    assert as_json["text"] + "\n" == preview_text(paths, Target.CLAUDE_CODE, "quokka") and as_json["truncated"]
    gemini = context_of(Target.GEMINI, run_hook(paths.home, Target.GEMINI, hook_input(Target.GEMINI, paths.workspace, "quokka")).stdout)
    assert gemini == full.text + "\n"  # no documented limit: the whole injection


def test_fit_drops_entries_from_the_end_and_empty_layer_headers(ws):
    result = build_injection(ws.workspace, PROMPT, home=ws.home)
    proto = protocol(Target.CODEX)
    cut = fit(result, type(proto)(target=proto.target, name="t", event="e", render=proto.render, nothing=b"",
                                  limit=len("## Memory\n\n### User Preferences\n- Use vitest, not jest") + 3))
    assert cut.text == "## Memory\n\n### User Preferences\n- Use vitest, not jest"
    assert cut.count == 1 and cut.truncated and [c.entry.text for c in cut.included] == ["Use vitest, not jest"]
    assert fit(result, proto) is result  # within the limit: unchanged


HEADERS = ("### User Preferences", "### Project Knowledge", "### Relevant Context")
LINE_TEXT = st.text(alphabet="aé€数 ", min_size=1, max_size=60).filter(lambda t: t.strip() == t and t)


@given(layers=st.tuples(*(st.lists(LINE_TEXT, max_size=6) for _ in HEADERS)).filter(any),
       limit=st.integers(min_value=1, max_value=1500), target=st.sampled_from([Target.CLAUDE_CODE, Target.CODEX]))
def test_fit_keeps_the_longest_prefix_of_whole_entries_within_the_limit(layers, limit, target):
    text = "## Memory" + "".join(f"\n\n{h}" + "".join(f"\n- {line}" for line in lines) for h, lines in zip(HEADERS, layers) if lines)
    proto = dataclasses.replace(protocol(target), limit=limit)
    out = fit(InjectionResult(workspace="w", query="q", enabled=True, text=text, count=sum(map(len, layers))), proto)
    entries = [line for line in text.split("\n") if line.startswith("- ")]
    assert out.count == out.text.count("\n- ") and out.text.count("\n- ") <= len(entries)
    if out.text:
        assert proto.measure(out.text) <= limit and text.startswith(out.text) and out.text.split("\n")[-1].startswith("- ")
    if out.count < len(entries):  # nothing more would have fitted: the next entry (with its header) overflows
        longer = text[:text.index(entries[out.count], len(out.text)) + len(entries[out.count])]
        assert not proto.fits(longer)


def test_history_names_the_assistant_and_an_old_table_gains_the_column(ws):
    conn = sqlite3.connect(ws.db_path)  # a table as the previous memtui made it: no target column
    conn.execute("CREATE TABLE memory_injections (id INTEGER PRIMARY KEY, time INTEGER NOT NULL, workspace TEXT NOT NULL, "
                 "count INTEGER NOT NULL, chars INTEGER NOT NULL, tokens INTEGER NOT NULL, truncated INTEGER NOT NULL, "
                 "retrieval_ms FLOAT NOT NULL, disabled_reason TEXT, entries TEXT NOT NULL)")
    conn.execute("INSERT INTO memory_injections (time, workspace, count, chars, tokens, truncated, retrieval_ms, entries) "
                 "VALUES (?, ?, 0, 0, 0, 0, 1.0, '[]')", (history.now_ms() - 60_000, str(ws.workspace)))
    conn.commit()
    conn.close()
    assert [r.target for r in history.records(ws.db_path)] == [None]
    run_hook(ws.home, Target.CODEX, hook_input(Target.CODEX, ws.workspace))
    data = json.loads(memtui(ws, "history", "--json").stdout)
    assert [r["target"] for r in data["records"]] == ["codex", None]
    assert "codex · 4 memories" in memtui(ws, "history").stdout


# ---------------------------------------------------------------------- hook install
FOREIGN = {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "date"}]}]}, "数据": "✓"}


def user_home() -> Path:
    return Path(os.environ["HOME"])


@pytest.mark.parametrize("target, args, where, shared", [
    (Target.CLAUDE_CODE, (), "~/.claude/settings.json", False),
    (Target.CLAUDE_CODE, ("--project",), ".claude/settings.local.json", False),
    (Target.CLAUDE_CODE, ("--project", "--shared"), ".claude/settings.json", True),
    (Target.CLAUDE_CODE, ("--shared",), ".claude/settings.json", True),
    (Target.CODEX, (), "~/.codex/hooks.json", False),
    (Target.CODEX, ("--project",), ".codex/hooks.json", True),
    (Target.GEMINI, (), "~/.gemini/settings.json", False),
    (Target.GEMINI, ("--project",), ".gemini/settings.json", True),
])
def test_hook_install_round_trips_and_the_installed_command_runs(ws, target, args, where, shared):
    path = user_home() / where[2:] if where.startswith("~/") else ws.workspace / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(FOREIGN, indent=4, ensure_ascii=False), encoding="utf-8")
    r = memtui(ws, "hook", "install", str(target), *args)
    assert r.returncode == 0, r.stderr
    assert str(path) in r.stdout
    data = json.loads(path.read_text(encoding="utf-8"))
    event = protocol(target).event
    [group] = data["hooks"][event]
    [handler] = group["hooks"]
    assert {k: v for k, v in data.items() if k != "hooks"} == {"model": "opus", "数据": "✓"}
    assert data["hooks"]["Stop"] == FOREIGN["hooks"]["Stop"]
    if shared:
        assert handler["command"] == f"memtui hook {target}" and "PATH" in r.stdout
    else:  # this installation, and the home it was installed for (the assistant has no $MUSE_HOME)
        assert handler["command"] == f"{MEMTUI} --home {shlex.quote(str(ws.home))} hook {target}"
    if target is Target.GEMINI:
        assert handler["timeout"] == 10_000 and handler["name"] == "memtui"  # milliseconds
    else:
        assert handler["timeout"] == 10  # seconds
    once = path.read_bytes()
    again = memtui(ws, "hook", "install", str(target), *args)
    assert again.returncode == 0 and "already" in again.stdout and path.read_bytes() == once
    if not shared:  # the installed command, run through a shell as the assistant does
        ran = subprocess.run(handler["command"], shell=True, input=hook_input(target, ws.workspace), capture_output=True,
                             timeout=60, env={k: v for k, v in os.environ.items() if k != "MUSE_HOME"})
        assert ran.returncode == 0 and context_of(target, ran.stdout) == preview_text(ws, target)
    assert memtui(ws, "hook", "uninstall", str(target), *args).returncode == 0
    assert json.loads(path.read_text(encoding="utf-8")) == FOREIGN


def test_hook_install_into_nothing_and_uninstall_leaves_nothing(ws):
    for target, folder in ((Target.CODEX, ".codex"), (Target.GEMINI, ".gemini"), (Target.CLAUDE_CODE, ".claude")):
        assert memtui(ws, "hook", "install", str(target), "--project").returncode == 0
        assert (ws.workspace / folder).is_dir()
        assert memtui(ws, "hook", "uninstall", str(target), "--project").returncode == 0
        assert not (ws.workspace / folder).exists()


PROJECT_INSTALLS = [
    (("hook", "install", "claude-code", "--project"), ".claude"),
    (("hook", "install", "claude-code", "--shared"), ".claude"),
    (("hook", "install", "codex", "--project"), ".codex"),
    (("hook", "install", "gemini", "--project"), ".gemini"),
    (("mcp", "install", "cursor", "--project"), ".cursor"),
    (("mcp", "install", "vscode", "--project"), ".vscode"),
    (("mcp", "install", "codex", "--project"), ".codex"),
    (("mcp", "install", "gemini", "--project"), ".gemini"),
]


@pytest.mark.parametrize("args, folder", PROJECT_INSTALLS)
@pytest.mark.parametrize("inside", [False, True], ids=["link-out", "link-inside"])
def test_a_project_file_is_never_written_through_a_link(ws, tmp_path, args, folder, inside):
    """The write gate: no component below the workspace may be a symlink, whether it leads
    out of the workspace (a cloned `.claude -> ~`) or to another folder inside it."""
    dest = ws.workspace / "linked" if inside else tmp_path / "elsewhere"
    dest.mkdir()
    (ws.workspace / folder).symlink_to(dest)
    r = memtui(ws, *args)
    assert r.returncode == 1 and "symlink" in r.stderr and "Traceback" not in r.stderr, r
    assert list(dest.iterdir()) == []


def test_a_project_file_at_the_workspace_root_is_never_written_through_a_link(ws, tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text("{}\n", encoding="utf-8")
    (ws.workspace / ".mcp.json").symlink_to(outside)
    r = memtui(ws, "mcp", "install", "claude-code", "--project")
    assert r.returncode == 1 and "symlink" in r.stderr and "Traceback" not in r.stderr, r
    assert outside.read_text(encoding="utf-8") == "{}\n"


@pytest.mark.parametrize("args, folder", [(("hook", "codex", "--project"), ".codex"),
                                          (("mcp", "cursor", "--project"), ".cursor")])
def test_uninstall_never_writes_or_removes_through_a_link(ws, tmp_path, args, folder):
    group, client, *rest = args
    assert memtui(ws, group, "install", client, *rest).returncode == 0
    moved = tmp_path / "moved"
    (ws.workspace / folder).rename(moved)
    (ws.workspace / folder).symlink_to(moved)
    before = {p.name: p.read_bytes() for p in moved.iterdir()}
    r = memtui(ws, group, "uninstall", client, *rest)
    assert r.returncode == 1 and "symlink" in r.stderr and "Traceback" not in r.stderr, r
    assert {p.name: p.read_bytes() for p in moved.iterdir()} == before


# ---------------------------------------------------------------------- mcp install
MCP_CASES = [
    ("claude-desktop", (), lambda ws: user_home() / ".config" / "Claude" / "claude_desktop_config.json", "mcpServers"),
    ("claude-code", (), lambda ws: user_home() / ".claude.json", "mcpServers"),
    ("claude-code", ("--project",), lambda ws: ws.workspace / ".mcp.json", "mcpServers"),
    ("cursor", (), lambda ws: user_home() / ".cursor" / "mcp.json", "mcpServers"),
    ("cursor", ("--project",), lambda ws: ws.workspace / ".cursor" / "mcp.json", "mcpServers"),
    ("vscode", (), lambda ws: user_home() / ".config" / "Code" / "User" / "mcp.json", "servers"),
    ("vscode", ("--project",), lambda ws: ws.workspace / ".vscode" / "mcp.json", "servers"),
    ("gemini", (), lambda ws: user_home() / ".gemini" / "settings.json", "mcpServers"),
    ("gemini", ("--project",), lambda ws: ws.workspace / ".gemini" / "settings.json", "mcpServers"),
]


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the app folders checked here are Linux's")
@pytest.mark.parametrize("client, args, where, key", MCP_CASES)
def test_mcp_install_round_trips_every_other_key(ws, monkeypatch, client, args, where, key):
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    path = where(ws)
    other = {"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}, "theme": "dark"}
    if key == "servers":
        other = {"servers": {"git": {"type": "stdio", "command": "uvx"}}, "inputs": []}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(other, indent=4), encoding="utf-8")
    before = path.read_bytes()
    dry = memtui(ws, "mcp", "install", client, *args, "--dry-run")
    assert dry.returncode == 0 and '"memtui"' in dry.stdout and dry.stdout.startswith("---")
    assert path.read_bytes() == before  # a dry run writes nothing
    r = memtui(ws, "mcp", "install", client, *args)
    assert r.returncode == 0, r.stderr
    data = json.loads(path.read_text(encoding="utf-8"))
    entry = data[key]["memtui"]
    if args:  # a project's file is committed: plain `memtui`, found on each person's PATH
        assert entry["command"] == "memtui"
    else:  # the person's own file: this installation, by its absolute path
        assert entry["command"] == MEMTUI and os.path.isabs(entry["command"])
    # Claude Desktop starts the server in no particular folder: it is told the workspace
    own_home = [] if args else ["--home", str(ws.home)]  # a client starts the server without $MUSE_HOME
    assert entry["args"] == own_home + (["-w", str(ws.workspace), "mcp"] if client == "claude-desktop" else ["mcp"])
    if client in ("vscode", "claude-code"):
        assert entry["type"] == "stdio"
    assert {k: v for k, v in data.items() if k != key} == {k: v for k, v in other.items() if k != key}
    assert {k: v for k, v in data[key].items() if k != "memtui"} == other[key]
    once = path.read_bytes()
    assert "already" in memtui(ws, "mcp", "install", client, *args).stdout and path.read_bytes() == once
    assert memtui(ws, "mcp", "uninstall", client, *args).returncode == 0
    assert json.loads(path.read_text(encoding="utf-8")) == other


CODEX_TOML = """\
# my Codex settings
model = "gpt-5-codex"  # the default

[mcp_servers.git]
command = "uvx"
args = ["mcp-server-git"]

[projects."/src/app"]
trust_level = "trusted"
"""


@pytest.mark.parametrize("args, where", [((), lambda ws: user_home() / ".codex" / "config.toml"),
                                         (("--project",), lambda ws: ws.workspace / ".codex" / "config.toml")])
def test_mcp_install_codex_keeps_the_toml_byte_for_byte(ws, args, where):
    path = where(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CODEX_TOML, encoding="utf-8")
    program = "memtui" if args else MEMTUI  # a project's file is committed: plain `memtui`
    argv = ["mcp"] if args else ["--home", str(ws.home), "mcp"]  # the person's own: this installation's home
    shown = "[" + ", ".join(f'"{a}"' for a in argv) + "]"
    assert memtui(ws, "mcp", "install", "codex", *args).returncode == 0
    text = path.read_text(encoding="utf-8")
    assert text == CODEX_TOML.replace('[projects', f'[mcp_servers.memtui]\ncommand = "{program}"\nargs = {shown}\n\n[projects')
    doc = tomlkit.parse(text).unwrap()
    assert doc["mcp_servers"]["memtui"] == {"command": program, "args": argv}
    assert doc["mcp_servers"]["git"] == {"command": "uvx", "args": ["mcp-server-git"]}
    assert "already" in memtui(ws, "mcp", "install", "codex", *args).stdout
    assert memtui(ws, "mcp", "uninstall", "codex", *args).returncode == 0
    assert path.read_text(encoding="utf-8") == CODEX_TOML
    appended = 'model = "x"\n'  # a file without mcp_servers: the table is added at the end, and taken out again
    path.write_text(appended, encoding="utf-8")
    assert memtui(ws, "mcp", "install", "codex", *args).returncode == 0
    assert path.read_text(encoding="utf-8") == f'model = "x"\n\n[mcp_servers.memtui]\ncommand = "{program}"\nargs = {shown}\n'
    assert memtui(ws, "mcp", "uninstall", "codex", *args).returncode == 0
    assert path.read_text(encoding="utf-8") == appended


def test_codex_home_is_where_codex_keeps_the_persons_files(ws, tmp_path, monkeypatch):
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert memtui(ws, "mcp", "install", "codex").returncode == 0
    assert memtui(ws, "hook", "install", "codex").returncode == 0
    assert sorted(p.name for p in home.iterdir()) == ["config.toml", "hooks.json"]
    assert not (user_home() / ".codex").exists()


def test_mcp_install_into_nothing_then_uninstall_leaves_nothing(ws):
    for client, folder in (("codex", ".codex"), ("vscode", ".vscode"), ("cursor", ".cursor")):
        assert memtui(ws, "mcp", "install", client, "--project").returncode == 0
        assert (ws.workspace / folder).is_dir()
        assert memtui(ws, "mcp", "uninstall", client, "--project").returncode == 0
        assert not (ws.workspace / folder).exists()
    assert memtui(ws, "mcp", "install", "codex").returncode == 0
    assert tomlkit.parse((user_home() / ".codex" / "config.toml").read_text()).unwrap() == {
        "mcp_servers": {"memtui": {"command": MEMTUI, "args": ["--home", str(ws.home), "mcp"]}}}


@pytest.mark.parametrize("content, reason", [("{oops", "invalid JSON"), ("// comment\n{}", "invalid JSON"),
                                             ('{"mcpServers": []}', "not a table of servers"),
                                             ('{"mcpServers": {"memtui": {"command": "node", "args": ["x.js"]}}}',
                                              "did not write")])
def test_mcp_install_refuses_a_file_it_cannot_keep_whole(ws, content, reason):
    path = ws.workspace / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    r = memtui(ws, "mcp", "install", "cursor", "--project")
    assert r.returncode == 1 and reason in r.stderr and str(path) in r.stderr and "Traceback" not in r.stderr
    assert path.read_text(encoding="utf-8") == content


def test_mcp_install_claude_desktop_has_no_project_file(ws):
    r = memtui(ws, "mcp", "install", "claude-desktop", "--project")
    assert r.returncode == 1 and "no project config" in r.stderr


# ---------------------------------------------------------------------- doctor
def test_doctor_reports_a_memory_an_instructions_file_already_gives(ws):
    write(ws.workspace / "CLAUDE.md", "# Project rules\n\n- Use PostgreSQL + pgbouncer.\n- Run `make test` before pushing\n")
    write(ws.workspace / ".github" / "copilot-instructions.md", "Always answer in English. 数据库连接池 zebracorn 配置过小\n")
    write(ws.workspace / "AGENTS.md", "Prefer small commits.\n")
    r = memtui(ws, "doctor", "--json")
    found = [(f["kind"], f["source"], f["reason"]) for f in json.loads(r.stdout)["findings"] if f["kind"] == "already_loaded"]
    assert r.returncode == 1
    assert sorted(found) == [
        ("already_loaded", "context.md:1", "repeats .github/copilot-instructions.md, which the assistant already loads in this workspace"),
        ("already_loaded", "context.md:2", "nearly repeats CLAUDE.md, which the assistant already loads in this workspace"),
    ]


def test_doctor_reads_no_instructions_file_through_a_link_out_of_the_workspace(ws, tmp_path):
    outside = write(tmp_path / "outside.md", "- Use PostgreSQL + pgbouncer\n")
    (ws.workspace / "GEMINI.md").symlink_to(outside)
    found = json.loads(memtui(ws, "doctor", "--json").stdout)["findings"]
    assert [f for f in found if f["kind"] == "already_loaded"] == []


def test_doctor_reports_a_budget_that_can_give_an_assistant_more_than_it_keeps(paths):
    write(paths.project_root / "notes.md", "".join(f"- Note {i:03d} on the quokka deploy: {'y' * 90}\n" for i in range(300)))
    enable(paths, {"memory": {"budget": {"total": 8000, "user": 600, "project": 8000, "conversation": 600}}})
    found = [f for f in json.loads(memtui(paths, "doctor", "--json").stdout)["findings"] if f["kind"] == "over_limit"]
    assert [f["source"] for f in found] == [str(paths.global_settings)] * 2
    claude, codex = found
    assert "Claude Code keeps 10000" in claude["reason"] and "Codex keeps 10000" in codex["reason"]
    fits = int(claude["reason"].rsplit("a total of ", 1)[1].split()[0])
    assert 1500 < fits < 8000
    # the promise holds: with that budget no query gives Claude Code more than it keeps
    enable(paths, {"memory": {"budget": {"total": fits, "user": 600, "project": fits, "conversation": 600}}})
    assert [f for f in json.loads(memtui(paths, "doctor", "--json").stdout)["findings"] if f["kind"] == "over_limit"
            and "Claude Code" in f["reason"]] == []
    text = build_injection(paths.workspace, "quokka deploy", home=paths.home).text
    assert len(text) + 1 <= 10_000
    enable(paths)  # the default budget: nothing to report
    assert [f for f in json.loads(memtui(paths, "doctor", "--json").stdout)["findings"] if f["kind"] == "over_limit"] == []


def test_the_hook_module_runs_each_target_without_the_console_script(ws):
    for target in Target:
        ran = subprocess.run([sys.executable, "-m", "memtui.cli.hook", str(target)], input=hook_input(target, ws.workspace),
                             capture_output=True, timeout=60, env={**os.environ, "MUSE_HOME": str(ws.home)})
        assert ran.returncode == 0 and context_of(target, ran.stdout) == preview_text(ws, target)
    ran = subprocess.run([sys.executable, "-m", "memtui.cli.hook", "copilot"], input=b"{}", capture_output=True, timeout=60)
    assert (ran.returncode, ran.stdout) == (0, b"") and b"unknown target" in ran.stderr


@pytest.mark.parametrize("name, bad", [
    # a Claude-only field inside Codex's hookSpecificOutput, an extra top-level field, a block without a reason
    ("codex-user-prompt-submit.output", {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x",
                                                                "suppressOriginalPrompt": True}}),
    ("codex-user-prompt-submit.output", {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit"}, "additionalContext": "x"}),
    ("codex-user-prompt-submit.output", {"decision": "block", "reason": " "}),
    ("codex-user-prompt-submit.output", {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "x"}}),
    ("gemini-before-agent.output", {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}),
    ("gemini-before-agent.output", {"additionalContext": "x"}),
    ("codex-user-prompt-submit.input", {"cwd": "/", "hook_event_name": "UserPromptSubmit", "prompt": "x"}),
])
def test_the_schema_fixtures_are_valid_and_reject_what_the_tools_reject(name, bad):
    jsonschema.Draft7Validator.check_schema(schema(name))
    with pytest.raises(jsonschema.ValidationError):
        validate(bad, name)


def test_an_installed_hook_and_server_name_a_home_other_than_the_default_and_only_then(ws, tmp_path, monkeypatch):
    """An assistant runs the hook, and a client starts the server, without this shell's
    `$MUSE_HOME`: a home other than `~/.muse` is written into the command; `~/.muse` is not."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert memtui(ws, "hook", "install", "codex").returncode == 0
    [group] = json.loads((user_home() / ".codex" / "hooks.json").read_text())["hooks"]["UserPromptSubmit"]
    assert "--home" in group["hooks"][0]["command"]
    assert memtui(ws, "hook", "uninstall", "codex").returncode == 0
    default = user_home() / ".muse"
    default.mkdir()
    (ws.home / "memory").rename(default / "memory")
    as_default = dataclasses.replace(ws, home=default.resolve())
    assert memtui(as_default, "hook", "install", "codex").returncode == 0
    [group] = json.loads((user_home() / ".codex" / "hooks.json").read_text())["hooks"]["UserPromptSubmit"]
    assert group["hooks"][0]["command"] == f"{MEMTUI} hook codex"
    assert memtui(as_default, "mcp", "install", "cursor").returncode == 0
    entry = json.loads((user_home() / ".cursor" / "mcp.json").read_text())["mcpServers"]["memtui"]
    assert entry["args"] == ["mcp"]


def test_the_hook_module_form_names_its_home_and_is_found_again(ws, monkeypatch):
    """Without a console script the hook is this Python running the hook module, the home after
    the target; run through a shell without `$MUSE_HOME` it reads that home, and an uninstall
    recognises it as memtui's."""
    from memtui.core.assistants import hook_files

    monkeypatch.setattr(hook_files, "find_memtui", lambda: None)
    command = hook_files.hook_command("codex", home=ws.home)
    assert command.endswith(f"-m {hook_files.HOOK_MODULE} codex --home {shlex.quote(str(ws.home))}")
    assert hook_files.is_memtui_hook(command, "codex") and not hook_files.is_memtui_hook(command, "gemini")
    ran = subprocess.run(command, shell=True, input=hook_input(Target.CODEX, ws.workspace), capture_output=True,
                         timeout=60, env={k: v for k, v in os.environ.items() if k != "MUSE_HOME"})
    assert ran.returncode == 0 and context_of(Target.CODEX, ran.stdout) == preview_text(ws, Target.CODEX)
