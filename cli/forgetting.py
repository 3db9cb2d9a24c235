"""SPEC §18 from the command line: `pin`, `unpin`, `expire`, `forecast` and `private`. A
translation of `core.forgetting_actions` only."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, NoReturn

import click

from memtui.core import actions
from memtui.core import forgetting as fg
from memtui.core import forgetting_actions as fa
from memtui.core.display import display_path, escape_name, escape_text, json_for_terminal
from memtui.core.model import LAYERS, Entry
from memtui.core.settings import load_settings

CONTEXT = {"help_option_names": ["-h", "--help"]}
_LAYER = click.option("--layer", type=click.Choice([str(layer) for layer in LAYERS]),
                      help="The layer of a source label that more than one layer has.")
_NOW = click.option("--now", "now", metavar="ISO", help="The moment to judge at (default: now; a time without a zone is UTC).")


def _fail(message: str, code: int = 1) -> NoReturn:
    click.echo(escape_text(f"error: {escape_name(message)}"), err=True)
    sys.exit(code)


def _echo_json(data: object) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2)
    click.echo(json_for_terminal(text) if sys.stdout.isatty() else text, color=True)


def parse_now(value: str | None) -> float | None:
    if value is None:
        return None
    from memtui.core.retrieval import parse_now as parse

    try:
        return parse(value)
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 time ({exc})", param_hint="--now") from exc


def _entries(obj: Any, refs: tuple[str, ...], layer: str | None) -> tuple[Any, list[Entry]]:
    store = actions.open_store(obj.paths)
    found: list[Entry] = []
    try:
        for ref in refs:
            entry = actions.get_entry(store, ref, layer)
            if entry not in found:
                found.append(entry)
    except actions.ActionError as exc:
        _fail(str(exc), exc.exit_code)
    return store, found


def _pin(obj: Any, refs: tuple[str, ...], layer: str | None, on: bool) -> None:
    store, entries = _entries(obj, refs, layer)
    try:
        done = fa.pin(store, entries, on)
    except actions.ActionError as exc:
        _fail(str(exc), exc.exit_code)
    for note in done.notes:
        click.echo(f"note: {escape_name(note)}", err=True)
    for e in done.changed:
        click.echo(f"{'Pinned' if on else 'Unpinned'} {escape_name(e.source_ref)} (id {escape_name(e.id)}).")
    if done.change is not None:
        click.echo("`memtui undo` reverses it.")


@click.command("pin", context_settings=CONTEXT)
@click.argument("refs", metavar="REF...", nargs=-1, required=True)
@_LAYER
@click.pass_obj
def pin_(obj: Any, refs: tuple[str, ...], layer: str | None) -> None:
    """Pin memories: they do not decay and, in focused injection, are always present."""
    _pin(obj, refs, layer, True)


@click.command("unpin", context_settings=CONTEXT)
@click.argument("refs", metavar="REF...", nargs=-1, required=True)
@_LAYER
@click.pass_obj
def unpin_(obj: Any, refs: tuple[str, ...], layer: str | None) -> None:
    """Remove the pin `memtui pin` set."""
    _pin(obj, refs, layer, False)


@click.command("expire", context_settings=CONTEXT)
@click.argument("ref", metavar="REF")
@click.argument("when", metavar="7d|DATE|never")
@_LAYER
@_NOW
@click.pass_obj
def expire_(obj: Any, ref: str, when: str, layer: str | None, now: str | None) -> None:
    """Give one memory (a single entry of a file, or a conversation memory) its own expiry:
    a duration from now (30m, 12h, 7d, 2w), a date (the end of that day, UTC) or an ISO time;
    `never` removes it. From then on it is left out of the injection (status `expired`)."""
    at = None
    if when.strip().lower() != "never":
        try:
            at = fg.parse_expiry(when, parse_now(now) or time.time())
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="WHEN") from None
    store, entries = _entries(obj, (ref,), layer)
    try:
        change = fa.set_expiry(store, entries, at)
    except actions.ActionError as exc:
        _fail(str(exc), exc.exit_code)
    e = entries[0]
    if change is None:
        click.echo(f"{escape_name(e.source_ref)}: nothing to change.")
    elif at is None:
        click.echo(f"{escape_name(e.source_ref)} no longer expires (its file's `expires:` still applies).")
    else:
        click.echo(f"{escape_name(e.source_ref)} expires {fg.iso(at)}. `memtui undo` reverses it.")


@click.command("forecast", context_settings=CONTEXT)
@click.option("--days", type=click.FloatRange(min=0), default=7.0, show_default=True, help="How far ahead to look.")
@_NOW
@click.option("--json", "as_json", is_flag=True, help="Print the forecast as one JSON object.")
@click.pass_obj
def forecast_(obj: Any, days: float, now: str | None, as_json: bool) -> None:
    """The memories whose level changes (or that expire) within --days if nothing uses them
    meanwhile, and the recent recorded injections that held one of them."""
    store = actions.open_store(obj.paths)
    settings = load_settings(obj.paths)
    try:
        data = fa.forecast(store, settings, days, parse_now(now))
    except actions.ActionError as exc:
        _fail(str(exc), exc.exit_code)
    if as_json:
        _echo_json(data)
        return
    span = f"{days:g} day{'s' if days != 1 else ''}"
    if data["decay"] is None:
        click.echo("Decay is off (memory.decay.halfLifeDays is not set): no levels, only expiries are forecast.")
    if not data["entries"]:
        click.echo(f"Nothing changes within {span} (until {data['until'][:16].replace('T', ' ')} UTC).")
    for item in data["entries"]:
        steps = " → ".join(f"{c['level']} {c['at'][:10]}" for c in item["changes"])
        now_level = item["level"] or "—"
        click.echo(f"  {escape_name(item['source'])}  {now_level} → {steps}  {escape_text(item['text'][:60])}")
    if data["messages"]:
        click.echo(f"Recent injections that held one of them ({len(data['messages'])}):")
        for m in data["messages"]:
            names = ", ".join(f"{escape_name(c['source'])} → {c['then']}" for c in m["changes"])
            click.echo(f"  {m['time'][:16].replace('T', ' ')}  {m['count']} memories · {names}")
        click.echo(f"  ({data['note']})")


@click.group("private", context_settings=CONTEXT, invoke_without_command=True)
@click.pass_context
def private_(ctx: click.Context) -> None:
    """Private mode: nothing is injected, nothing is recorded, and Muse learns nothing
    (memory.privateUntil in the global settings). It ends by itself."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(private_status)


