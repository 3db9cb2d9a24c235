"""`memtui hook`: run an assistant's prompt hook, install it, uninstall it (SPEC §11).
A translation only: `memtui.core.assistants` decides what each assistant reads and prints
and where its hooks live."""

from __future__ import annotations

import sys
from typing import Any

import click

from memtui.core.assistants import TARGETS, Target
from memtui.core.display import escape_text

CONTEXT = {"help_option_names": ["-h", "--help"]}
TARGET_NAMES = [str(t) for t in TARGETS]


@click.group("hook", context_settings=CONTEXT)
def hook_group() -> None:
    """Prompt hooks for Claude Code, Codex and Gemini CLI: run one, install it, uninstall it."""


def _run(obj: Any, target: Target) -> None:
    from memtui.cli.hook import main as run_hook

    sys.exit(run_hook(target, home=str(obj.paths.home)))


@hook_group.command("claude-code", context_settings=CONTEXT)
@click.pass_obj
def hook_claude_code(obj: Any) -> None:
    """Claude Code's UserPromptSubmit hook: its JSON on stdin, the injection as plain text on
    stdout (at most 10,000 characters). Always exits 0."""
    _run(obj, Target.CLAUDE_CODE)


@hook_group.command("codex", context_settings=CONTEXT)
@click.pass_obj
def hook_codex(obj: Any) -> None:
    """Codex CLI's UserPromptSubmit hook: its JSON on stdin, one JSON object with
    hookSpecificOutput.additionalContext on stdout (nothing when there is nothing to add).
    Always exits 0."""
    _run(obj, Target.CODEX)


@hook_group.command("gemini", context_settings=CONTEXT)
@click.pass_obj
def hook_gemini(obj: Any) -> None:
    """Gemini CLI's BeforeAgent hook: its JSON on stdin, JSON only on stdout (the injection in
    hookSpecificOutput.additionalContext, `{}` when there is nothing to add). Always exits 0."""
    _run(obj, Target.GEMINI)


def _change(obj: Any, target: str, install: bool, project: bool, shared: bool) -> None:
    from memtui.core.assistants.delivery import files_of, protocol
    from memtui.core.assistants.files import ConfigError, Receipts, receipts_path
    from memtui.core.assistants.hook_files import hook_command, place
    from memtui.core.assistants.hook_files import install as add
    from memtui.core.assistants.hook_files import uninstall as remove

    if project:
        obj.need_workspace()  # (your own settings file needs none: it may be installed from the home folder)
    files, name = files_of(target), protocol(target).name
    where = place(files, name, obj.paths.workspace, project, shared)
    receipts = Receipts(receipts_path(obj.paths.home))
    try:
        if install:
            change = add(files, target, where.path, hook_command(target, shared=where.shared, home=obj.paths.home), receipts, where.within)
        else:
            change = remove(files, target, where.path, receipts, where.within)
    except ConfigError as exc:
        click.echo(escape_text(f"error: {exc}"), err=True)
        sys.exit(1)
    click.echo(escape_text(change.message))
    if install and where.note:
        click.echo(escape_text(f"note: {where.note}"))
    if install:
        _say_if_off(obj)


def _say_if_off(obj: Any) -> None:
    """Memory is off by default (SPEC §4): a hook installed where it is off injects nothing
    there, so say so, and how to turn it on, rather than let a silent hook puzzle the person."""
    from memtui.core.display import display_path
    from memtui.core.settings import load_settings

    if obj.no_workspace:  # the home folder: no workspace to say it of
        click.echo("note: memory is off by default: the hook injects nothing in a project until you run "
                   "`memtui enable` there.")
        return
    settings = load_settings(obj.paths)
    if not settings.enabled:
        click.echo(escape_text(f"note: memory is off for {display_path(obj.paths.workspace)} ({settings.enabled_why}), "
                               "so the hook injects nothing there: run `memtui enable` in each project where you want "
                               "it (memory is off by default)."))


_TARGET = click.argument("target", type=click.Choice(TARGET_NAMES))
_PROJECT = click.option("--project", is_flag=True,
                        help="This project's file instead of your own: Claude Code's .claude/settings.local.json "
                             "(personal); Codex's .codex/hooks.json and Gemini's .gemini/settings.json (shared).")
_SHARED = click.option("--shared", is_flag=True,
                       help="The project's committed file (.claude/settings.json for Claude Code), with a command "
                            "that runs `memtui` from PATH rather than your installation's path.")


@hook_group.command("install", context_settings=CONTEXT)
@_TARGET
@_PROJECT
@_SHARED
@click.pass_obj
def hook_install(obj: Any, target: str, project: bool, shared: bool) -> None:
    """Add memtui's prompt hook to TARGET's settings (every other setting is kept; running it
    again changes nothing)."""
    _change(obj, target, True, project, shared)


@hook_group.command("uninstall", context_settings=CONTEXT)
@_TARGET
@_PROJECT
@_SHARED
@click.pass_obj
def hook_uninstall(obj: Any, target: str, project: bool, shared: bool) -> None:
    """Remove memtui's prompt hook from TARGET's settings."""
    _change(obj, target, False, project, shared)
