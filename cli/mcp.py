"""`memtui mcp`: the memories served over the Model Context Protocol (stdio), with the
official `mcp` SDK. A translation only: every tool calls the action the CLI calls, under the
same rules (the near-duplicate check, forget by exact id).

Every tool is registered through `tool` below, which puts it behind the outbound gate
(core/outbound.py): while memory is off for the workspace every tool answers only "memory is
off", and every result, error messages included, has its secrets redacted. `forget` deletes
only this workspace's memories (project and conversation), never the person's user layer."""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, Literal

import click

from memtui.core import actions, outbound
from memtui.core.assistants import CLIENTS
from memtui.core.model import Entry, Layer
from memtui.core.paths import Paths
from memtui.core.serve import inject_from_store
from memtui.core.settings import load_settings
from memtui.core.store import MemoryStore

INSTRUCTIONS = """\
memtui holds the memories of the Muse coding assistant in three layers: `user` (preferences that
follow the person everywhere), `project` (knowledge about this workspace) and `conversation`
(notes kept from chats). Search or list them before asking the person something they may have told
you already; remember durable preferences and project facts (one short, self-contained sentence
each); forget by the exact id a search or list returned (project and conversation memories of this
workspace only). `preview_injection` shows exactly what would be added to the system prompt for a
message. Secrets in memories are shown as [REDACTED]; while memory is off for the workspace every
tool answers only "memory is off"."""

LayerName = Literal["user", "project", "conversation"]

# What a lone surrogate (`"\ud800"`: valid JSON, not text) of a request becomes on its way in
# (`_text_only_stdin`): U+FFFF, a noncharacter, which no text a tool is given holds either;
# a tool refuses an argument that holds it, naming the argument, before doing anything.
NOT_TEXT = "\uffff"


def _not_text(kwargs: dict[str, Any]) -> str | None:
    """The name of the first argument holding `NOT_TEXT` anywhere in it (a string, or a
    string of a list or object at any depth, keys included). Iterative."""
    for name, value in kwargs.items():
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                if NOT_TEXT in item:
                    return name
            elif isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            elif isinstance(item, (list, tuple)):
                stack.extend(item)
    return None


def _entry(e: Entry, score: float | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"id": e.id, "layer": str(e.layer), "source": e.source_ref, "text": e.text}
    if e.section:
        data["section"] = e.section
    if e.tags:
        data["tags"] = list(e.tags)
    if e.importance != "normal":
        data["importance"] = str(e.importance)
    if e.archived:
        data["status"] = "archived"
    if score is not None:
        data["score"] = round(score, 4)
    return data


