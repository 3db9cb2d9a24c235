"""The commands of SPEC §6. `memtui` with no command starts the TUI (imported only then,
so `memtui preview` never pays for Textual)."""

from __future__ import annotations

import importlib
import json
import logging
import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import NoReturn

import click

from .database import DatabaseError, MuseDB, quarantine_corrupt
from .fileio import ConflictError, atomic_write_bytes
from .injection import build_injection
from .paths import LAYERS, Paths
from .settings import SettingsError, load_settings, set_workspace_enabled
from .store import MemoryStore

CONTEXT = {"help_option_names": ["-h", "--help"]}


class Ctx:
    def __init__(self, home: str | None, workspace: str | None):
        self.paths = Paths.resolve(home=home, workspace=workspace)


def _echo_json(data) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _turn_on_hint(paths: Paths) -> str:
    return (f"Memory is off for this workspace ({paths.workspace}).\n"
            f"Turn it on with `memtui enable` (writes \"memoryEnabled\": true to {paths.workspace_settings}).")


def _open_store(paths: Paths) -> MemoryStore:
    # No Muse home yet (a fresh machine): read what there is, create nothing.
    store = MemoryStore(paths, index=paths.home.is_dir())
    store.load()
    return store


def _fail(message: str, code: int = 1) -> NoReturn:
    """Say why on stderr and stop with `code` (1: refused or nothing matched)."""
    click.echo(message, err=True)
    sys.exit(code)


def _report_problems(store: MemoryStore) -> None:
    for p in store.problems:
        click.echo(f"warning: {p.source}: {p.message}", err=True)


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
    launcher = importlib.import_module("memtui.tui.app")
    if demo:
        from .demo import make_demo

        demo_paths = make_demo()
        try:
            launcher.run(demo_paths, demo=True)
        finally:  # the sample set lives in a temporary folder: leave nothing behind
            shutil.rmtree(demo_paths.home.parent, ignore_errors=True)
    else:
        launcher.run(Paths.resolve(home=home, workspace=workspace))


@main.command(context_settings=CONTEXT)
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as one JSON object.")
@click.pass_obj
def preview(obj: Ctx, query: str, as_json: bool) -> None:
    """Show exactly what would be injected for QUERY (SPEC §5)."""
    result = build_injection(obj.paths.workspace, query, home=obj.paths.home)
    if as_json:
        # compact: the C encoder, as the candidate list can hold tens of thousands of entries
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False))
    else:
        # stdout: exactly the text; stderr: exactly one summary line (problems: `memtui status`)
        if result.text:
            click.echo(result.text)
        click.echo(result.summary(), err=True)


