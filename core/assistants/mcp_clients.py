"""Registering `memtui mcp` with each MCP client (SPEC §11), and taking it out.

Every client names stdio servers by a key in one object of its config file, each with the
program to start and its arguments:

| client         | file (user; project)                                             | object        |
|----------------|------------------------------------------------------------------|---------------|
| claude-desktop | `claude_desktop_config.json` in Claude's app folder; none        | `mcpServers`  |
| claude-code    | `~/.claude.json` (user scope); `<project>/.mcp.json`             | `mcpServers`  |
| cursor         | `~/.cursor/mcp.json`; `<project>/.cursor/mcp.json`               | `mcpServers`  |
| vscode         | `mcp.json` in VS Code's user folder; `<project>/.vscode/mcp.json`| `servers` (`"type": "stdio"`) |
| codex          | `$CODEX_HOME/config.toml` (`~/.codex`); `<project>/.codex/config.toml`           | `[mcp_servers.memtui]` |
| gemini         | `~/.gemini/settings.json`; `<project>/.gemini/settings.json`     | `mcpServers`  |

The server is registered as `memtui` with the absolute path of the running `memtui` (an
assistant starts it without the person's shell, so a venv's script is not on its PATH)
and the argument `mcp`. Every other key of the file is kept, as written: JSON through the
settings reader and writer (which edits the text in place, core/jsonedit.py), TOML through
tomlkit, which keeps comments, order and formatting (an inline `mcp_servers = {…}` gets an
inline entry), so uninstall gives the file back byte for byte.
Install is idempotent; a memtui entry already there with another command is updated, its
other keys (`env`, `cwd`, timeouts) kept;
uninstall removes the entry and the containers install made (from the receipt) once empty.
A JSON file with comments (VS Code and Gemini accept them) is not valid JSON to memtui:
reported and never rewritten, since rewriting it would drop the comments.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bounded_reader import RefusedFileError
from ..paths import home_option
from ..settings import json_text_for, parse_json_object, read_settings_bytes
from . import Client
from .codex import codex_home
from .files import DIR, FILE, Change, ConfigError, Receipts, remove_file, shown, write_bytes, write_target

NAME = "memtui"
ARGS = ("mcp",)
PURPOSE = "mcp"


def _app_config(home: Path, *parts: str) -> Path:
    """A desktop app's per-user config folder, as the app itself finds it."""
    if sys.platform == "darwin":
        return home.joinpath("Library", "Application Support", *parts)
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming").joinpath(*parts)
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config").joinpath(*parts)


def _stdio(program: str) -> dict[str, Any]:
    return {"command": program, "args": list(ARGS)}


def _typed_stdio(program: str) -> dict[str, Any]:
    return {"type": "stdio", "command": program, "args": list(ARGS)}


@dataclass(frozen=True)
class McpClient:
    client: Client
    name: str  # as people call it
    key: str  # the object holding the servers
    user: Callable[[Path], Path]  # the person's home -> their config file
    project: Callable[[Path], Path] | None  # workspace -> the project's config file, if the client has one
    entry: Callable[[str], dict[str, Any]]  # absolute program -> the server's config
    toml: bool = False


CONFIGS = {
    Client.CLAUDE_DESKTOP: McpClient(Client.CLAUDE_DESKTOP, "Claude Desktop", "mcpServers",
                                     lambda h: _app_config(h, "Claude", "claude_desktop_config.json"), None, _stdio),
    Client.CLAUDE_CODE: McpClient(Client.CLAUDE_CODE, "Claude Code", "mcpServers",
                                  lambda h: h / ".claude.json", lambda ws: ws / ".mcp.json", _typed_stdio),
    Client.CURSOR: McpClient(Client.CURSOR, "Cursor", "mcpServers",
                             lambda h: h / ".cursor" / "mcp.json", lambda ws: ws / ".cursor" / "mcp.json", _stdio),
    Client.VSCODE: McpClient(Client.VSCODE, "VS Code", "servers",
                             lambda h: _app_config(h, "Code", "User", "mcp.json"), lambda ws: ws / ".vscode" / "mcp.json",
                             _typed_stdio),
    Client.CODEX: McpClient(Client.CODEX, "Codex", "mcp_servers",
                            lambda h: codex_home(h) / "config.toml", lambda ws: ws / ".codex" / "config.toml", _stdio,
                            toml=True),
    Client.GEMINI: McpClient(Client.GEMINI, "Gemini CLI", "mcpServers",
                             lambda h: h / ".gemini" / "settings.json", lambda ws: ws / ".gemini" / "settings.json", _stdio),
}


