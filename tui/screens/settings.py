"""The workspace switch (and the file it lives in), the global default, budgets, gates,
retrieval (keyword or hybrid, and the model), theme."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.validation import Integer, Number
from textual.widgets import Button, Footer, Input, Label, Select, Static, Switch

from memtui.core.display import escape_name, escape_text
from memtui.core.model import LAYERS, Layer
from memtui.core.paths import Paths
from memtui.core.settings import Settings

from ..text import fit_path, home_path

BUDGET_KEYS: tuple[str, ...] = ("total", *LAYERS)
GATE_KEYS: tuple[str, ...] = LAYERS
# each field's key in settings.json (`Settings.invalid` holds the saved values that are not used)
FIELD_KEYS: dict[str, tuple[str, ...]] = {
    **{f"budget-{key}": ("memory", "budget", key) for key in BUDGET_KEYS},
    **{f"gate-{key}": ("memory", "gate", key) for key in GATE_KEYS},
    "max-chars": ("memory", "maxItemChars"),
    "max-conversation": ("memory", "maxItems", Layer.CONVERSATION),
    "retrieval": ("memory", "retrieval"),
    "injection": ("memory", "injection"),
    "redact": ("memory", "redactSecrets"),
    "require-review": ("memory", "requireReview"),
    "ws-enabled": ("workspace", "memoryEnabled"),
    "global-enabled": ("global", "memoryEnabled"),
}


def invalid_note(saved: str, reason: str) -> Text:
    """What stands beside a field whose saved value is not used: the value, why, and what is
    used instead (`reason` is the settings problem: "… must be X, not V; using D")."""
    rule, _, instead = reason.rpartition("; ")
    must = rule.split(" must be ", 1)[1].split(", not ")[0] if " must be " in rule else ""
    return Text(f"✗ saved as {saved}, which is invalid{f' (must be {must})' if must else ''}; {instead or 'ignored'}",
                style="bold")


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


def switch_text(title: str, value: bool, where: str | None = None, width: int = 0) -> Text:
    """`on   Memory for this workspace`: the state in words, so it reads without colour; the
    file on a line of its own, fitted to `width` from the left."""
    text = Text.assemble(("on " if value else "off", "bold"), "  ", title)
    if where:
        prefix = "     stored in "
        text.append("\n" + prefix + (fit_path(where, width - len(prefix)) if width else where), style="dim")
    return text


class SwitchLabel(Static):
    """The words beside a switch; they follow its state."""

    def __init__(self, title: str, value: bool, switch_id: str, where: str | None = None) -> None:
        super().__init__(classes="switch-label", id=f"{switch_id}-label", markup=False)
        self.switch_title = title
        self.where = where
        self.value = value
        self.invalid: Text | None = None  # the saved value that is not used, and why

    def render(self) -> Text:
        text = switch_text(self.switch_title, self.value, self.where, self.content_region.width)
        if self.invalid is not None:
            text.append("\n     ")
            text.append_text(self.invalid)
        return text

    def show_state(self, value: bool) -> None:
        self.value = value
        self.refresh()


def injection_note(settings: Settings) -> Text:
    """What the injection mode does, and where a workspace's own choice overrides the global one."""
    what = ("what the message needs: relevance first, pinned memories first" if settings.injection == "focused"
            else "every layer filled in order (SPEC §5)")
    if settings.injection_source == "workspace":
        return Text(f"{what}; set by this workspace's settings, which win over the global one", style="dim")
    return Text(what, style="dim")


