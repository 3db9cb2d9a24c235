"""SPEC §18 in the TUI: the pin key, the private-mode key and header, the forecast view and the
detail's strength and level. The main screen binds the keys (`P`, `X`, `F`); what they do is
here, each a translation of `core.forgetting_actions`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Static

from memtui.core import forgetting as fg
from memtui.core import forgetting_actions as fa
from memtui.core.model import Entry
from memtui.core.settings import Settings

from .messages import Result
from .text import name

if TYPE_CHECKING:
    from .main_screen import MainScreen

FORECAST_DAYS = 7.0


class PinChanged(Result):
    """`P` pinned or unpinned an entry (`pinned`: its state now)."""

    def __init__(self, entry: Entry, pinned: bool, notes: list[str]) -> None:
        super().__init__()
        self.entry = entry
        self.pinned = pinned
        self.notes = notes


class PrivateSwitched(Result):
    """`X` started (until a moment) or ended (None) private mode."""

    def __init__(self, until: float | None) -> None:
        super().__init__()
        self.until = until


class ForecastReady(Result):
    """The forecast (`forgetting_actions.forecast`), read in a worker."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__()
        self.data = data


def private_label(settings: Settings) -> str:
    """The header's words for private mode, '' when it is off."""
    if not settings.private or settings.private_until is None:
        return ""
    return f"PRIVATE until {fg.iso(settings.private_until)[11:16]} UTC (X ends it)"


def detail_line(screen: MainScreen, entry: Entry | None) -> str:
    """The detail's `forgetting` row for `entry` (strength, level, pin, expiry), '' if none."""
    if entry is None:
        return ""
    app = screen.memtui
    stat = app.history.get(entry.id)
    return fa.describe_vital(fa.vital_of(app.paths, app.settings, entry, stat[1] if stat else None))


# ---------------------------------------------------------------------- the keys' work (in the app's writer)
def toggle_pin(screen: MainScreen) -> None:
    app, entry = screen.memtui, screen.selected_entry()
    if entry is None:
        app.say("Select a memory first.", severity="warning")
        return
    pinned = fa.vital_of(app.paths, app.settings, entry).pinned

    def job() -> None:
        done = fa.pin(app.store, [entry], on=not pinned)
        screen.post_message(PinChanged(entry, not pinned if done.change is not None else pinned, done.notes))

    app.write(job, "Not pinned" if not pinned else "Not unpinned")


def toggle_private(screen: MainScreen) -> None:
    app = screen.memtui
    on = not app.settings.private

    def job() -> None:
        until = None
        if on:
            until = fa.private_on(app.paths)
        else:
            fa.private_off(app.paths)
        screen.post_message(PrivateSwitched(until))

    app.write(job, "Private mode not changed")


def open_forecast(screen: MainScreen) -> None:
    app = screen.memtui

    def job() -> None:
        screen.post_message(ForecastReady(fa.forecast(app.store, app.settings, FORECAST_DAYS, time.time())))

    app.write(job, "Forecast")


# ---------------------------------------------------------------------- the forecast view
def forecast_renderable(data: dict[str, Any]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column()
    if data.get("decay") is None:
        table.add_row("", "", Text("Decay is off (memory.decay.halfLifeDays): only expiries are forecast.", style="dim"))
    if not data["entries"]:
        table.add_row("", "", Text(f"Nothing changes within {data['days']:g} days.", style="dim"))
    for item in data["entries"]:
        steps = " → ".join(f"{c['level'].replace('_', ' ')} {c['at'][:10]}" for c in item["changes"])
        table.add_row(name(item["source"]), Text(f"{(item['level'] or '—').replace('_', ' ')} → {steps}"),
                      name(item["text"]))
    if data["messages"]:
        table.add_row("", "", Text(""))
        table.add_row(Text("recent injections", style="bold"), "", Text(data["note"], style="dim"))
        for m in data["messages"]:
            changes = ", ".join(f"{c['source']} → {c['then'].replace('_', ' ')}" for c in m["changes"])
            table.add_row(m["time"][:16].replace("T", " "), Text(f"{m['count']} memories"), name(changes))
    return table


class ForecastScreen(ModalScreen[None]):
    """What changes within the next days if nothing is used: levels, expiries, and the recent
    injections that held such a memory."""

    BINDINGS = [Binding("escape,q,F", "close", "Close", id="forecast.close")]

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(classes="dialog-screen")
        self.data = data

    def compose(self) -> ComposeResult:
        n = len(self.data["entries"])
        with Vertical(classes="dialog", id="forecast-dialog"):
            yield Label(f"Forecast — {n} memor{'y' if n == 1 else 'ies'} change within {self.data['days']:g} days",
                        classes="dialog-title")
            with VerticalScroll(id="forecast-scroll"):
                yield Static(forecast_renderable(self.data), id="forecast-body", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#forecast-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)


class ForgettingKeys:
    """The main screen's part of §18: the handlers of what the keys' work reports."""

    def on_pin_changed(self: Any, message: PinChanged) -> None:
        app = self.memtui
        for note in message.notes:
            app.say(note, title="Pin", timeout=4)
        if not message.notes:
            what = "Pinned: it does not decay" if message.pinned else "Unpinned"
            app.say(f"{what} · {message.entry.source_ref} (u undoes)", title="Pin", timeout=4)
        self.show_detail()
        self.schedule_preview()

    def on_private_switched(self: Any, message: PrivateSwitched) -> None:
        app = self.memtui
        app.reload_settings()
        if message.until is None:
            app.say("Private mode off: memory is injected and recorded again.", title="Private", timeout=4)
        else:
            app.say(f"Private until {fg.iso(message.until)[11:16]} UTC: nothing is injected or recorded, Muse "
                    "learns nothing.", title="Private", timeout=6)

    def on_forecast_ready(self: Any, message: ForecastReady) -> None:
        self.app.push_screen(ForecastScreen(message.data))
