"""`memtui review`: the memories the assistant (or an import) wrote that no person has judged
yet (SPEC §12), and `accept` / `reject` for them. A translation of the review actions of
`core.actions` only."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

from memtui.core import actions
from memtui.core.display import escape_name, escape_text, json_for_terminal
from memtui.core.model import LAYERS, Entry

CONTEXT = {"help_option_names": ["-h", "--help"]}
_LAYER = click.option("--layer", type=click.Choice([str(layer) for layer in LAYERS]),
                      help="The layer of a source label that more than one layer has.")


def _fail(exc: actions.ActionError) -> NoReturn:
    click.echo(escape_text(f"error: {escape_name(str(exc))}"), err=True)
    sys.exit(exc.exit_code)


def _echo_json(data: object) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2)
    click.echo(json_for_terminal(text) if sys.stdout.isatty() else text, color=True)


def _open(obj: Any) -> Any:
    return actions.open_store(obj.paths)


def _entries(store: Any, refs: tuple[str, ...], layer: str | None) -> list[Entry]:
    found: list[Entry] = []
    for ref in refs:
        entry = actions.review_ref(store, ref, layer)
        if entry not in found:
            found.append(entry)
    return found


@click.group("review", invoke_without_command=True, context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the entries awaiting review as JSON.")
@click.pass_context
def review_(ctx: click.Context, as_json: bool) -> None:
    """What the assistant learned (source: auto) or an import brought in (source: import) and no
    person has accepted yet, newest first, with where each came from."""
    if ctx.invoked_subcommand is not None:
        return
    store = _open(ctx.obj)
    try:
        pending = actions.inbox(store)
    except actions.ActionError as exc:
        _fail(exc)
    if as_json:
        from memtui.core.settings import load_settings

        _echo_json({"count": len(pending), "require_review": load_settings(ctx.obj.paths).require_review,
                    "entries": [p.as_dict() for p in pending], "errors": [p.as_dict() for p in store.problems]})
        return
    if not pending:
        click.echo("Nothing to review: every memory the assistant or an import wrote has been accepted.")
        return
    noun = "memory awaits" if len(pending) == 1 else "memories await"
    click.echo(f"{len(pending)} {noun} review (newest first):")
    for p in pending:
        e = p.entry
        click.echo("")
        click.echo(f"  {escape_name(e.source_ref)}  [{e.layer}]")
        click.echo(f"    {escape_text(' '.join(e.text.split()))}")
        said = "" if p.provenance.kind == "import" else "from "  # its label already says "imported from"
        click.echo(f"    {said}{escape_name(p.provenance.label)}")
    click.echo("")
    click.echo("Accept with `memtui review accept REF…` (or --all); reject (a delete, undoable) with "
               "`memtui review reject REF…`.")


@review_.command("accept", context_settings=CONTEXT)
@click.argument("refs", nargs=-1, metavar="REF…")
@click.option("--all", "every", is_flag=True, help="Accept every entry awaiting review.")
@_LAYER
@click.pass_obj
def accept(obj: Any, refs: tuple[str, ...], every: bool, layer: str | None) -> None:
    """Accept entries (by id or source label): they leave the inbox until their text changes
    from outside."""
    if every == bool(refs):
        raise click.UsageError("give REF… or --all (not both)")
    store = _open(obj)
    try:
        done = actions.accept_all(store) if every else actions.accept(store, _entries(store, refs, layer))
    except actions.ActionError as exc:
        _fail(exc)
    for e in done:
        click.echo(f"Accepted {escape_name(e.source_ref)}")
    if not done:
        click.echo("Nothing was awaiting review.")
    else:
        click.echo(f"{len(done)} accepted. Undo with `memtui undo`.")


@review_.command("reject", context_settings=CONTEXT)
@click.argument("refs", nargs=-1, required=True, metavar="REF…")
@_LAYER
@click.pass_obj
def reject(obj: Any, refs: tuple[str, ...], layer: str | None) -> None:
    """Reject entries awaiting review: they are deleted as one change (`memtui undo` brings
    back the exact bytes, and the entries await review again)."""
    store = _open(obj)
    try:
        entries = _entries(store, refs, layer)
        actions.reject(store, entries)
    except actions.ActionError as exc:
        _fail(exc)
    for e in entries:
        click.echo(f"Rejected {escape_name(e.source_ref)}  {escape_text(' '.join(e.text.split()))}")
    click.echo("Deleted. Undo with `memtui undo`.")