def retrieval_note(settings: Settings) -> Text:
    """Which model hybrid retrieval uses, or why there is none (its files are found, not loaded)."""
    from memtui.core.retrieval import model_status
    from memtui.core.semantic import ModelUnavailable, locate

    status = model_status(settings)
    model = status["model"]
    if model:
        return Text(f"model in use: {model['name']} {model['version']}", style="dim")
    if status.get("reason"):
        return Text(f"⚠ hybrid is set but retrieval is keyword: {status['reason']}", style="bold")
    try:
        info = locate().info
    except ModelUnavailable as exc:
        return Text(f"hybrid not available: {exc}", style="dim")
    return Text(f"hybrid: {info.name} {info.version}", style="dim")


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

    def _field(self, widget_id: str, value: object) -> str:
        """The text a field starts with: the saved value as the file has it when that value is
        not used (the form shows what is saved, not the default standing in for it)."""
        saved = self.settings.invalid.get(FIELD_KEYS[widget_id])
        return saved[0] if saved is not None else str(value)

    def _kept_invalid(self, field: Input) -> bool:
        """An invalid saved value left as it is: saving the form leaves it alone in the file."""
        saved = self.settings.invalid.get(FIELD_KEYS.get(field.id or "", ()))
        return saved is not None and field.value == saved[0]

    def compose(self) -> ComposeResult:
        s = self.settings
        with Vertical(classes="dialog", id="settings-dialog"):
            yield Label("Settings", classes="dialog-title")
            with VerticalScroll(id="settings-form"):
                ws_on = s.enabled if s.workspace_enabled is None else s.workspace_enabled
                with Horizontal(classes="setting-row"):
                    yield Switch(value=ws_on, id="ws-enabled")
                    yield SwitchLabel("Memory for this workspace", ws_on, "ws-enabled",
                                       home_path(self.paths.workspace_settings))
                with Horizontal(classes="setting-row"):
                    yield Switch(value=bool(s.global_enabled), id="global-enabled")
                    yield SwitchLabel("Default for other workspaces", bool(s.global_enabled), "global-enabled",
                                       home_path(self.paths.global_settings))
                with Horizontal(classes="setting-row"):
                    yield Switch(value=s.redact_secrets, id="redact")
                    yield SwitchLabel("Redact secrets before injection", s.redact_secrets, "redact")
                with Horizontal(classes="setting-row"):
                    yield Switch(value=s.require_review, id="require-review")
                    yield SwitchLabel("Inject Muse's own memories only once reviewed (i: the inbox)",
                                      s.require_review, "require-review")
                yield Static(Text.assemble(
                    "Type a value; ", ("ctrl+s", "bold"), " saves it in ",
                    (home_path(self.paths.global_settings), "bold"), " (every workspace). A value out of range "
                    "is refused, with the reason beside it."), id="settings-hint", markup=False)
                yield Label("Budgets (tokens)", classes="section-title")
                for key in BUDGET_KEYS:
                    yield from field_row(key, Input(self._field(f"budget-{key}", s.budget[key]), id=f"budget-{key}",
                                                    type="integer",
                                                    validators=[Integer(minimum=0, maximum=1_000_000)], compact=True))
                yield Label("Gates (minimum relevance score, 0–1)", classes="section-title")
                for key in GATE_KEYS:
                    yield from field_row(key, Input(self._field(f"gate-{key}", s.gate[key]), id=f"gate-{key}", type="number",
                                                    validators=[Number(minimum=0, maximum=1)], compact=True))
                yield Label("Limits", classes="section-title")
                yield from field_row("max item chars", Input(self._field("max-chars", s.max_item_chars), id="max-chars",
                                                             type="integer",
                                                             validators=[Integer(minimum=2, maximum=100_000)], compact=True))
                yield from field_row("max conversation items", Input(
                    self._field("max-conversation", s.max_items.get(Layer.CONVERSATION) or 0), id="max-conversation",
                    type="integer",
                    validators=[Integer(minimum=0, maximum=100_000)], compact=True))
                with Horizontal(classes="field-row", id="retrieval-row"):
                    yield Label("Retrieval", classes="section-title")
                    yield Select([("keyword", "keyword"), ("hybrid", "hybrid")],
                                 value=s.retrieval if s.retrieval in ("keyword", "hybrid") else "keyword",
                                 allow_blank=False, id="retrieval", compact=True)
                    # §15 beside §13, on the same line: the form keeps a spare line at 80×24
                    yield Label("Injection", id="injection-label")
                    injection = Select([("muse", "muse"), ("focused", "focused")],
                                       value=s.injection if s.injection in ("muse", "focused") else "muse",
                                       allow_blank=False, id="injection", compact=True)
                    injection.tooltip = injection_note(s)
                    yield injection
                    yield Static(retrieval_note(s), id="retrieval-model", markup=False)
                with Horizontal(classes="field-row", id="theme-row"):
                    yield Label("Theme", classes="section-title")
                    yield Select([(t, t) for t in self.themes],
                                 value=self.theme_name if self.theme_name in self.themes else self.themes[0],
                                 allow_blank=False, id="theme", compact=True)
                yield Static("", id="settings-error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Save  ctrl+s", id="save", variant="primary")
                yield Button("Cancel  esc", id="cancel")
        yield Footer()  # this screen's keys, not the main screen's

    def on_mount(self) -> None:
        for widget_id, key in FIELD_KEYS.items():  # each saved value that is not used, where it is shown
            saved = self.settings.invalid.get(key)
            if saved is None:
                continue
            if widget_id in ("retrieval", "injection"):
                self.query_one("#retrieval-model", Static).update(invalid_note(*saved))
            elif widget_id in ("redact", "require-review", "ws-enabled", "global-enabled"):
                self.query_one(f"#{widget_id}-label", SwitchLabel).invalid = invalid_note(*saved)
            else:
                self.query_one(f"#{widget_id}-error", Static).update(invalid_note(*saved))
        self.query_one("#settings-error", Static).display = bool(self.settings.problems)
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
        saved = self.settings.invalid.get(FIELD_KEYS.get(event.input.id, ()))
        if saved is not None and event.value == saved[0]:
            note.update(invalid_note(*saved))
        elif result is None or result.is_valid:
            note.update("")
        else:
            note.update(Text("✗ " + "; ".join(result.failure_descriptions), style="bold"))

    def on_switch_changed(self, event: Switch.Changed) -> None:
        for label in self.query(SwitchLabel):
            if label.id == f"{event.switch.id}-label":
                label.show_state(event.value)

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
        bad = [i for i in self.query(Input) if not i.is_valid and not self._kept_invalid(i)]
        if bad:
            labels = ", ".join((i.id or "").replace("-", " ") for i in bad)
            error = self.query_one("#settings-error", Static)
            error.update(Text(f"Fix these values first: {labels}", style="bold red"))
            error.display = True
            for i in bad:
                i.validate(i.value)
                self.show_validation(Input.Changed(i, i.value, i.validate(i.value)))
            bad[0].focus()
            return
        s = self.settings
        memory: dict[tuple[str, ...], object] = {}
        def typed(widget_id: str) -> Input | None:
            """The field, unless it still shows an invalid saved value (left alone in the file)."""
            field = self.query_one(f"#{widget_id}", Input)
            return None if self._kept_invalid(field) else field

        for key in BUDGET_KEYS:
            if (field := typed(f"budget-{key}")) is not None and int(field.value) != s.budget[key]:
                memory[("memory", "budget", key)] = int(field.value)
        for key in GATE_KEYS:
            if (field := typed(f"gate-{key}")) is not None and float(field.value) != s.gate[key]:
                memory[("memory", "gate", key)] = float(field.value)
        if (field := typed("max-chars")) is not None and int(field.value) != s.max_item_chars:
            memory[("memory", "maxItemChars")] = int(field.value)
        conv_field = typed("max-conversation")
        if conv_field is not None and int(conv_field.value) != (s.max_items.get(Layer.CONVERSATION) or 0):
            memory[("memory", "maxItems", Layer.CONVERSATION)] = int(conv_field.value)
        retrieval = self.query_one("#retrieval", Select).value
        if isinstance(retrieval, str) and retrieval != s.retrieval:
            memory[("memory", "retrieval")] = retrieval
        injection = self.query_one("#injection", Select).value
        if isinstance(injection, str) and injection != s.injection:
            memory[("memory", "injection")] = injection
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