@main.command("list", context_settings=CONTEXT)
@click.option("--layer", type=click.Choice(LAYERS), help="Only this layer.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
@click.pass_obj
def list_(obj: Ctx, layer: str | None, as_json: bool) -> None:
    """List the memories (Muse's /memories)."""
    store = _open_store(obj.paths)
    entries = store.entries(layer)
    if as_json:
        _echo_json({"entries": [e.as_dict() for e in entries], "errors": [p.as_dict() for p in store.problems]})
        return
    current = None
    for e in entries:
        if e.layer != current:
            current = e.layer
            count = sum(1 for x in entries if x.layer == current)
            click.echo(click.style(f"{current.capitalize()} ({count})", bold=True))
        one = " ".join(e.text.split())
        tags = f"  [{', '.join(e.tags)}]" if e.tags else ""
        flag = "  (archived)" if e.archived else ""
        click.echo(f"  {e.source_ref}  {one}{tags}{flag}")
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
    paths = obj.paths
    if not load_settings(paths).enabled:
        click.echo(_turn_on_hint(paths), err=True)
        sys.exit(1)
    if not text.strip():
        raise click.UsageError("TEXT is empty")
    layer = "project" if project else "user"
    store = _open_store(paths)
    similar = store.find_similar(layer, text)
    if similar is not None:
        click.echo(f"Already remembered ({similar.source_ref}): {' '.join(similar.text.split())}")
        return
    target = paths.default_file(layer)
    rec = store.file_record(target)
    if rec is not None and (category or tags):
        have = str(rec.parsed.meta.get("type", ""))
        if category and category != have:
            click.echo(f"note: {target.name} already exists with type {have or '(none)'}; "
                       f"the new entry takes the file's frontmatter", err=True)
    try:
        entry = store.create_entry(layer, text, category=category, tags=list(tags))
    except ConflictError as exc:
        _fail(f"error: {exc}")
    where = entry.source_ref if entry else target.name
    click.echo(f"Remembered in {target} ({where}).")


@main.command(context_settings=CONTEXT)
@click.argument("keyword")
@click.option("--layer", type=click.Choice(LAYERS), help="Only this layer.")
@click.option("--yes", "-y", is_flag=True, help="Delete without asking.")
@click.pass_obj
def forget(obj: Ctx, keyword: str, layer: str | None, yes: bool) -> None:
    """Delete the memories that contain KEYWORD (after asking)."""
    paths = obj.paths
    if not load_settings(paths).enabled:
        click.echo(_turn_on_hint(paths), err=True)
        sys.exit(1)
    store = _open_store(paths)
    matches = store.matching(keyword, layer)
    if not matches:
        click.echo(f"Nothing matches {keyword!r}.", err=True)
        sys.exit(1)
    click.echo(f"{len(matches)} {'memory matches' if len(matches) == 1 else 'memories match'} {keyword!r}:")
    for e in matches:
        click.echo(f"  [{e.layer}] {e.source_ref}  {' '.join(e.text.split())}")
    if not yes:
        if not sys.stdin.isatty():
            click.echo("No terminal to confirm on; nothing deleted. Pass --yes to delete.", err=True)
            sys.exit(1)
        if not click.confirm(f"Delete {len(matches)}?", default=False):
            click.echo("Nothing deleted.")
            sys.exit(1)
    try:
        store.delete_entries(matches)
    except ConflictError as exc:
        _fail(f"error: {exc}")
    click.echo(f"Deleted {len(matches)}. Undo with `memtui undo`.")


@main.command(context_settings=CONTEXT)
@click.pass_obj
def undo(obj: Ctx) -> None:
    """Undo the last change memtui made (restores the exact previous bytes)."""
    store = _open_store(obj.paths)
    try:
        op = store.undo_last()
    except ConflictError as exc:
        _fail(f"error: {exc}")
    if op is None:
        click.echo("Nothing to undo.", err=True)
        sys.exit(1)
    click.echo(f"Undone: {op.summary}")


@main.command("export", context_settings=CONTEXT)
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True), default="-")
@click.pass_obj
def export_(obj: Ctx, file: str) -> None:
    """Write every conversation memory (they live only in muse.db) as JSON Lines."""
    db = MuseDB(obj.paths.db_path)
    try:
        records = db.export_conversations() if db.exists() else []
    except (DatabaseError, sqlite3.DatabaseError) as exc:
        click.echo(f"error: cannot read {obj.paths.db_path}: {exc}", err=True)
        sys.exit(1)
    finally:
        db.close()
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    if file == "-":
        click.echo(text, nl=False)
    else:
        atomic_write_bytes(Path(file), text.encode("utf-8"))
        click.echo(f"Exported {len(records)} conversation memories to {file}.", err=True)


@main.command("import", context_settings=CONTEXT)
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.pass_obj
def import_(obj: Ctx, file: str) -> None:
    """Add conversation memories from a JSON Lines export (ones already present are kept)."""
    records = []
    for number, line in enumerate(Path(file).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record.get("memory"), dict) or "id" not in record["memory"] or "content" not in record["memory"]:
                raise ValueError("each line needs a \"memory\" object with \"id\" and \"content\"")
        except ValueError as exc:
            click.echo(f"error: {file}:{number}: {exc}; nothing imported", err=True)
            sys.exit(2)
        records.append(record)
    db = MuseDB(obj.paths.db_path)
    try:
        added, present = db.import_conversations(records)
    except (DatabaseError, sqlite3.DatabaseError) as exc:
        click.echo(f"error: cannot write {obj.paths.db_path}: {exc}", err=True)
        sys.exit(1)
    finally:
        db.close()
    click.echo(f"Imported {added} conversation memories ({present} already present).")