def build_server(paths: Paths) -> Any:
    """The MCP server for one home and workspace (the store is loaded at the first call and
    brought up to date before every call, so changes made elsewhere are seen)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent

    store = MemoryStore(paths, index=paths.home.is_dir())
    loading = threading.Lock()
    server: Any = MCPServer("memtui", instructions=INSTRUCTIONS)

    def fresh() -> MemoryStore:
        """The store, loaded at the first tool call (a client's handshake does not wait for
        tens of thousands of memories) and brought up to date before each one after."""
        with loading:
            if store.loaded:
                store.reload()
            else:
                store.load()
        return store

    gate = outbound.Outbound()

    def fail(exc: actions.ActionError) -> ToolError:
        return ToolError(str(exc))

    def tool(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        """Register `fn` as a tool behind the outbound gate (the only way tools are added)."""

        @functools.wraps(fn)
        def gated(*args: Any, **kwargs: Any) -> Any:
            settings = load_settings(paths)
            try:
                gate.check(settings)
                bad = _not_text(kwargs)
                if bad is not None:
                    raise ToolError(f"`{bad}` holds a lone surrogate (a \\ud800-\\udfff escape without its pair) "
                                    "or U+FFFF, which is not text; nothing was done")
                answer = fn(*args, **kwargs)
            except outbound.MemoryOff as exc:  # the whole answer, without the SDK's "Error executing tool"
                return CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
            except ToolError as exc:  # (any other exception's text the SDK keeps on the server)
                raise ToolError(gate.text(str(exc), settings)) from None
            return gate.result(answer, settings)

        # the docstring as the client shows it: without the source's indentation
        server.tool(description=inspect.cleandoc(fn.__doc__ or ""))(gated)
        return gated

    @tool
    def search_memories(query: str, layer: LayerName | None = None, limit: int = 20) -> dict[str, Any]:
        """Search the memories for QUERY (words or a phrase, any language). Returns the best
        matches first with their `id` (use it with `forget`), `layer`, `source` (file:line or
        conversation) and `text`. `layer` narrows to user, project or conversation memories."""
        found = actions.search(fresh(), query, layer, max(1, min(limit, 200)))
        return {"memories": [_entry(e, score) for e, score in found], "count": len(found)}

    @tool
    def list_memories(layer: LayerName | None = None, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        """List the memories in order (user, project, conversation), `limit` at a time from
        `offset`. Each has an `id`, `layer`, `source` and `text`; `total` is how many there are."""
        entries = fresh().entries(layer)
        page = entries[max(0, offset): max(0, offset) + max(1, min(limit, 500))]
        return {"memories": [_entry(e) for e in page], "total": len(entries), "offset": max(0, offset)}

    @tool
    def preview_injection(message: str, files: list[str] | None = None) -> dict[str, Any]:
        """Show exactly what memory would be added to the system prompt before MESSAGE: the
        `text` (empty when nothing is injected), how many memories, the token estimate, whether
        it was truncated, why nothing was injected (`disabled_reason`, e.g. low_relevance) and
        the source of each injected memory. `files`: the workspace files being worked on
        (relative to the workspace root); memories scoped to files (`paths:`) need one of theirs."""
        from memtui.core.scope import relative_to

        s = fresh()
        in_context = tuple(rel for f in files or () if (rel := relative_to(paths.workspace, f)) is not None)
        result = inject_from_store(s, load_settings(paths), message, files=in_context)
        included = [c.entry.source_ref for c in result.iter_candidates() if c.status == "included"]
        return {"text": result.text, "count": result.count, "tokens": result.tokens,
                "budget": result.budget.get("total"),
                "truncated": result.truncated, "disabled_reason": result.disabled_reason, "injected": included}

    @tool
    def remember(text: str, layer: Literal["user", "project"] = "user", category: str = "") -> dict[str, Any]:
        """Remember one durable fact or preference: TEXT should be a short self-contained
        sentence. `layer` "user" keeps it for every workspace (personal preferences), "project"
        for this workspace only (facts about the code base). Refused while memory is off for
        the workspace; a near-duplicate of an existing memory is not added again (the existing
        one is returned). It is kept as written by the assistant (learned.md, `source: auto`),
        and the person may hold such memories back from the prompt until they have read them."""
        try:
            done = actions.remember(fresh(), text, Layer(layer), category, by_model=True)
        except actions.ActionError as exc:
            raise fail(exc) from None
        if done.duplicate_of is not None:
            return {"added": False, "reason": "already remembered", "memory": _entry(done.duplicate_of)}
        return {"added": True, "memory": _entry(done.entry) if done.entry else None,
                "file": str(done.path) if done.path else None}

    @tool
    def forget(id: str) -> dict[str, Any]:
        """Delete the one memory with this exact `id` (from search_memories or list_memories).
        Only this workspace's memories (project and conversation) can be forgotten here; user
        memories are the person's to delete. The person can undo it with `memtui undo`."""
        s = fresh()
        try:
            entry = actions.get_entry(s, id)
            refusal = outbound.why_not_forget(entry, paths)
            if refusal:
                raise actions.Refused(refusal)
            actions.delete(s, [entry])
        except actions.ActionError as exc:
            raise fail(exc) from None
        return {"deleted": _entry(entry), "undo": "memtui undo"}

    return server


def serve(paths: Paths) -> None:
    _text_only_stdin()
    build_server(paths).run("stdio")


def _text_only_stdin() -> None:
    """Put a pipe in place of stdin that passes each request line on with its lone
    surrogates (`"\\ud800"`, valid JSON but not text) written as `NOT_TEXT`: the SDK's parser
    refuses such a line and leaves the request without any reply; this way it gets one, and
    the tool refuses the argument by name (SPEC §8)."""
    import os

    from memtui.core.jsondata import replace_lone_surrogates

    try:
        source = os.dup(0)
        read_end, write_end = os.pipe()
        os.dup2(read_end, 0)
        os.close(read_end)
    except OSError:  # no stdin to speak of: the SDK finds out itself
        return

    def pump() -> None:
        try:
            with os.fdopen(source, "rb") as lines:
                for line in lines:
                    data = memoryview(replace_lone_surrogates(line, b"\\uffff"))
                    while data:  # into the pipe (no file is written)
                        data = data[os.write(write_end, data):]
        except OSError:  # the server is gone
            pass
        finally:
            os.close(write_end)  # the SDK reads the end of the requests

    threading.Thread(target=pump, name="mcp-stdin", daemon=True).start()