@private_.command("on", context_settings=CONTEXT)
@click.option("--for", "duration", metavar="DURATION", help="How long: 30m, 2h, 1d… (default 1h).")
@click.pass_obj
def private_on(obj: Any, duration: str | None) -> None:
    """Start private mode (for an hour unless --for says otherwise)."""
    seconds = None
    if duration is not None:
        seconds = fg.parse_duration(duration)
        if seconds is None:
            raise click.BadParameter(f"{duration!r} is not a duration such as 30m, 2h, 1d or 1w", param_hint="--for")
    try:
        until = fa.private_on(obj.paths, seconds)
    except actions.ActionError as exc:
        _fail(str(exc), exc.exit_code)
    click.echo(f"Private until {fg.iso(until)}: nothing is injected or recorded, and Muse learns nothing "
               f"(memory.privateUntil in {escape_name(display_path(obj.paths.global_settings))}). "
               "`memtui private off` ends it sooner.")


@private_.command("off", context_settings=CONTEXT)
@click.pass_obj
def private_off(obj: Any) -> None:
    """End private mode now."""
    try:
        was = fa.private_off(obj.paths)
    except actions.ActionError as exc:
        _fail(str(exc), exc.exit_code)
    click.echo("Private mode off: memory is injected and recorded again." if was else "Private mode was not on.")


@private_.command("status", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the state as JSON.")
@click.pass_obj
def private_status(obj: Any, as_json: bool = False) -> None:
    """Whether private mode is on, and until when."""
    state = fa.private_state(load_settings(obj.paths))
    if as_json:
        _echo_json(state)
    elif state["private"]:
        click.echo(f"Private until {state['until']}: nothing is injected or recorded.")
    else:
        click.echo("Private mode is off.")


COMMANDS = (pin_, unpin_, expire_, forecast_, private_)