@main.command(context_settings=CONTEXT)
@click.pass_obj
def repair(obj: Ctx) -> None:
    """Rebuild the search index from the Markdown files. A corrupt muse.db is moved aside
    (never deleted) after saving what conversation memories can still be read."""
    paths = obj.paths
    db = MuseDB(paths.db_path)
    health = db.health()
    if health.get("exists") and not health.get("ok"):
        salvaged: list[dict] = []
        try:
            salvaged = db.export_conversations()
        except Exception as exc:  # as much as can be read; the file itself is kept
            click.echo(f"note: conversation memories could not be read from the damaged file: {exc}", err=True)
        db.close()
        stamp_file = paths.home / f"muse.db.salvage-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        if salvaged:
            atomic_write_bytes(stamp_file, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in salvaged).encode())
        moved = quarantine_corrupt(paths.db_path)
        click.echo(f"Moved the damaged database to {moved}.")
        fresh = MuseDB(paths.db_path)
        fresh.ensure_schema()
        if salvaged:
            added, _ = fresh.import_conversations(salvaged)
            click.echo(f"Recovered {added} conversation memories (also saved to {stamp_file}).")
        fresh.close()
    else:
        db.close()
    store = MemoryStore(paths)
    store.load()
    store.db.rebuild_fts()
    n = len(store.entries("user")) + len(store.entries("project"))
    click.echo(f"Index rebuilt from the Markdown files: {n} entries.")
    store.close()


def _set_enabled(paths: Paths, value: bool) -> None:
    try:
        path = set_workspace_enabled(paths, value)
    except (SettingsError, ConflictError) as exc:
        _fail(f"error: {exc}")
    click.echo(f"Memory {'on' if value else 'off'} for {paths.workspace} (memoryEnabled: {str(value).lower()} in {path}).")


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
    paths = obj.paths
    settings = load_settings(paths)
    store = _open_store(paths)
    counts = {}
    for layer in LAYERS:
        entries = store.entries(layer)
        counts[layer] = {"active": sum(1 for e in entries if not e.archived),
                         "archived": sum(1 for e in entries if e.archived)}
    problems = list(settings.problems) + store.problems
    data = {
        "enabled": settings.enabled,
        "why": settings.enabled_why,
        "workspace": str(paths.workspace),
        "home": str(paths.home),
        "paths": {
            "user_memory": str(paths.user_root),
            "project_memory": str(paths.project_root),
            "database": str(paths.db_path),
            "global_settings": str(paths.global_settings),
            "workspace_settings": str(paths.workspace_settings),
        },
        "counts": counts,
        "errors": [p.as_dict() for p in problems],
        "index": store.db.health(),
    }
    if store.db.backup_path:
        data["index"]["backup"] = str(store.db.backup_path)
    if as_json:
        _echo_json(data)
        return
    click.echo(f"Memory: {'on' if settings.enabled else 'off'} ({settings.enabled_why})")
    if not settings.enabled:
        click.echo("  Turn it on with `memtui enable`.")
    click.echo(f"Workspace: {paths.workspace}")
    click.echo(f"Home: {paths.home}")
    for name, value in data["paths"].items():
        click.echo(f"  {name.replace('_', ' ')}: {value}")
    click.echo("Memories:")
    for layer in LAYERS:
        c = counts[layer]
        extra = f" ({c['archived']} archived)" if c["archived"] else ""
        click.echo(f"  {layer}: {c['active']}{extra}")
    idx = data["index"]
    if not idx.get("exists"):
        click.echo("Index: no database yet")
    elif idx.get("ok"):
        click.echo(f"Index: ok ({idx.get('indexed_rows', 0)} file entries, {idx.get('conversation_rows', 0)} conversation memories)")
    else:
        click.echo(f"Index: PROBLEM — {idx.get('error') or idx.get('integrity') or idx.get('fts_integrity')}")
        click.echo("  Markdown memories still work. `memtui repair` moves the damaged file aside and rebuilds the")
        click.echo("  index; `memtui export` / `memtui import` keep conversation memories (they live only in muse.db).")
    if problems:
        click.echo(f"Problems ({len(problems)}):")
        for p in problems:
            click.echo(f"  {p.source}: {p.message}")


if __name__ == "__main__":  # pragma: no cover
    main()