# ---------------------------------------------------------------------- the `memtui mcp` group
_CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group("mcp", invoke_without_command=True, context_settings=_CONTEXT)
@click.pass_context
def mcp_group(ctx: click.Context) -> None:
    """Serve the memories over the Model Context Protocol on stdio (tools: search_memories,
    list_memories, preview_injection, remember, forget). `memtui mcp install CLIENT`
    registers this server with an MCP client."""
    if ctx.invoked_subcommand is None:
        ctx.obj.need_workspace()
        serve(ctx.obj.paths)


@mcp_group.command("serve", context_settings=_CONTEXT)
@click.pass_obj
def mcp_serve(obj: Any) -> None:
    """Serve over stdio (what plain `memtui mcp` does)."""
    obj.need_workspace()
    serve(obj.paths)


def _register(obj: Any, client: str, install: bool, project: bool, dry_run: bool) -> None:
    from memtui.core.assistants import mcp_clients
    from memtui.core.assistants.files import ConfigError, Receipts, receipts_path
    from memtui.core.assistants.hook_files import find_memtui
    from memtui.core.display import escape_text

    def fail(message: str) -> None:
        click.echo(escape_text(f"error: {message}"), err=True)
        raise SystemExit(1)

    if project or (install and client == "claude-desktop"):  # a project's file, or the workspace to serve
        obj.need_workspace()
    receipts = Receipts(receipts_path(obj.paths.home))
    within = obj.paths.workspace if project else None
    try:
        path = mcp_clients.config_path(client, project, obj.paths.workspace)
        if install:
            # a project's file is committed: plain `memtui`, found on each person's PATH (as
            # `hook install --project --shared` writes); the person's own file names this installation
            program = "memtui" if project else find_memtui()
            if program is None:
                fail("cannot find the memtui program to register (no `memtui` next to this Python or on PATH)")
                return
            # Claude Desktop starts the server in no particular folder: it serves this workspace
            workspace = str(obj.paths.workspace) if client == "claude-desktop" else None
            # a project's committed file serves each person's own home; the person's own file, this one
            home = None if project else obj.paths.home
            change = mcp_clients.install(client, path, program, receipts, within, dry_run, workspace, home)
        else:
            change = mcp_clients.uninstall(client, path, receipts, within, dry_run)
    except ConfigError as exc:
        if client == "claude-code" and not project and install:  # ~/.claude.json is Claude Code's own, often large
            exc = ConfigError(f"{exc}\nClaude Code can register it itself: claude mcp add --scope user memtui -- "
                              f"{find_memtui() or 'memtui'} mcp")
        fail(str(exc))
        return
    if dry_run:
        click.echo(escape_text(change.diff()) if change.changed else "", nl=False)
        click.echo(escape_text(change.message))
    else:
        click.echo(escape_text(change.message))


_CLIENT = click.argument("client", metavar="CLIENT", type=click.Choice([str(c) for c in CLIENTS]))
_CLIENTS_HELP = f"CLIENT is one of: {', '.join(str(c) for c in CLIENTS)}."
_MCP_PROJECT = click.option("--project", is_flag=True, help="The project's config file (.mcp.json, .cursor/mcp.json, "
                            ".vscode/mcp.json, .codex/config.toml, .gemini/settings.json) instead of your own.")
_DRY_RUN = click.option("--dry-run", is_flag=True, help="Show the change as a diff; write nothing.")


@mcp_group.command("install", context_settings=_CONTEXT, epilog=_CLIENTS_HELP)
@_CLIENT
@_MCP_PROJECT
@_DRY_RUN
@click.pass_obj
def mcp_install(obj: Any, client: str, project: bool, dry_run: bool) -> None:
    """Register this memtui's MCP server with CLIENT: by its absolute path in your own config,
    as plain `memtui` (found on PATH) in a project's committed one (--project); for
    claude-desktop with `-w` naming this workspace. Every other key of the client's config
    is kept, and running it again changes nothing."""
    _register(obj, client, True, project, dry_run)


@mcp_group.command("uninstall", context_settings=_CONTEXT, epilog=_CLIENTS_HELP)
@_CLIENT
@_MCP_PROJECT
@_DRY_RUN
@click.pass_obj
def mcp_uninstall(obj: Any, client: str, project: bool, dry_run: bool) -> None:
    """Remove memtui's MCP server from CLIENT's config."""
    _register(obj, client, False, project, dry_run)