def config_path(client: Client | str, project: bool, workspace: Path, user_home: Path | None = None) -> Path:
    """The file `client` reads its MCP servers from: the project's, or the person's."""
    spec = CONFIGS[Client(client)]
    if project:
        if spec.project is None:
            raise ConfigError(f"{spec.name} has no project config; install without --project")
        return spec.project(workspace)
    return spec.user(Path(user_home) if user_home is not None else Path.home())


# ---------------------------------------------------------------------- one document, JSON or TOML
class _Doc:
    """A config file's bytes, its parsed document and the servers object inside it."""

    def __init__(self, spec: McpClient, path: Path):
        self.spec, self.path = spec, path
        try:
            self.raw = read_settings_bytes(path)
        except RefusedFileError as exc:
            raise ConfigError(f"{shown(path)}: {exc.reason}; not changed") from None
        except OSError as exc:
            raise ConfigError(f"{shown(path)}: cannot read it ({exc.strerror or exc}); not changed") from None
        self.data: Any = self._parse()

    def _parse(self) -> Any:
        if self.spec.toml:
            import tomlkit
            from tomlkit.exceptions import TOMLKitError

            if self.raw is None:
                return tomlkit.document()
            try:
                return tomlkit.parse(self.raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise ConfigError(f"{shown(self.path)}: not UTF-8 text; not changed") from None
            except TOMLKitError as exc:
                raise ConfigError(f"{shown(self.path)}: invalid TOML ({exc}); not changed") from None
        data, problem = parse_json_object(self.path, self.raw, "not changed")
        if problem is not None:
            raise ConfigError(f"{shown(self.path)}: {problem.message}")
        return data if data is not None else {}

    def servers(self, create: bool) -> MutableMapping[str, Any] | None:
        found = self.data.get(self.spec.key)
        if found is None and create:
            if self.spec.toml:
                import tomlkit

                found = tomlkit.table(is_super_table=True)  # `[mcp_servers.memtui]` alone, no empty `[mcp_servers]`
            else:
                found = {}
            self.data[self.spec.key] = found
        if found is not None and not isinstance(found, MutableMapping):
            raise ConfigError(f"{shown(self.path)}: \"{self.spec.key}\" is not a table of servers; not changed")
        return found

    def entry(self, program: str, among: MutableMapping[str, Any], workspace: str | None = None,
              home: Path | None = None) -> Any:
        value = _with_workspace(self.spec.entry(program), workspace, home)
        if self.spec.toml:
            import tomlkit
            from tomlkit.items import InlineTable

            if isinstance(among, InlineTable):  # `mcp_servers = { … }`: an inline table within it
                inline = tomlkit.inline_table()
                inline.update(value)
                return inline
            table = tomlkit.table()
            for k, v in value.items():
                table[k] = v
            if any(k != NAME for k in among):
                table.add(tomlkit.nl())  # a blank line before the next server's table, as between the others
            return table
        return value

    def text(self) -> str:
        if self.spec.toml:
            import tomlkit

            return tomlkit.dumps(self.data)
        return json_text_for(self.data, self.raw).decode("utf-8") if self.data or self.raw is not None else ""

    def before(self) -> str:
        return self.raw.decode("utf-8", errors="replace") if self.raw is not None else ""


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def _with_workspace(value: dict[str, Any], workspace: str | None, home: Path | None = None) -> dict[str, Any]:
    """The entry serving `workspace` (`-w DIR` before `mcp`), for a client that starts the
    server in no particular folder (Claude Desktop); with `--home HOME` first when `home` is
    not `~/.muse` (a client starts the server without this shell's `$MUSE_HOME`); as it is
    without either."""
    named = list(home_option(home)) if home is not None else []
    if workspace is not None or named:
        value["args"] = [*named, *(["-w", workspace] if workspace is not None else []), *ARGS]
    return value


def is_memtui_entry(value: Any) -> bool:
    """A server entry this module writes (its command is some `memtui`, its arguments `mcp`
    or `-w DIR mcp`, either after a `--home HOME`)."""
    value = _plain(value)
    if not (isinstance(value, dict) and isinstance(value.get("command"), str) and Path(value["command"]).name == NAME):
        return False
    args = list(value.get("args") or [])
    if args[:1] == ["--home"] and len(args) >= 3:
        args = args[2:]
    return args == list(ARGS) or (len(args) == 3 and args[0] == "-w" and args[2:] == list(ARGS))


def install(client: Client | str, path: Path, program: str, receipts: Receipts | None = None,
            within: Path | None = None, dry_run: bool = False, workspace: str | None = None,
            home: Path | None = None) -> Change:
    """Register `program mcp` (`program -w WORKSPACE mcp` with a workspace) as the server
    `memtui` in `path` (every other key kept)."""
    spec = CONFIGS[Client(client)]
    given = path
    path, root = write_target(given, within)
    doc = _Doc(spec, path)
    made = [] if doc.raw is not None else [FILE]
    if doc.raw is None and not path.parent.is_dir():
        made.append(DIR)
    if doc.data.get(spec.key) is None:
        made.append(spec.key)
    servers = doc.servers(create=True)
    assert servers is not None
    wanted = _with_workspace(spec.entry(program), workspace, home)
    current = servers.get(NAME)
    plain = _plain(current)
    if isinstance(plain, dict) and all(plain.get(k) == v for k, v in wanted.items()):
        return Change(given, False, f"memtui is already registered with {spec.name} in {shown(given)}.")
    if current is not None and not is_memtui_entry(current):
        raise ConfigError(f"{shown(given)}: a server named \"memtui\" that memtui did not write is already there; not changed")
    verb = {(False, False): "Registered", (True, False): "Updated", (False, True): "Would register",
            (True, True): "Would update"}[(current is not None, dry_run)]
    if current is None:
        servers[NAME] = doc.entry(program, servers, workspace, home)
    else:  # the person's own keys of the entry (env, cwd, timeouts) are kept; only what memtui owns changes
        for key, value in wanted.items():
            current[key] = value
    after = doc.text()
    message = f"{verb} the memtui MCP server with {spec.name} in {shown(given)}: {' '.join([program, *wanted['args']])}"
    change = Change(given, True, message, before=doc.before(), after=after)
    if dry_run:
        return change
    write_bytes(path, root, after.encode("utf-8"), doc.raw)
    if receipts is not None and current is None:
        receipts.keep(path, PURPOSE, made)
    return change


def uninstall(client: Client | str, path: Path, receipts: Receipts | None = None,
              within: Path | None = None, dry_run: bool = False) -> Change:
    """Take the `memtui` server out of `path`, and the containers install made once empty."""
    spec = CONFIGS[Client(client)]
    given = path
    path, root = write_target(given, within)
    doc = _Doc(spec, path)
    if doc.raw is None:
        return Change(given, False, f"memtui is not registered with {spec.name} in {shown(given)} (no such file).")
    servers = doc.servers(create=False)
    if servers is None or NAME not in servers:
        return Change(given, False, f"memtui is not registered with {spec.name} in {shown(given)}.")
    if not is_memtui_entry(servers[NAME]):
        raise ConfigError(f"{shown(given)}: the server named \"memtui\" was not written by memtui; not changed")
    del servers[NAME]
    book = receipts or Receipts(None)
    made = book.made(path, PURPOSE)
    dropped = spec.key in made and not servers
    if dropped:
        del doc.data[spec.key]
    gone = FILE in made and not doc.data
    after = "" if gone else doc.text()
    if dropped and spec.toml and after.endswith("\n\n"):
        after = after.rstrip("\n") + "\n"  # the blank line tomlkit put before the table it added
    change = Change(given, True, f"{'Would remove' if dry_run else 'Removed'} the memtui MCP server from {shown(given)}.",
                    before=doc.before(), after=after)
    if dry_run:
        return change
    if gone:
        remove_file(path, root, doc.raw, DIR in made)
    else:
        write_bytes(path, root, after.encode("utf-8"), doc.raw)
    book.drop(path, PURPOSE)
    return change

