"""SPEC §8 "Installers change only what they own": `hook install` / `mcp install` followed by
their `uninstall` give a person's JSON or TOML file back byte for byte (numbers as written,
escapes, indentation, key order, comments); an existing `memtui` MCP entry keeps the person's
other keys; a Codex `mcp_servers = {…}` inline table is handled. Real console script runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memtui.core import jsonedit
from memtui.core.settings import _loads_kept, dumps_value, json_text_for

from .run import memtui

# what people's files look like: 4-space or tab indents, `1E2`, `\u00e9`, their key order,
# other hooks and servers, CRLF line ends, one-line objects
CLAUDE_SETTINGS = ('{\n    "model": "opus",\n    "cleanupPeriodDays": 1E2,\n    "statusLine": "caf\\u00e9 \\/ x",\n'
                   '    "hooks": {\n        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],\n'
                   '        "UserPromptSubmit": [\n            {"hooks": [{"type": "command", "command": "mine"}]}\n'
                   '        ]\n    },\n    "permissions": {"allow": []}\n}\n')
TAB_SETTINGS = '{\r\n\t"zeta": 1.50,\r\n\t"alpha": "\\u00e9",\r\n\t"hooks": {}\r\n}'
ONE_LINE = '{"mcpServers": {}, "theme": "dark", "n": -0.0}'
FILES = {"claude": CLAUDE_SETTINGS, "tabs": TAB_SETTINGS, "one-line": ONE_LINE}


def user_home() -> Path:
    return Path(os.environ["HOME"])


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("target, where", [("claude-code", ".claude/settings.local.json"),
                                           ("gemini", ".gemini/settings.json")])
def test_hook_install_then_uninstall_gives_the_file_back_byte_for_byte(paths, name, target, where):
    path = paths.workspace / where
    path.parent.mkdir(parents=True, exist_ok=True)
    original = FILES[name].encode("utf-8")
    path.write_bytes(original)
    assert memtui(paths, "hook", "install", target, "--project").returncode == 0
    installed = path.read_bytes()
    assert installed != original and b"hook " + target.encode() in installed
    # what was there is still there as written, while installed
    for token in (b"1E2", b"caf\\u00e9 \\/ x", b"1.50", b"-0.0", b'"say done"', b"\r\n\t\"zeta\""):
        if token in original:
            assert token in installed, token
    assert memtui(paths, "hook", "uninstall", target, "--project").returncode == 0
    assert path.read_bytes() == original


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("client, where", [("cursor", ".cursor/mcp.json"), ("vscode", ".vscode/mcp.json"),
                                           ("claude-code", ".mcp.json")])
def test_mcp_install_then_uninstall_gives_the_json_back_byte_for_byte(paths, name, client, where):
    path = paths.workspace / where
    path.parent.mkdir(parents=True, exist_ok=True)
    original = FILES[name].encode("utf-8")
    path.write_bytes(original)
    done = memtui(paths, "mcp", "install", client, "--project")
    assert done.returncode == 0, done.stderr
    assert b'"memtui"' in path.read_bytes()
    assert memtui(paths, "mcp", "uninstall", client, "--project").returncode == 0
    assert path.read_bytes() == original


CODEX = {
    "tables": ('# my Codex config\nmodel = "o3"  # the default\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
               'args = ["--stdio"]\n\n[profiles.fast]\nmodel = "o4-mini"\n'),
    "inline": 'model = "o3"\nmcp_servers = { docs = { command = "docs-mcp" } }\n',
    "inline-empty": "# nothing yet\nmcp_servers = {}\n",
}


@pytest.mark.parametrize("name", CODEX)
def test_codex_config_round_trips_including_an_inline_table(paths, name):
    path = paths.workspace / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(CODEX[name])
    done = memtui(paths, "mcp", "install", "codex", "--project")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    import tomllib

    servers = tomllib.loads(path.read_text())["mcp_servers"]
    assert servers["memtui"]["args"] == ["mcp"]
    assert all(k in servers for k in tomllib.loads(CODEX[name]).get("mcp_servers", {}))
    assert memtui(paths, "mcp", "uninstall", "codex", "--project").returncode == 0
    assert path.read_text() == CODEX[name]


def test_mcp_install_keeps_the_keys_a_person_added_to_the_memtui_entry(paths):
    path = paths.workspace / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"memtui": {
        "command": "/old/venv/bin/memtui", "args": ["mcp"], "env": {"MUSE_HOME": "/data/muse"},
        "cwd": "/data", "timeout": 30}}}, indent=2))
    done = memtui(paths, "mcp", "install", "cursor", "--project")
    assert done.returncode == 0 and "Updated" in done.stdout, done.stdout + done.stderr
    entry = json.loads(path.read_text())["mcpServers"]["memtui"]
    assert entry["command"] != "/old/venv/bin/memtui" and entry["command"].endswith("memtui")
    assert (entry["args"], entry["env"], entry["cwd"], entry["timeout"]) == (["mcp"], {"MUSE_HOME": "/data/muse"},
                                                                             "/data", 30)
    again = memtui(paths, "mcp", "install", "cursor", "--project")
    assert "already registered" in again.stdout


def test_the_memtui_switch_keeps_the_rest_of_a_settings_file_as_written(paths):
    paths.workspace_settings.parent.mkdir(parents=True, exist_ok=True)
    original = '{\n    "memoryEnabled": false,\n    "n": 1E2,\n    "who": "caf\\u00e9"\n}\n'
    paths.workspace_settings.write_text(original)
    assert memtui(paths, "enable").returncode == 0
    assert paths.workspace_settings.read_text() == original.replace("false", "true")
    assert memtui(paths, "disable").returncode == 0
    assert paths.workspace_settings.read_text() == original


@pytest.mark.parametrize("text", [
    '{"a": [1, 2, {"b": "c"}], "d": {"e": null}}',
    '{\n  "a": [\n    1,\n    2\n  ],\n  "d": {}\n}\n',
    '  {"x": "\\"quoted\\" \\\\ back", "y": [[], {}]}  \n',
])
def test_a_splice_that_adds_then_removes_is_the_identity(text):
    """The property the installers rely on, on shapes they do not make themselves."""
    data = _loads_kept(text)
    grown = _loads_kept(text)
    grown["added"] = {"k": [1, {"z": "é"}]}
    if isinstance(grown.get("a"), list):
        grown["a"].append("new")
    out = jsonedit.splice(text, grown, _loads_kept, dumps_value)
    assert out is not None and jsonedit.same(_loads_kept(out), grown)
    assert json_text_for(data, out.encode()).decode() == text
