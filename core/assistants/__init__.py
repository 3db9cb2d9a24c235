"""Every assistant, one memory (SPEC §11): one module per assistant's prompt hook and MCP
client config, over the one injection of §5.

- `protocol`: what a hook target reads and prints (`HookProtocol`), and fitting an
  injection into what the target accepts.
- `claude_code`, `codex`, `gemini`: each assistant's hook protocol and hook file.
- `hook_files`: adding memtui's command hook to a JSON hooks file and taking it out.
- `mcp_clients`: registering `memtui mcp` with each MCP client (JSON or TOML).
- `delivery`: the hook's whole answer for one input (parse, build, fit, record, render).
"""

from __future__ import annotations

from enum import StrEnum


class Target(StrEnum):
    """An assistant that runs `memtui hook TARGET` before every prompt."""

    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    GEMINI = "gemini"


TARGETS = tuple(Target)


class Client(StrEnum):
    """An MCP client `memtui mcp install CLIENT` registers the server with."""

    CLAUDE_DESKTOP = "claude-desktop"
    CLAUDE_CODE = "claude-code"
    CURSOR = "cursor"
    VSCODE = "vscode"
    CODEX = "codex"
    GEMINI = "gemini"


CLIENTS = tuple(Client)
