"""Team memory through git (SPEC §14): `memtui git install [--uninstall]` and the merge driver
git runs, `memtui merge-driver BASE OURS THEIRS PATH` (%O %A %B %P)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memtui.core.display import escape_name

if TYPE_CHECKING:
    from memtui.cli.main import Ctx

CONTEXT = {"help_option_names": ["-h", "--help"]}


def running_command() -> str:
    """The command that runs this memtui, for git to run later: the absolute path of the console
    script when it can be told (it lands in this clone's own .git/config, so a GUI client or
    a shell without the venv on PATH still finds it), else plain `memtui`."""
    script = Path(sys.argv[0])
    if script.name in ("memtui", "memtui.exe") and script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script.absolute()))
    found = shutil.which("memtui")
    return shlex.quote(str(Path(found).absolute())) if found else "memtui"


@click.command("merge-driver", context_settings=CONTEXT)
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path", required=False, default="")
def merge_driver(base: Path, ours: Path, theirs: Path, path: str) -> None:
    """git's merge driver for memory files (`memtui git install` sets it up): merge BASE, OURS
    and THEIRS by entry into OURS. Exit 0 when merged cleanly, 1 when conflicts are marked."""
    from memtui.core.gitmerge import run_driver

    result = run_driver(base, ours, theirs)
    name = escape_name(path or str(ours))
    if result.error:
        click.echo(f"memtui: {name}: not merged: {escape_name(result.error)}", err=True)
        sys.exit(1)
    if not result.by_entry:
        click.echo(f"memtui: {name}: merged line by line by git ({escape_name(result.reason)})", err=True)
    elif result.conflicts:
        n = result.conflicts
        click.echo(f"memtui: {name}: {n} conflict{'s' if n != 1 else ''} marked around the entries both sides changed",
                   err=True)
    sys.exit(1 if result.conflicts else 0)


@click.group("git", context_settings=CONTEXT)
def git_() -> None:
    """Share project memory with your team through git."""


@git_.command("install", context_settings=CONTEXT)
@click.option("--uninstall", is_flag=True, help="Remove the attribute line and this clone's driver config.")
@click.pass_obj
def install(obj: Ctx, uninstall: bool) -> None:
    """Merge project memory files entry by entry: adds `.muse/memory/**/*.md merge=memtui` to
    .gitattributes and the `memtui` merge driver to this clone's git config."""
    from memtui.core import gitmerge

    workspace = obj.paths.workspace
    try:
        report = gitmerge.uninstall(workspace) if uninstall else gitmerge.install(workspace, running_command())
    except (gitmerge.GitSetupError, OSError) as exc:
        message = str(exc)
        if isinstance(exc, OSError) and exc.filename and os.fspath(exc.filename) not in message:
            message = f"{os.fspath(exc.filename)}: {exc.strerror or message}"  # which file (a FIFO, /dev/zero…)
        click.echo(f"error: {escape_name(message)}", err=True)
        sys.exit(1)
    for line in report.lines:
        click.echo(escape_name(line))
    if uninstall:
        click.echo("Memory files merge line by line again (git's default).")
    else:
        click.echo("Memory files now merge entry by entry. The driver config is local to this clone: "
                   "everyone who clones the repository runs `memtui git install` once.")


def register(main: click.Group) -> None:
    main.add_command(merge_driver)
    main.add_command(git_)
