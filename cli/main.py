"""The commands of SPEC §6. `memtui` with no command starts the TUI (imported only then,
so `memtui preview` never pays for Textual)."""

from __future__ import annotations

import gc
import json
import logging
import os
import shlex
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import click

from memtui.cli import git as git_commands
from memtui.cli.export import export_command
from memtui.core import actions, doctor
from memtui.core.actions import ActionError
from memtui.core.assistants import TARGETS
from memtui.core.display import display_path, escape_name, escape_text, json_for_terminal
from memtui.core.interop import FORMATS
from memtui.core.model import LAYERS, Entry, Layer
from memtui.core.paths import Paths
from memtui.core.serve import build_injection
from memtui.core.store import MemoryStore

CONTEXT = {"help_option_names": ["-h", "--help"]}
TARGET_NAMES = [str(t) for t in TARGETS]


NO_WORKSPACE_NEEDED = ("status", "hook", "mcp")


class Ctx:
    def __init__(self, home: str | None, workspace: str | None, command: str | None = None):
        self.no_workspace: str | None = None
        # SPEC §1: in the home folder, what needs no workspace still works: `status` (the user
        # layer) and the installers of your own files (`hook install`, `mcp install` without --project)
        if command in NO_WORKSPACE_NEEDED and workspace is None:
            from memtui.core.paths import WorkspaceError, resolve_home

            try:
                self.paths = Paths.resolve(home=home)
            except WorkspaceError as exc:
                self.no_workspace = str(exc)
                home_path = resolve_home(home)
                self.paths = Paths(home_path, home_path)  # no workspace: only the user layer is read
            return
        self.paths = _resolve(home, workspace)

    def need_workspace(self) -> None:
        """A usage error (exit 2) when there is no workspace here and the command needs one."""
        if self.no_workspace:
            raise click.UsageError(escape_name(self.no_workspace))


def _resolve(home: str | None, workspace: str | None) -> Paths:
    """The paths, or a usage error (exit 2, nothing created) when the workspace cannot be one."""
    from memtui.core.paths import WorkspaceError

    try:
        return Paths.resolve(home=home, workspace=workspace)
    except WorkspaceError as exc:
        raise click.UsageError(escape_name(str(exc))) from None


def _echo_json(data: object, indent: int | None = 2) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    # to a terminal, the few controls JSON leaves raw (DEL, C1) become \u escapes: same value
    click.echo(json_for_terminal(text) if sys.stdout.isatty() else text, color=True)


# Everything printed for a person goes through one of these (SPEC §8): a file name, path,
# tag, summary or message is one line (`_name`: control characters, newlines and bidi
# controls shown as escapes), memory text keeps its newlines and tabs (`escape_text`).
# `--json` and the injection text written to a pipe keep the exact characters.
def _name(value: object) -> str:
    return escape_name(str(value))


def _fail(message: str, code: int = 1) -> NoReturn:
    """Say why on stderr (escaped: messages name files) and stop with `code` (1: refused
    or nothing matched)."""
    click.echo(escape_text(message), err=True)
    sys.exit(code)


def _fail_on(exc: ActionError) -> NoReturn:
    if isinstance(exc, actions.MemoryOff):  # a fixed two-line hint
        _fail(str(exc), exc.exit_code)
    _fail(f"error: {_name(exc)}", exc.exit_code)


def _report_problems(store: MemoryStore) -> None:
    for p in store.problems:
        click.echo(f"warning: {_name(p.source)}: {_name(p.message)}", err=True)


def _one_line(e: Entry) -> str:
    return escape_text(" ".join(e.text.split()))


SHOWN_CHARS = 200  # a memory quoted in a question or a confirmation: enough to know it by


def _quoted(e: Entry) -> str:
    """The memory on one line, cut to SHOWN_CHARS with how long it is (a 25,000-character
    memory is not echoed whole before `Delete it?`)."""
    line = " ".join(e.text.split())
    if len(line) <= SHOWN_CHARS:
        return escape_text(line)
    return escape_text(line[:SHOWN_CHARS - 1]) + f"… ({len(line):,} characters)"


def _ref(e: Entry) -> str:
    return _name(e.source_ref)


