"""The commands of SPEC §6. `memtui` with no command starts the TUI (imported only then,
so `memtui preview` never pays for Textual)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from datetime import datetime
from pathlib import Path
from typing import NoReturn

import click

from memtui.cli.export import export_command
from memtui.core import actions, doctor
from memtui.core.actions import ActionError
from memtui.core.display import display_path, escape_name, escape_text, json_for_terminal
from memtui.core.injection import build_injection
from memtui.core.model import LAYERS, Entry, Layer
from memtui.core.paths import Paths
from memtui.core.store import MemoryStore

CONTEXT = {"help_option_names": ["-h", "--help"]}


class Ctx:
    def __init__(self, home: str | None, workspace: str | None):
        self.paths = Paths.resolve(home=home, workspace=workspace)


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


def _ref(e: Entry) -> str:
    return _name(e.source_ref)


@click.group(invoke_without_command=True, context_settings=CONTEXT)
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
        ctx.obj = Ctx(home, workspace)
        return
    from memtui.tui.app import run  # the one place the CLI starts the TUI: Textual loads only here

    if demo:
        from memtui.core.demo import make_demo

        demo_paths = make_demo()
        try:
            run(demo_paths, demo=True)
        finally:  # the sample set lives in a temporary folder: leave nothing behind
            shutil.rmtree(demo_paths.home.parent, ignore_errors=True)
    else:
        run(Paths.resolve(home=home, workspace=workspace))


@main.command(context_settings=CONTEXT)
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print the full result (every candidate) as one JSON object.")
@click.pass_obj
def preview(obj: Ctx, query: str, as_json: bool) -> None:
    """Show exactly what would be injected for QUERY: the text on stdout, a one-line
    summary on stderr."""
    result = build_injection(obj.paths.workspace, query, home=obj.paths.home)
    if as_json:
        # compact, each candidate pre-rendered: the list can hold tens of thousands of entries
        text = result.to_json()
        click.echo(json_for_terminal(text) if sys.stdout.isatty() else text, color=True)
    else:
        # stdout: exactly the text; stderr: exactly one summary line (problems: `memtui status`).
        # On a terminal the text is shown escaped (memory text may hold escape sequences);
        # to a pipe it is the exact injection (color=True: click must not strip ANSI codes).
        if result.text:
            if sys.stdout.isatty():
                click.echo(escape_text(result.text))
            else:
                click.echo(result.text, color=True)
        click.echo(_name(result.summary()), err=True)


@main.command("list", context_settings=CONTEXT)
@click.option("--layer", type=click.Choice([str(layer) for layer in LAYERS]), help="Only this layer.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
@click.pass_obj
def list_(obj: Ctx, layer: str | None, as_json: bool) -> None:
    """List the memories (Muse's /memories)."""
    store = actions.open_store(obj.paths)
    entries = store.entries(layer)
    if as_json:
        _echo_json({"entries": [e.as_dict() for e in entries], "errors": [p.as_dict() for p in store.problems]})
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
        flag = "  (archived)" if e.archived else ""
        click.echo(f"  {_ref(e)}  {_one_line(e)}{tags}{flag}")
    if not entries:
        click.echo("No memories." if layer is None else f"No {layer} memories.")
    _report_problems(store)


@main.command(context_settings=CONTEXT)
@click.argument("text")
@click.option("--project", is_flag=True, help="Remember for this workspace (.muse/memory/context.md).")
@click.option("--category", default="", help="Category for a new file: preference, knowledge, decision, pattern…")
@click.option("--tag", "tags", multiple=True, help="Tag for a new file (repeatable).")
@click.pass_obj
def remember(obj: Ctx, text: str, project: bool, category: str, tags: tuple[str, ...]) -> None:
    """Append `- TEXT` to the user (or project) memory file."""
    try:
        actions.require_enabled(obj.paths)
        if not text.strip():
            raise click.UsageError("TEXT is empty")
        store = actions.open_store(obj.paths)
        done = actions.remember(store, text, Layer.PROJECT if project else Layer.USER, category, tags,
                                check_enabled=False)
    except ActionError as exc:
        _fail_on(exc)
    if done.duplicate_of is not None:
        click.echo(f"Already remembered ({_ref(done.duplicate_of)}): {_one_line(done.duplicate_of)}")
        return
    for note in done.notes:
        click.echo(f"note: {_name(note)}", err=True)
    where = done.entry.source_ref if done.entry else (done.path.name if done.path else "")
    shown = display_path(done.path) if done.path else "muse.db"
    click.echo(f"Remembered in {shown} ({_name(where)}).")


def _confirm(question: str, yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        _fail("No terminal to confirm on; nothing deleted. Pass --yes to delete.")
    if not click.confirm(question, default=False):
        click.echo("Nothing deleted.")
        sys.exit(1)


@main.command(context_settings=CONTEXT)
@click.argument("keyword")
@click.option("--layer", type=click.Choice([str(layer) for layer in LAYERS]), help="Only this layer.")
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
@click.pass_obj
def forget(obj: Ctx, keyword: str, layer: str | None, yes: bool) -> None:
    """Delete the memories that contain KEYWORD (after asking)."""
    try:
        actions.require_enabled(obj.paths)
    except ActionError as exc:
        _fail_on(exc)
    store = actions.open_store(obj.paths)
    matches = actions.matching(store, keyword, layer)
    if not matches:
        _fail(f"Nothing matches {keyword!r}.")
    click.echo(f"{len(matches)} {'memory matches' if len(matches) == 1 else 'memories match'} {keyword!r}:")
    for e in matches:
        click.echo(f"  [{e.layer}] {_ref(e)}  {_one_line(e)}")
    _confirm(f"Delete {len(matches)}?", yes)
    try:
        actions.delete(store, matches)
    except ActionError as exc:
        _fail_on(exc)
    click.echo(f"Deleted {len(matches)}. Undo with `memtui undo`.")


@main.command(context_settings=CONTEXT)
@click.argument("entry_id", metavar="ID")
@click.argument("text")
@click.pass_obj
def edit(obj: Ctx, entry_id: str, text: str) -> None:
    """Replace the text of the entry ID (from `list --json`); TEXT `-` reads it from stdin.
    Only that entry's lines change."""
    if text == "-":
        text = sys.stdin.read()
    store = actions.open_store(obj.paths)
    try:
        entry = actions.edit(store, entry_id, text)
    except ActionError as exc:
        _fail_on(exc)
    where = entry.source_ref if entry else entry_id
    click.echo(f"Edited {_name(where)}. Undo with `memtui undo`.")


@main.command(context_settings=CONTEXT)
@click.argument("entry_id", metavar="ID")
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
@click.pass_obj
def delete(obj: Ctx, entry_id: str, yes: bool) -> None:
    """Delete the one entry ID (ids from `list --json`), after asking."""
    store = actions.open_store(obj.paths)
    try:
        entry = actions.get_entry(store, entry_id)
    except ActionError as exc:
        _fail_on(exc)
    click.echo(f"[{entry.layer}] {_ref(entry)}  {_one_line(entry)}")
    warning = actions.delete_warning(store, entry)
    if warning:
        click.echo(f"note: {_name(warning)}")
    _confirm("Delete it?", yes)
    try:
        actions.delete(store, [entry])
    except ActionError as exc:
        _fail_on(exc)
    click.echo("Deleted. Undo with `memtui undo`.")


@main.command(context_settings=CONTEXT)
@click.option("--list", "show_list", is_flag=True, help="Show the log of changes instead (newest first).")
@click.option("--json", "as_json", is_flag=True, help="With --list: print the log as JSON.")
@click.pass_obj
def undo(obj: Ctx, show_list: bool, as_json: bool) -> None:
    """Undo the newest change memtui made (restores the exact previous bytes); it says
    which change before undoing it."""
    store = actions.open_store(obj.paths)
    if show_list:
        log = actions.undo_log(store)
        if as_json:
            _echo_json({"changes": [c.as_dict() for c in log]})
            return
        if not log:
            click.echo("No changes logged.")
        for c in log:
            when = datetime.fromtimestamp(c.time).strftime("%Y-%m-%d %H:%M:%S")
            flag = "  (undone)" if c.undone else ""
            click.echo(f"{when}  {_name(c.summary)}{flag}")
        return
    pending = actions.undo_preview(store)
    if pending is None:
        _fail("Nothing to undo.")
    click.echo(f"Undoing: {_name(pending.summary)}")
    try:
        change = actions.undo(store, expected_id=pending.id)
    except ActionError as exc:
        _fail_on(exc)
    click.echo(f"Undone: {_name(change.summary)}")


FORMATS = ("claude-code", "agents-md", "cursor", "cline", "jsonl")


main.add_command(export_command)


@main.command("import", context_settings=CONTEXT)
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("path", required=False, type=click.Path())
@click.option("--project", "target", flag_value="project", help="Put every imported memory in the project layer.")
@click.option("--user", "target", flag_value="user", help="Put every imported memory in the user layer.")
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.pass_obj
def import_(obj: Ctx, fmt: str, path: str | None, target: str | None, dry_run: bool, as_json: bool) -> None:
    """Bring memories in from FORMAT (claude-code, agents-md, cursor, cline, jsonl), read from
    PATH or from where that tool keeps them. Near-duplicates of memories already there are
    skipped, so importing twice adds nothing; nothing is ever overwritten."""
    store = actions.open_store(obj.paths)
    try:
        report = actions.import_memories(store, fmt, Path(path) if path else None, target, dry_run)
    except ActionError as exc:
        _fail_on(exc)
    if as_json:
        _echo_json(report.as_dict())
        return
    verb = "Would import" if dry_run else "Imported"
    click.echo(f"{verb} {len(report.added)} memories from {_name(report.source)}; skipped {len(report.duplicates)} "
               f"duplicate{'s' if len(report.duplicates) != 1 else ''} and {len(report.invalid)} invalid"
               + (f" ({len(report.boilerplate)} boilerplate line{'s' if len(report.boilerplate) != 1 else ''} "
                  "left out)." if report.boilerplate else "."))
    for f in report.files:
        click.echo(f"  {'would write' if dry_run else 'wrote'} {_name(f.path)} ({len(f.memories)})")
    if report.rows:
        click.echo(f"  {'would add' if dry_run else 'added'} {len(report.rows)} conversation memories")
    for where, reason in report.invalid:
        click.echo(f"warning: {_name(where)}: {_name(reason)}", err=True)
    if not dry_run and report.change_id:
        click.echo("Undo with `memtui undo`.")


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
    if fix and any(f.kind == "index" for f in found):
        report = doctor.repair(obj.paths)
        fixed = report.lines
        if report.ok:
            found = [f for f in found if f.kind != "index"] + [
                f for f in doctor.findings(obj.paths, ("index",))]
    if as_json:
        counts = {kind: sum(1 for f in found if f.kind == kind) for kind in doctor.KINDS}
        _echo_json({"workspace": str(obj.paths.workspace), "findings": [f.as_dict() for f in found],
                    "counts": counts, "fixed": fixed})
    else:
        for line in fixed:
            click.echo(_name(line))
        for f in found:
            click.echo(f"{f.kind:<16} {_name(f.source)}  {_name(f.reason)}")
        if not found:
            click.echo("No findings: every memory is valid, reachable and unique, and the index is in step.")
        else:
            click.echo(f"{len(found)} finding{'s' if len(found) != 1 else ''}.", err=True)
    sys.exit(1 if found else 0)


@main.command("mcp", context_settings=CONTEXT)
@click.pass_obj
def mcp_(obj: Ctx) -> None:
    """Serve the memories over the Model Context Protocol on stdio (tools: search_memories,
    list_memories, preview_injection, remember, forget)."""
    from memtui.cli.mcp import serve

    serve(obj.paths)


@main.group("hook", context_settings=CONTEXT)
def hook_() -> None:
    """Claude Code's UserPromptSubmit hook: run it, install it, uninstall it."""


@hook_.command("claude-code", context_settings=CONTEXT)
@click.pass_obj
def hook_claude_code(obj: Ctx) -> None:
    """Run as Claude Code's hook: its JSON on stdin, the injection on stdout. Always exits 0."""
    from memtui.cli.hook import main as run_hook

    sys.exit(run_hook(home=str(obj.paths.home)))


def _hook_settings(obj: Ctx, install: bool, project: bool) -> None:
    from memtui.core import hook_settings as hs

    path = hs.project_settings_path(obj.paths.workspace) if project else hs.user_settings_path()
    receipts = hs.receipts_path(obj.paths.home)
    try:
        change = hs.install(path, receipts=receipts) if install else hs.uninstall(path, receipts=receipts)
    except hs.HookSettingsError as exc:
        _fail(f"error: {exc}")
    click.echo(change.message)


_PROJECT = click.option("--project", is_flag=True, help="The project's .claude/settings.json instead of ~/.claude/settings.json.")
_TARGET = click.argument("target", type=click.Choice(["claude-code"]))


@hook_.command("install", context_settings=CONTEXT)
@_TARGET
@_PROJECT
@click.pass_obj
def hook_install(obj: Ctx, target: str, project: bool) -> None:
    """Add the hook to Claude Code's settings.json (every other setting is kept)."""
    _hook_settings(obj, True, project)


@hook_.command("uninstall", context_settings=CONTEXT)
@_TARGET
@_PROJECT
@click.pass_obj
def hook_uninstall(obj: Ctx, target: str, project: bool) -> None:
    """Remove the hook from Claude Code's settings.json."""
    _hook_settings(obj, False, project)


@main.command("history", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the newest N records.")
@click.option("--all", "every", is_flag=True, help="Every workspace's records, not only this workspace's.")
@click.pass_obj
def history_(obj: Ctx, as_json: bool, limit: int | None, every: bool) -> None:
    """This workspace's recorded injections, newest first (never the prompt or memory text)."""
    from memtui.cli.hook import printable
    from memtui.core import history

    try:
        records = history.records(obj.paths.db_path, limit=limit, workspace=None if every else obj.paths.workspace)
    except history.HistoryError as exc:
        _fail(f"error: {exc}")
    if as_json:
        _echo_json({"records": [r.as_dict() for r in records]})
        return
    if not records:
        click.echo("No injections recorded yet (the Claude Code hook and Muse record them; preview does not).")
    for r in records:
        when = datetime.fromtimestamp(r.time_ms / 1000).strftime("%Y-%m-%d %H:%M:%S")
        what = f"{r.count} {'memory' if r.count == 1 else 'memories'} · {r.tokens} tokens"
        if r.truncated:
            what += " · truncated"
        if r.disabled_reason:
            what += f" · {r.disabled_reason.replace('_', ' ')}"
        click.echo(f"{when}  {what} · {r.retrieval_ms:.1f} ms  {printable(r.workspace)}")


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
    data = doctor.status(obj.paths)
    if as_json:
        _echo_json(data)
        return
    enabled = data["enabled"]
    click.echo(f"Memory: {'on' if enabled else 'off'} ({_name(data['why'])})")
    if not enabled:
        click.echo("  Turn it on with `memtui enable`.")
    click.echo(f"Workspace: {_name(data['workspace'])}")
    click.echo(f"Home: {_name(data['home'])}")
    for name, value in data["paths"].items():
        click.echo(f"  {name.replace('_', ' ')}: {_name(value)}")
    click.echo("Memories:")
    for layer in LAYERS:
        c = data["counts"][layer]
        extra = f", {c['archived']} archived" if c["archived"] else ""
        click.echo(f"  {layer}: {c['active']}{extra}")
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
        click.echo("  Markdown memories still work. `memtui repair` rebuilds what memtui derives;")
        click.echo("  `memtui export jsonl > backup.jsonl` saves every memory while the database still reads.")
    if data["errors"]:
        click.echo(f"Problems ({len(data['errors'])}):")
        for p in data["errors"]:
            click.echo(f"  {_name(p['source'])}: {_name(p['message'])}")


if __name__ == "__main__":  # pragma: no cover
    main()
