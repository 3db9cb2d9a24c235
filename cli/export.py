"""`memtui export` (SPEC §9): another tool's layout written as a sync, through the outbound
redaction (SPEC §8). Registered from `cli/main.py`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memtui.core import actions
from memtui.core.actions import ActionError
from memtui.core.display import escape_name, json_for_terminal
from memtui.core.interop import FORMATS
from memtui.core.model import LAYERS

_LAYER_CHOICES = [*(str(layer) for layer in LAYERS), "all"]
_SHOWN = ("added", "replaced", "removed", "conflict", "left")


@click.command("export", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("dest", required=False, type=click.Path(allow_dash=True))
@click.option("--layer", "layers", multiple=True, type=click.Choice(_LAYER_CHOICES),
              help="Export this layer (repeatable; `all` for every layer). Default: the project layer for "
                   "agents-md, cursor and cline (files in the repository), user and project for claude-code, "
                   "everything for jsonl.")
@click.option("--dry-run", is_flag=True, help="Show what would be added, replaced, removed, conflicting and left.")
@click.option("--no-redact", is_flag=True, help="Write secrets as they are instead of [REDACTED].")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@click.pass_obj
def export_command(obj: object, fmt: str, dest: str | None, layers: tuple[str, ...], dry_run: bool,
                   no_redact: bool, as_json: bool) -> None:
    """Write the memories in FORMAT: jsonl (the lossless backup: every memory file whole and
    every conversation row; to stdout without DEST), claude-code, agents-md, cursor or cline
    (to DEST, default where that tool reads them). Re-runnable: files memtui wrote there
    before and nobody changed are replaced; files changed since, or not written by memtui,
    are left alone and reported. Exit 0 when the destination is in step (with --dry-run:
    would be), 1 when a file is (would be) left alone or the export is refused, 2 on a
    usage error."""
    paths = obj.paths  # type: ignore[attr-defined]
    chosen = tuple(str(layer) for layer in LAYERS) if "all" in layers else tuple(dict.fromkeys(layers))
    if no_redact:
        click.echo("warning: --no-redact: secrets in memories are written as they are, not as [REDACTED].", err=True)
    store = actions.open_store(paths)
    to_stdout = fmt == "jsonl" and dest in (None, "-")
    try:
        plan = actions.export_memories(store, fmt, None if to_stdout or not dest else Path(dest), chosen or None,
                                       dry_run=dry_run, redact=False if no_redact else None, to_stdout=to_stdout)
    except ActionError as exc:
        click.echo(f"error: {escape_name(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    if plan.redacted:
        click.echo(f"{plan.redacted} secret{'s' if plan.redacted != 1 else ''} written as [REDACTED] "
                   "(--no-redact writes them as they are).", err=True)
    if to_stdout:
        text = plan.text or ""
        if dry_run:  # a dry run writes nothing, not even the backup: it says what the backup would hold
            size = len(text.encode("utf-8", "surrogatepass"))
            if as_json:
                click.echo(json.dumps({**plan.as_dict(), "bytes": size, "dry_run": True}, ensure_ascii=False, indent=2))
            else:
                click.echo(f"Would export {plan.memories} memories to standard output as a jsonl backup "
                           f"({size:,} bytes, layers: {', '.join(plan.layers)}).")
            return
        click.echo(json_for_terminal(text) if sys.stdout.isatty() else text, nl=False, color=True)
        return
    if plan.layerless:  # agents-md, cursor, cline live in the repository: they have no user layer
        n = plan.layerless
        click.echo(f"note: {fmt} has no user layer: the {n} user memor{'ies' if n != 1 else 'y'} written here come"
                   f" back as project memories on import (`memtui import {fmt} --user` brings them to your user"
                   " layer).", err=True)
    for where, note in plan.scope_notes:  # SPEC §16: what of a scope this format cannot hold
        click.echo(f"note: {escape_name(where)}: {escape_name(note)}", err=True)
    sync = plan.sync
    assert sync is not None
    if as_json:
        click.echo(json.dumps({**plan.as_dict(), "dry_run": dry_run}, ensure_ascii=False, indent=2))
    else:
        counts = sync.counts()
        verb = "Would export" if dry_run else "Exported"
        summary = ", ".join(f"{counts[a]} {a}" for a in ("added", "replaced", "unchanged", "removed", "conflict", "left")
                            if counts[a] or a in ("added", "replaced"))
        click.echo(f"{verb} {plan.memories} memories to {escape_name(str(plan.dest))}: {summary}.")
        for step in sync.steps:
            if str(step.action) in _SHOWN:
                why = f" ({step.reason})" if step.reason else ""
                click.echo(f"  {step.action}: {escape_name(str(step.path))}{escape_name(why)}")
    blocked = [s for s in sync.steps if str(s.action) in ("conflict", "left")]
    if sync.problem:
        click.echo(f"warning: {escape_name(sync.problem)}", err=True)
    # the same exit code with or without --dry-run: a file left alone is the failure either way
    if blocked:
        files = f"{len(blocked)} file{'s' if len(blocked) != 1 else ''}"
        click.echo(f"memtui: {'would leave' if dry_run else 'left'} alone {files} changed since memtui wrote it or "
                   f"not written by memtui (listed above); everything else {'would be' if dry_run else 'is'} in step.",
                   err=True)
        sys.exit(1)