class _TextCommand(click.Command):
    """A command whose argument is free text: text that starts with `-` reads as an unknown
    option, so the usage error says how to pass it (after `--`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        known = {opt for param in self.params for opt in (*param.opts, *param.secondary_opts)}
        given = list(args)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            text = next((a for a in given if a.startswith("-") and a != "--" and a.split("=")[0] not in known),
                        exc.option_name)
            before = "REF " if ctx.info_name == "edit" else ""
            raise click.UsageError(f"{exc.message.rstrip('.')}. Text that starts with '-' goes after '--', as in: "
                                   f"memtui {ctx.info_name} {before}-- {shlex.quote(text)}", ctx=ctx) from None


_GLOBAL_WITH_VALUE = ("--home", "-w", "--workspace")


def hoist_global_options(args: list[str]) -> list[str]:
    """`memtui preview -w /x q` as `memtui -w /x preview q`: the global options (`--home DIR`,
    `-w DIR`, `--workspace DIR`, `--home=DIR`, `--workspace=DIR`, `-wDIR`) given after the
    command move before it. Nothing after `--` moves (it is text), and an option of a command
    is never one of these names, so no command's own option is taken."""
    i = 0
    while i < len(args) and args[i].startswith("-"):  # the options already before the command
        if args[i] == "--":
            return args
        i += 2 if args[i] in _GLOBAL_WITH_VALUE else 1
    if i >= len(args):
        return args
    before, rest, moved = args[:i], [args[i]], []
    j = i + 1
    while j < len(args):
        arg = args[j]
        if arg == "--":
            rest += args[j:]
            break
        name, eq, _ = arg.partition("=")
        if arg in _GLOBAL_WITH_VALUE and j + 1 < len(args):
            moved += args[j:j + 2]
            j += 2
            continue
        if (eq and name in ("--home", "--workspace")) or (arg.startswith("-w") and not arg.startswith("--") and len(arg) > 2):
            moved.append(arg)
        else:
            rest.append(arg)
        j += 1
    return before + moved + rest


