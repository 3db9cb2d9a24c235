"""The workspace switch (and the file it lives in), the global default, budgets, gates, theme."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.validation import Integer, Number
from textual.widgets import Button, Input, Label, Select, Static, Switch

from memtui.core.display import escape_name, escape_text
from memtui.core.paths import Paths
from memtui.core.settings import Settings

from ..text import home_path

BUDGET_KEYS = ("total", "user", "project", "conversation")
GATE_KEYS = ("user", "project", "conversation")


@dataclass
class SettingsChoice:
    workspace_enabled: bool
    global_enabled: bool
    memory: dict[tuple[str, ...], object]
    theme: str


def field_row(label: str, widget: Input) -> ComposeResult:
    """A label, the input and, beside it, what is wrong with the value typed."""
    with Horizontal(classes="field-row"):
        yield Label(label, classes="field-label")
        yield widget
        yield Static("", id=f"{widget.id}-error", classes="field-error", markup=False)


def switch_label(title: str, where: str | None = None) -> Label:
    text = Text(title)
    if where:
        text.append(f"\nstored in {where}", style="dim")
    return Label(text, classes="switch-label", markup=False)


class SettingsScreen(ModalScreen[SettingsChoice | None]):
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="settings.save"),
        Binding("escape", "cancel", "Cancel", id="settings.cancel"),
    ]

    def __init__(self, paths: Paths, settings: Settings, themes: list[str], theme: str) -> None:
        super().__init__(classes="dialog-screen")
        self.paths = paths
        self.settings = settings
        self.themes = themes
        self.theme_name = theme

    def compose(self) -> ComposeResult:
        s = self.settings
        with Vertical(classes="dialog", id="settings-dialog"):
            yield Label("Settings", classes="dialog-title")
            with VerticalScroll(id="settings-form"):
                with Horizontal(classes="setting-row"):
                    yield Switch(value=s.enabled if s.workspace_enabled is None else s.workspace_enabled, id="ws-enabled")
                    yield switch_label("Memory for this workspace", home_path(self.paths.workspace_settings))
                with Horizontal(classes="setting-row"):
                    yield Switch(value=bool(s.global_enabled), id="global-enabled")
                    yield switch_label("Default for other workspaces", home_path(self.paths.global_settings))
                with Horizontal(classes="setting-row"):
                    yield Switch(value=s.redact_secrets, id="redact")
                    yield switch_label("Redact secrets before injection")
                with Horizontal(classes="setting-row"):
                    yield Switch(value=s.require_review, id="require-review")
                    yield switch_label("Inject the assistant's memories only once reviewed (i: the inbox)")
                yield Label("Budgets (tokens)", classes="section-title")
                for key in BUDGET_KEYS:
                    yield from field_row(key, Input(str(s.budget[key]), id=f"budget-{key}", type="integer",
                                                    validators=[Integer(minimum=0, maximum=1_000_000)], compact=True))
                yield Label("Gates (minimum relevance score, 0–1)", classes="section-title")
                for key in GATE_KEYS:
                    yield from field_row(key, Input(str(s.gate[key]), id=f"gate-{key}", type="number",
                                                    validators=[Number(minimum=0, maximum=1)], compact=True))
                yield Label("Limits", classes="section-title")
                yield from field_row("max item chars", Input(str(s.max_item_chars), id="max-chars", type="integer",
                                                             validators=[Integer(minimum=2, maximum=100_000)], compact=True))
                yield from field_row("max conversation items", Input(
                    str(s.max_items.get("conversation") or 0), id="max-conversation", type="integer",
                    validators=[Integer(minimum=0, maximum=100_000)], compact=True))
                yield Label("Theme", classes="section-title")
                yield Select([(t, t) for t in self.themes],
                             value=self.theme_name if self.theme_name in self.themes else self.themes[0],
                             allow_blank=False, id="theme", compact=True)
                yield Static("", id="settings-error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Save  ctrl+s", id="save", variant="primary")
                yield Button("Cancel  esc", id="cancel")

    def on_mount(self) -> None:
        if self.settings.problems:
            self.query_one("#settings-error", Static).update(Text(
                "\n".join(f"⚠ {escape_name(str(p.source))}: {escape_text(p.message)}" for p in self.settings.problems),
                style="bold"))
        self.query_one("#ws-enabled", Switch).focus()

    @on(Input.Changed)
    def show_validation(self, event: Input.Changed) -> None:
        """Say what is wrong with a value right where it is typed."""
        if event.input.id is None:
            return
        note = self.query_one(f"#{event.input.id}-error", Static)
        result = event.validation_result
        if result is None or result.is_valid:
            note.update("")
        else:
            note.update(Text("✗ " + "; ".join(result.failure_descriptions), style="bold"))

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "theme" and isinstance(event.value, str):
            self.app.theme = event.value  # live preview; saved with the rest

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        self.app.theme = self.theme_name
        self.dismiss(None)

    def action_save(self) -> None:
        bad = [i for i in self.query(Input) if not i.is_valid]
        if bad:
            labels = ", ".join((i.id or "").replace("-", " ") for i in bad)
            self.query_one("#settings-error", Static).update(Text(f"Fix these values first: {labels}", style="bold red"))
            for i in bad:
                i.validate(i.value)
                self.show_validation(Input.Changed(i, i.value, i.validate(i.value)))
            bad[0].focus()
            return
        s = self.settings
        memory: dict[tuple[str, ...], object] = {}
        for key in BUDGET_KEYS:
            value = int(self.query_one(f"#budget-{key}", Input).value)
            if value != s.budget[key]:
                memory[("memory", "budget", key)] = value
        for key in GATE_KEYS:
            gate = float(self.query_one(f"#gate-{key}", Input).value)
            if gate != s.gate[key]:
                memory[("memory", "gate", key)] = gate
        chars = int(self.query_one("#max-chars", Input).value)
        if chars != s.max_item_chars:
            memory[("memory", "maxItemChars")] = chars
        conv = int(self.query_one("#max-conversation", Input).value)
        if conv != (s.max_items.get("conversation") or 0):
            memory[("memory", "maxItems", "conversation")] = conv
        redact = self.query_one("#redact", Switch).value
        if redact != s.redact_secrets:
            memory[("memory", "redactSecrets")] = redact
        require = self.query_one("#require-review", Switch).value
        if require != s.require_review:
            memory[("memory", "requireReview")] = require
        self.dismiss(SettingsChoice(
            workspace_enabled=self.query_one("#ws-enabled", Switch).value,
            global_enabled=self.query_one("#global-enabled", Switch).value,
            memory=memory,
            theme=str(self.query_one("#theme", Select).value),
        ))