class _Main(click.Group):
    """memtui's group: global options are taken after the command too (`hoist_global_options`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(list(args)))


@click.group(cls=_Main, invoke_without_command=True, context_settings=CONTEXT)
@click.option("--home", type=click.Path(file_okay=False), envvar=None, help="Muse home (default $MUSE_HOME or ~/.muse).")
@click.option("-w", "--workspace", type=click.Path(file_okay=False), help="Workspace directory (default: found from the current directory).")
@click.option("--demo", is_flag=True, help="Open the TUI on a bundled sample set in a temporary home.")
@click.version_option(package_name="memtui")
@click.pass_context
def main(ctx: click.Context, home: str | None, workspace: str | None, demo: bool) -> None:
    """memtui — see and control what Muse remembers and injects."""
    logging.basicConfig(level=os.environ.get("MEMTUI_LOG", "WARNING").upper(), stream=sys.stderr,
                        format="%(name)s %(levelname)s %(message)s")
    if ctx.invoked_subcommand is not None:
        if demo:
            raise click.UsageError("--demo starts the TUI; it takes no command")
        ctx.obj = Ctx(home, workspace, ctx.invoked_subcommand)
        return
    # The cyclic garbage collector stays off through the start-up (imports, first frames, the
    # prepared index's entries: objects that live as long as the app; its passes over them were
    # ≈15% of the time to the first preview); the app turns it back on, with what start-up made
    # frozen, once its first preview is painted (`tui.startup.collector_on`).
    gc.disable()
    from memtui.tui.app import run  # the one place the CLI starts the TUI: Textual loads only here

    if demo:
        from memtui.core.demo import temporary_demo

        with temporary_demo() as demo_paths:  # a temporary folder: nothing left behind, even on SIGHUP
            run(demo_paths, demo=True)
    else:
        run(_resolve(home, workspace))


@main.command(context_settings=CONTEXT)
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print the full result (every candidate) as one JSON object.")
@click.option("--target", type=click.Choice(TARGET_NAMES),
              help="What this assistant's hook gives it (cut to what the assistant keeps).")
@click.option("--now", "now", metavar="ISO", help="The time memory decay measures ages at (default: now; a time without a zone is UTC).")
@click.option("--file", "files", multiple=True, metavar="PATH",
              help="A file in context (repeatable): scoped memories (`paths:`) whose globs match it can be injected.")
@click.pass_obj
def preview(obj: Ctx, query: str, as_json: bool, target: str | None, now: str | None, files: tuple[str, ...]) -> None:
    """Show exactly what would be injected for QUERY: the text on stdout, a one-line
    summary on stderr."""
    in_context = _files_in_context(obj, files)
    at = None
    if now is not None:
        from memtui.core.retrieval import parse_now

        try:
            at = parse_now(now)
        except ValueError as exc:
            raise click.BadParameter(f"{now!r} is not an ISO 8601 time ({exc})", param_hint="--now") from exc
    if as_json:
        # compact, each candidate pre-rendered: the list can hold tens of thousands of entries
        from memtui.core.assistants.delivery import injection_json, injection_json_bytes

        if sys.stdout.isatty():
            pieces = injection_json(obj.paths.workspace, query, home=obj.paths.home, target=target, now=at,
                                    files=in_context)
            for piece in pieces:  # written as they are: never joined into one string of tens of megabytes
                click.echo(json_for_terminal(piece), nl=False, color=True)
            click.echo("", color=True)
        else:  # to a pipe: UTF-8 bytes, made as they are written
            out = sys.stdout.buffer
            for raw in injection_json_bytes(obj.paths.workspace, query, home=obj.paths.home, target=target, now=at,
                                            files=in_context):
                out.write(raw)
            out.write(b"\n")
            out.flush()
    else:
        result = build_injection(obj.paths.workspace, query, home=obj.paths.home, now=at, files=in_context)
        if target is not None:
            from memtui.core.assistants.delivery import for_target

            result = for_target(result, target)
        # stdout: exactly the text; stderr: exactly one summary line, which counts the problems
        # (files skipped, settings ignored) that `memtui status` lists.
        # On a terminal the text is shown escaped (memory text may hold escape sequences);
        # to a pipe it is the exact injection (color=True: click must not strip ANSI codes).
        if result.text:
            if sys.stdout.isatty():
                click.echo(escape_text(result.text))
            else:
                click.echo(result.text, color=True)
        line = result.summary()
        if result.errors:
            n = len(result.errors)
            line += f" · {n} problem{'s' if n != 1 else ''} (files skipped or settings ignored: `memtui status`)"
        click.echo(_name(line), err=True)


def _files_in_context(obj: Ctx, files: tuple[str, ...], hint: str = "--file") -> tuple[str, ...]:
    """`--file` paths (or `hint`'s) as the workspace-relative paths scopes match (SPEC §16); a
    path outside the workspace is a usage error."""
    from memtui.core.scope import relative_to

    out = []
    for given in files:
        rel = relative_to(obj.paths.workspace, given, cwd=Path.cwd())
        if rel is None:
            raise click.BadParameter(f"{_name(given)} is not a file of the workspace {_name(obj.paths.workspace)}",
                                     param_hint=hint)
        out.append(rel)
    return tuple(dict.fromkeys(out))


@main.command("scope", context_settings=CONTEXT)
@click.argument("path")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as one JSON object.")
@click.pass_obj
def scope_(obj: Ctx, path: str, as_json: bool) -> None:
    """For PATH (a file of the workspace), which memory and rule files each assistant would
    load (muse, claude-code, cursor, copilot, windsurf, cline, codex, gemini) and why, and
    the rules that can never fire."""
    (rel,) = _files_in_context(obj, (path,), hint="PATH")
    store = actions.open_store(obj.paths)
    try:
        answer = actions.scope_report(store, rel)
    finally:
        store.close()
    if as_json:
        _echo_json(answer.as_dict())
        return
    click.echo(_name(rel))
    marks = {"loaded": "loaded", "not_loaded": "-", "model_decides": "maybe", "manual": "manual", "ignored": "never"}
    for assistant, decisions in answer.as_dict()["assistants"].items():
        if not decisions:
            continue
        click.echo(f"\n{assistant}")
        for d in decisions:
            click.echo(f"  {marks[d['state']]:<7} {_name(d['file'])}  {_name(d['why'])}")
    if answer.never_fires:
        click.echo("\nnever fires")
        for n in answer.never_fires:
            click.echo(f"  {n.rule.assistant:<12} {_name(n.rule.file)}  {_name(n.reason)}")


@main.command("list", context_settings=CONTEXT)
@click.option("--layer", type=click.Choice([str(layer) for layer in LAYERS]), help="Only this layer.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
@click.option("--now", "now", metavar="ISO", help="The moment strength and level are judged at (SPEC §18; default: now).")
@click.pass_obj
def list_(obj: Ctx, layer: str | None, as_json: bool, now: str | None) -> None:
    """List the memories (Muse's /memories): each with its id and source, either of which
    names it to `edit` and `delete`."""
    from memtui.cli.forgetting import parse_now

    store = actions.open_store(obj.paths, layer)
    entries = store.entries(layer)
    vitals = _vitals(store, entries, parse_now(now))
    if as_json:
        _echo_json({"entries": [{**e.as_dict(), **vitals[e.id].as_dict()} if e.id in vitals else e.as_dict()
                                for e in entries], "errors": [p.as_dict() for p in store.problems]})
        return
    counts = actions.layer_counts(entries)
    current = None
    for e in entries:
        if e.layer != current:
            current = e.layer
            c = counts[current]
            extra = f", {c['archived']} archived" if c["archived"] else ""
            click.echo(click.style(f"{current.capitalize()} ({c['active']}{extra})", bold=True))
        tags = f"  [{', '.join(_name(t) for t in e.tags)}]" if e.tags else ""
        flag = ("  (superseded)" if e.superseded_by else "  (archived)") if e.archived else ""
        v = vitals.get(e.id)
        if v is not None and not e.archived:  # SPEC §18: the level (decay on), a pin, an expiry
            flag += "".join(f"  ({word})" for word in (v.level and v.level.replace("_", " "),
                                                       "pinned" if v.pinned else "", "expired" if v.expired else "") if word)
        click.echo(f"  {_name(e.id)}  {_ref(e)}  {_one_line(e)}{tags}{flag}")
    if not entries:
        click.echo("No memories." if layer is None else f"No {layer} memories.")
    _report_problems(store)


@main.command(context_settings=CONTEXT, cls=_TextCommand)
@click.argument("text")
@click.option("--project", is_flag=True, help="Remember for this workspace (.muse/memory/context.md).")
@click.option("--category", default="", help="Category for a new file: preference, knowledge, decision, pattern…")
@click.option("--tag", "tags", multiple=True, help="Tag for a new file (repeatable).")
@click.option("--expires", metavar="7d|DATE", help="Left out of the injection after this: a duration (12h, 7d, 2w) or a date.")
@click.option("--section", metavar="HEADING",
              help="Under this heading of the file (after its last entry), made at the end of the file when missing.")
@click.pass_obj
def remember(obj: Ctx, text: str, project: bool, category: str, tags: tuple[str, ...], section: str | None,
             expires: str | None) -> None:
    """Append `- TEXT` to the user (or project) memory file: at its end, or under --section."""
    if section is not None and (not section.strip() or any(c in section for c in "\r\n")):
        raise click.BadParameter("a heading is one line of text", param_hint="--section")
    expires_at = None
    if expires is not None:
        import time

        from memtui.core.forgetting import parse_expiry

        try:
            expires_at = parse_expiry(expires, time.time())
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--expires") from None
    try:
        settings = actions.require_enabled(obj.paths)
        if not text.strip():
            raise click.UsageError("TEXT is empty")
        store = actions.open_store(obj.paths)
        done = actions.remember(store, text, Layer.PROJECT if project else Layer.USER, category, tags,
                                check_enabled=False, section=section.strip() if section else None)
    except ActionError as exc:
        _fail_on(exc)
    if done.duplicate_of is not None:
        click.echo(f"Already remembered ({_ref(done.duplicate_of)}): {_one_line(done.duplicate_of)}")
        if expires_at is not None:
            click.echo(f"note: --expires not applied to it; `memtui expire {_ref(done.duplicate_of)} {expires}` does",
                       err=True)
        return
    for note in done.notes:
        click.echo(f"note: {_name(note)}", err=True)
    where = done.entry.source_ref if done.entry else (done.path.name if done.path else "")
    shown = display_path(done.path) if done.path else "muse.db"
    new_id = f", id {_name(done.entry.id)}" if done.entry else ""
    click.echo(f"Remembered in {shown} ({_name(where)}{new_id}).")
    if done.entry is not None and done.entry.section and section is None:
        # Markdown has no end to a section: an item after `## Testing` is in it, so say so
        click.echo(f"note: the file ends under the heading {_name(done.entry.section)!r}, so this memory is in that "
                   "section; `--section HEADING` puts a memory under another heading (made at the end when missing), "
                   "and `memtui edit` or your editor can move it.", err=True)
    length = len(" ".join(text.split()))
    if length > settings.max_item_chars:  # SPEC §5: the injection clips each memory's line
        click.echo(f"note: it is {length:,} characters; the injection clips each memory to "
                   f"{settings.max_item_chars} (memory.maxItemChars), so Muse sees its first "
                   f"{settings.max_item_chars - 1} and \"…\". Several shorter memories keep all of it.", err=True)
    if expires_at is not None and done.entry is not None:  # SPEC §18: the entry's own expiry
        from memtui.core.forgetting import iso
        from memtui.core.forgetting_actions import set_expiry

        try:
            set_expiry(store, [done.entry], expires_at)
        except ActionError as exc:
            _fail_on(exc)
        click.echo(f"It expires {iso(expires_at)}. (Two changes: `memtui undo` takes back the expiry, then the memory.)")


def _vitals(store: MemoryStore, entries: list[Entry], now: float | None) -> dict[str, Any]:
    """SPEC §18 per entry, only for the entries it says something of (so a store without decay,
    pins or expiries lists exactly as before)."""
    from memtui.core.forgetting_actions import entry_vitals
    from memtui.core.settings import load_settings

    try:
        found = entry_vitals(store, load_settings(store.paths), now, entries)
    except ActionError as exc:
        click.echo(f"warning: {_name(exc)}", err=True)
        return {}
    return {entry_id: v for entry_id, v in found.items() if v.as_dict()}


def _confirm(question: str, yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        _fail("No terminal to confirm on; nothing deleted. Pass --yes to delete.")
    if not click.confirm(question, default=False):
        click.echo("Nothing deleted.")
        sys.exit(1)


@main.command(context_settings=CONTEXT, cls=_TextCommand)
@click.argument("keyword")
@click.option("--layer", type=click.Choice([str(layer) for layer in LAYERS]), help="Only this layer.")
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
@click.pass_obj
def forget(obj: Ctx, keyword: str, layer: str | None, yes: bool) -> None:
    """Delete the memories that contain KEYWORD (after asking). Like `remember`, it is one of
    Muse's memory commands and refuses while memory is off; `delete REF` deletes one named
    memory at any time (clearing a repository's memories before turning memory on)."""
    try:
        actions.require_enabled(obj.paths)
    except ActionError as exc:
        if isinstance(exc, actions.MemoryOff):
            _fail(f"{exc}\nTo delete one memory while memory stays off, name it: `memtui delete REF` "
                  "(ids and sources from `memtui list`).", exc.exit_code)
        _fail_on(exc)
    store = actions.open_store(obj.paths)
    matches = actions.matching(store, keyword, layer)
    if not matches:
        _fail(f"Nothing matches {keyword!r}.")
    click.echo(f"{len(matches)} {'memory matches' if len(matches) == 1 else 'memories match'} {keyword!r}:")
    for e in matches:
        click.echo(f"  [{e.layer}] {_ref(e)}  {_quoted(e)}")
    _confirm(f"Delete {len(matches)}?", yes)
    try:
        actions.delete(store, matches)
    except ActionError as exc:
        _fail_on(exc)
    click.echo(f"Deleted {len(matches)}. Undo with `memtui undo`.")


_REF_HELP = ("REF is the entry's id or its source label (`notes.md:6`), both shown by `memtui list`. "
             "Text that starts with `-` goes after `--`.")
_LAYER = click.option("--layer", type=click.Choice([str(layer) for layer in LAYERS]),
                      help="The layer REF is in (when two layers have that source label).")


@main.command(context_settings=CONTEXT, epilog=_REF_HELP, cls=_TextCommand)
@click.argument("ref", metavar="REF")
@click.argument("text")
@_LAYER
@click.pass_obj
def edit(obj: Ctx, ref: str, text: str, layer: str | None) -> None:
    """Replace the text of the entry REF; TEXT `-` reads it from stdin. Only that entry's
    lines change; prints the entry's new id."""
    if text == "-":
        text = sys.stdin.read()
    store = actions.open_store(obj.paths)
    try:
        entry = actions.edit(store, ref, text, layer)
    except ActionError as exc:
        _fail_on(exc)
    if entry is None:
        click.echo(f"Edited {_name(ref)}. Undo with `memtui undo`.")
    else:
        click.echo(f"Edited {_ref(entry)}, now id {_name(entry.id)}. Undo with `memtui undo`.")


@main.command(context_settings=CONTEXT, epilog=_REF_HELP)
@click.argument("ref", metavar="REF")
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
@_LAYER
@click.pass_obj
def delete(obj: Ctx, ref: str, yes: bool, layer: str | None) -> None:
    """Delete the one entry REF, after asking."""
    store = actions.open_store(obj.paths)
    try:
        entry = actions.get_entry(store, ref, layer)
    except ActionError as exc:
        _fail_on(exc)
    click.echo(f"[{entry.layer}] {_ref(entry)}  {_quoted(entry)}")
    try:
        plan = actions.plan_delete(store, [entry])  # worked out once: what the note says is what is written
    except ActionError as exc:
        _fail_on(exc)
    warning = actions.delete_warning(plan)
    if warning:
        click.echo(f"note: {_name(warning)}")
    _confirm("Delete it?", yes)
    try:
        actions.delete(store, plan)
    except ActionError as exc:
        _fail_on(exc)
    click.echo("Deleted. Undo with `memtui undo`.")


@main.command(context_settings=CONTEXT, epilog=_REF_HELP)
@click.argument("old", metavar="OLD")
@click.option("--by", "new", metavar="NEW", required=True, help="The memory that replaces OLD (a REF).")
@_LAYER
@click.option("--by-layer", type=click.Choice([str(layer) for layer in LAYERS]),
              help="The layer NEW is in (when two layers have that source label).")
@click.pass_obj
def supersede(obj: Ctx, old: str, new: str, layer: str | None, by_layer: str | None) -> None:
    """Mark OLD superseded by NEW: OLD stays where it is, is no longer injected, and names NEW."""
    store = actions.open_store(obj.paths)
    try:
        first, then = actions.get_entry(store, old, layer), actions.get_entry(store, new, by_layer)
        actions.supersede(store, first, then)
    except ActionError as exc:
        _fail_on(exc)
    click.echo(f"[{first.layer}] {_ref(first)}  {_one_line(first)}")
    click.echo(f"  superseded by [{then.layer}] {_ref(then)}  {_one_line(then)}")
    click.echo("Undo with `memtui undo`.")


@main.command(context_settings=CONTEXT)
@click.argument("change_name", metavar="[CHANGE]", required=False)
@click.option("--list", "show_list", is_flag=True, help="Show the log of changes instead (newest first).")
@click.option("--json", "as_json", is_flag=True, help="With --list: print the log as JSON.")
@click.pass_obj
def undo(obj: Ctx, change_name: str | None, show_list: bool, as_json: bool) -> None:
    """Undo the newest change memtui made (restores the exact previous bytes), or the change
    CHANGE (its id from `undo --list`); it says which change before undoing it. A change
    that conflicts stays in the log marked conflicting and is passed over from then on."""
    if show_list:
        log = actions.undo_log(obj.paths)
        if as_json:
            _echo_json({"changes": [c.as_dict() for c in log]})
            return
        if not log:
            click.echo("No changes logged.")
        for c in log:
            when = datetime.fromtimestamp(c.time).strftime("%Y-%m-%d %H:%M:%S")
            flag = f"  ({c.status})"
            click.echo(f"{c.id}  {when}  {_name(c.summary)}{flag}")
        return
    store = actions.open_store(obj.paths)
    try:
        settled = actions.settle_interrupted_undos(store)
        for change, finished in settled:
            click.echo(f"Finished the undo that was interrupted: {_name(change.summary)}" if finished else
                       f"Rolled back the undo that was interrupted (a file changed meanwhile): {_name(change.summary)}; "
                       f"it stays in the log marked conflicting")
        if settled and change_name is None:
            click.echo("Nothing more undone; `memtui undo` again undoes the change before it.")
            return
        pending = actions.undo_preview(store, change_name)
        if pending is None:
            actions.undo(store)  # nothing to undo: says why (and how to go on past a conflicting change)
            _fail("Nothing to undo.")
        click.echo(f"Undoing: {_name(pending.summary)}")
        change = actions.undo(store, expected_id=pending.id, name=change_name)
    except actions.NotFound as exc:
        _fail("Nothing to undo." if str(exc) == "nothing to undo" else f"error: {_name(exc)}")
    except ActionError as exc:
        _fail_on(exc)
    click.echo(f"Undone: {_name(change.summary)}")


main.add_command(export_command)


@main.command("import", context_settings=CONTEXT)
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("path", required=False, type=click.Path())
@click.option("--project", "to_project", is_flag=True, help="Put every imported memory in the project layer.")
@click.option("--user", "to_user", is_flag=True, help="Put every imported memory in the user layer.")
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.pass_obj
def import_(obj: Ctx, fmt: str, path: str | None, to_project: bool, to_user: bool, dry_run: bool,
            as_json: bool) -> None:
    """Bring memories in from FORMAT (claude-code, agents-md, cursor, cline, jsonl), read from
    PATH or from where that tool keeps them. Near-duplicates of memories already there are
    skipped, so importing twice adds nothing; nothing is ever overwritten. Exit 1 when
    nothing was read (PATH missing, no memories there, or every record invalid)."""
    if to_project and to_user:
        raise click.UsageError("--project and --user cannot be given together: pick the one layer to import into")
    target = Layer.PROJECT if to_project else Layer.USER if to_user else None
    store = actions.open_store(obj.paths)
    try:
        report = actions.import_memories(store, fmt, Path(path) if path else None, target, dry_run)
    except ActionError as exc:
        _fail_on(exc)
    # nothing read at all (a missing source, no memories there, every record invalid): exit 1
    read_nothing = not report.added and not report.duplicates and not report.rows
    for where, note in report.scope_notes:  # SPEC §16: what of a rule's scope Muse cannot hold
        click.echo(f"note: {_name(where)}: {_name(note)}", err=True)
    if as_json:
        _echo_json(report.as_dict())
        sys.exit(1 if read_nothing else 0)
    source = path if path is not None else str(report.source)
    if read_nothing and not os.path.lexists(source):  # nothing there to read: no counts of nothing
        where = "" if path is not None else f" (where {fmt} keeps this workspace's memories; give PATH to read another)"
        _fail(f"error: nothing imported: {_name(source)} does not exist{where}.")
    _say_already_loaded(obj.paths, report)
    verb = "Would import" if dry_run else "Imported"
    click.echo(f"{verb} {len(report.added)} memories from {_name(report.source)}; skipped {len(report.duplicates)} "
               f"duplicate{'s' if len(report.duplicates) != 1 else ''} and {len(report.invalid)} invalid"
               + (f" ({len(report.boilerplate)} boilerplate line{'s' if len(report.boilerplate) != 1 else ''} "
                  "left out)." if report.boilerplate else "."))
    for f in report.files:
        click.echo(f"  {'would write' if dry_run else 'wrote'} {_name(f.real)} ({len(f.memories)})")
    if report.rows:
        click.echo(f"  {'would add' if dry_run else 'added'} {len(report.rows)} conversation memories")
    for where, reason in report.invalid:
        click.echo(f"warning: {_name(where)}: {_name(reason)}", err=True)
    if not dry_run and report.change_id:
        click.echo("Undo with `memtui undo`.")
    if read_nothing:
        where = path or _name(report.source)
        if report.invalid:
            why = f"every record in {_name(where)} was invalid (see the warnings above)"
        else:
            why = f"found no {fmt} memories in {_name(where)}"
        _fail(f"error: nothing imported: {why}.")


def _say_already_loaded(paths: Paths, report: object) -> None:
    """An import of the workspace's own instructions files (`import agents-md`) brings in text
    the assistant loads anyway: say so first, in a dry run too, since the next `memtui doctor`
    flags each such memory `already_loaded`."""
    from memtui.core.workspace_findings import INSTRUCTION_FILES

    loaded = {os.path.realpath(paths.workspace / name): name for name in INSTRUCTION_FILES}
    names: dict[str, int] = {}
    for m in getattr(report, "added", []):
        name = loaded.get(os.path.realpath(m.origin)) if m.origin else None
        if name is not None:
            names[name] = names.get(name, 0) + 1
    if not names:
        return
    n = sum(names.values())
    would = "would come" if getattr(report, "dry_run", False) else "come"
    click.echo(_name(f"note: {n} of these memories {would} from {', '.join(sorted(names))}, which the assistants already "
                     "load in this workspace: `memtui doctor` flags each `already_loaded`, and injecting them spends the "
                     "budget twice. Import them to move them into memtui (then take them out of those files), or to "
                     "export them to another tool; otherwise leave them where they are"
                     + ("." if would == "would come" else " (`memtui undo` takes this import back).")), err=True)


@main.command(context_settings=CONTEXT)
@click.pass_obj
def repair(obj: Ctx) -> None:
    """Rebuild the search index from the Markdown files, inside muse.db (never moved or
    replaced: a locked, read-only or damaged database is reported)."""
    report = doctor.repair(obj.paths)
    for line in report.lines:
        click.echo(_name(line), err=not report.ok)
    if not report.ok:
        sys.exit(1)


@main.command("doctor", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as one JSON object.")
@click.option("--fix", is_flag=True, help="Rebuild the search index when it is out of step (memories are never changed).")
@click.pass_obj
def doctor_(obj: Ctx, as_json: bool, fix: bool) -> None:
    """Find stale, duplicate, unreachable and never-injected memories, invalid files and an
    index out of step. Only reads; exit 0 when nothing is found, 1 otherwise."""
    found = doctor.findings(obj.paths)
    fixed: list[str] = []
    said: list[tuple[str, bool]] = []  # what --fix did, for a person: (line, is it an error)
    index_findings = sum(1 for f in found if f.kind == "index")
    if fix and index_findings:
        report = doctor.repair(obj.paths)
        fixed = report.lines
        if report.ok:
            found = [f for f in found if f.kind != "index"] + [
                f for f in doctor.findings(obj.paths, ("index",))]
            left = sum(1 for f in found if f.kind == "index")
            said.append((f"Fixed {index_findings - left} of {index_findings} index finding"
                         f"{'s' if index_findings != 1 else ''}: {' '.join(report.lines)}", False))
        else:
            said += [(f"Not fixed: {line}", True) for line in report.lines]
    elif fix:
        said.append(("Nothing to fix: --fix rebuilds the search index, which is in step; the doctor never "
                     "changes a memory" + (", so the findings below are yours to edit or delete." if found else "."),
                     False))
    if as_json:
        counts = {kind: sum(1 for f in found if f.kind == kind) for kind in doctor.KINDS}
        _echo_json({"workspace": str(obj.paths.workspace), "findings": [f.as_dict() for f in found],
                    "counts": counts, "fixed": fixed})
    else:
        for line, is_error in said:
            click.echo(_name(line), err=is_error)
        for f in found:
            click.echo(f"{f.kind:<16} {_name(f.source)}  {_name(f.reason)}")
        if not found:
            click.echo("No findings: every memory is valid, reachable and unique, and the index is in step.")
        else:
            click.echo(f"{len(found)} finding{'s' if len(found) != 1 else ''}.", err=True)
    sys.exit(1 if found else 0)


@main.command("history", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the newest N records.")
@click.option("--all", "every", is_flag=True, help="Every workspace's records, not only this workspace's.")
@click.pass_obj
def history_(obj: Ctx, as_json: bool, limit: int | None, every: bool) -> None:
    """This workspace's recorded injections, newest first (never the prompt or memory text)."""
    from memtui.core import history

    try:
        records = history.records(obj.paths.db_path, limit=limit, workspace=None if every else obj.paths.workspace)
    except history.HistoryError as exc:
        _fail(f"error: {exc}")
    if as_json:
        _echo_json({"records": [r.as_dict() for r in records]})
        return
    if not records:
        click.echo("No injections recorded yet (the assistants' hooks and Muse record them; preview does not).")
    for r in records:
        when = datetime.fromtimestamp(r.time_ms / 1000).strftime("%Y-%m-%d %H:%M:%S")
        what = f"{r.count} {'memory' if r.count == 1 else 'memories'} · {r.tokens} tokens"
        if r.truncated:
            what += " · truncated"
        if r.disabled_reason:
            what += f" · {r.disabled_reason.replace('_', ' ')}"
        to = f"{escape_name(r.target)} · " if r.target else ""
        click.echo(f"{when}  {to}{what} · {r.retrieval_ms:.1f} ms  {escape_name(r.workspace)}")


def _set_enabled(paths: Paths, value: bool) -> None:
    try:
        path = actions.set_enabled(paths, value)
    except ActionError as exc:
        _fail_on(exc)
    click.echo(f"Memory {'on' if value else 'off'} for {display_path(paths.workspace)} "
               f"(memoryEnabled: {str(value).lower()} in {display_path(path)}).")


@main.command(context_settings=CONTEXT)
@click.pass_obj
def enable(obj: Ctx) -> None:
    """Turn memory on for this workspace."""
    _set_enabled(obj.paths, True)


@main.command(context_settings=CONTEXT)
@click.pass_obj
def disable(obj: Ctx) -> None:
    """Turn memory off for this workspace."""
    _set_enabled(obj.paths, False)


@main.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_obj
def status(obj: Ctx, as_json: bool) -> None:
    """On/off and why, paths, counts per layer, problems, index health."""
    data = doctor.status(obj.paths, obj.no_workspace)
    if as_json:
        _echo_json(data)
        return
    enabled = data["enabled"]
    if obj.no_workspace:
        click.echo(f"Workspace: none here ({_name(obj.no_workspace)}).")
        click.echo("  The user layer follows; run `memtui status` in a project folder (or with -w DIR) for the rest.")
        click.echo(f"Memory by default: {'on' if enabled else 'off'} ({_name(data['why'])})")
    else:
        click.echo(f"Memory: {'on' if enabled else 'off'} ({_name(data['why'])})")
    if data.get("settings_unreadable"):
        click.echo("  Fix that file by hand: memtui never overwrites a settings file it cannot read.")
    elif not enabled and not obj.no_workspace:
        click.echo("  Turn it on with `memtui enable`.")
    if not obj.no_workspace:
        click.echo(f"Workspace: {_name(data['workspace'])}")
    click.echo(f"Home: {_name(data['home'])}")
    for name, value in data["paths"].items():
        click.echo(f"  {name.replace('_', ' ')}: {_name(value)}")
    click.echo("Memories:")
    for layer in [Layer.USER] if obj.no_workspace else LAYERS:
        c = data["counts"][layer]
        extra = f", {c['archived']} archived" if c["archived"] else ""
        click.echo(f"  {layer}: {c['active']}{extra}")
    retrieval = data.get("retrieval") or {}
    if retrieval.get("model"):
        click.echo(f"Retrieval: {retrieval['mode']} ({retrieval['model']['name']} {retrieval['model']['version']})")
    elif retrieval.get("reason"):
        click.echo(f"Retrieval: keyword (hybrid is set but {_name(retrieval['reason'])})")
    elif retrieval:
        click.echo(f"Retrieval: {retrieval['mode']}")
    injection = data.get("injection") or {}
    if injection.get("mode") == "focused":
        click.echo(f"Injection: focused (SPEC §15; set in the {injection.get('source')} settings)")
    private = data.get("private") or {}
    if private.get("private"):  # SPEC §18
        click.echo(f"Private: until {private['until']} (nothing is injected or recorded; `memtui private off`)")
    if data["unreviewed"]:
        waiting = data["unreviewed"]
        click.echo(f"{waiting} {'memory awaits' if waiting == 1 else 'memories await'} review: memtui review")
    idx = data["index"]
    state = idx.get("state")
    if not idx.get("exists"):
        click.echo("Index: no database yet")
    elif idx.get("ok"):
        click.echo(f"Index: ok ({idx.get('indexed_rows', 0)} Markdown entries and {idx.get('conversation_rows', 0)} "
                   "conversation memories indexed, every workspace)")
    elif state in ("locked", "read-only"):
        click.echo(f"Index: {state} ({_name(idx.get('error', ''))}); not damaged")
    else:
        click.echo(f"Index: PROBLEM — {_name(idx.get('error') or idx.get('integrity') or idx.get('fts_integrity'))}")
        click.echo("  Markdown memories still work. The database is Muse's too, so memtui does not replace it:")
        click.echo("  recover it with sqlite3's `.recover` or let Muse rebuild it, then `memtui repair` rebuilds")
        click.echo("  what memtui derives. `memtui export jsonl > backup.jsonl` saves every memory it still reads.")
    if data["errors"]:
        click.echo(f"Problems ({len(data['errors'])}):")
        for p in data["errors"]:
            click.echo(f"  {_name(p['source'])}: {_name(p['message'])}")


from memtui.cli.assistants import hook_group  # noqa: E402  (groups in their own modules, registered here)
from memtui.cli.mcp import mcp_group  # noqa: E402

main.add_command(hook_group)
main.add_command(mcp_group)
git_commands.register(main)

from memtui.cli.review import review_ as _review  # noqa: E402  (its own module: a group of three commands)

main.add_command(_review)

from memtui.cli.forgetting import COMMANDS as _forgetting  # noqa: E402  (SPEC §18: pin, unpin, expire, forecast, private)

for _command in _forgetting:
    main.add_command(_command)

if __name__ == "__main__":  # pragma: no cover  (through the console script's entry: the hook's route first)
    from memtui.cli.entry import main as entry

    entry()
