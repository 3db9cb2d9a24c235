"""Modal and full screens: edit, confirm delete, conflict, settings, help."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.validation import Integer, Number
from textual.widgets import Button, Footer, Input, Label, Select, Static, Switch, TextArea

from memtui.core.model import Entry
from memtui.core.paths import Paths
from memtui.core.settings import Settings

LAYER_NAMES = {"user": "User", "project": "Project", "conversation": "Conversation"}


def describe(entry: Entry) -> str:
    where = entry.source_ref if entry.layer != "conversation" else f"conversation “{entry.conversation_title or entry.conversation_id or 'none'}”"
    return f"{LAYER_NAMES[entry.layer]} · {where}"


class SaveOrCancel:
    """A dialog whose Save and Cancel buttons run its `save` and `cancel` actions."""

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.action_cancel()


class EditScreen(SaveOrCancel, ModalScreen[str | None]):
    """Edit (or create) one memory's text. Dismisses with the text, or None when cancelled."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="edit.save"),
        Binding("escape", "cancel", "Cancel", id="edit.cancel"),
    ]

    def __init__(self, title: str, text: str = "", entry: Entry | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.initial = text
        self.entry = entry  # None: a new memory
        self.conflict = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="edit-dialog"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            yield Static("", id="conflict-banner", markup=False)
            yield TextArea(self.initial, id="editor", soft_wrap=True, tab_behavior="indent")
            with Horizontal(classes="buttons"):
                yield Button("Save  ctrl+s", id="save", variant="primary")
                yield Button("Cancel  esc", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#conflict-banner").display = False
        editor = self.query_one("#editor", TextArea)
        editor.focus()
        editor.move_cursor(editor.document.end)

    def mark_conflict(self, message: str) -> None:
        self.conflict = True
        banner = self.query_one("#conflict-banner", Static)
        banner.update(Text(f"⚠ {message}", style="bold"))
        banner.display = True

    def action_save(self) -> None:
        self.dismiss(self.query_one("#editor", TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """Asks before something goes, naming exactly what."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, body: Text | str, yes: str = "Delete") -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.body = body
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="confirm-dialog"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            yield Static(self.body, id="confirm-body", markup=False)
            with Horizontal(classes="buttons"):
                yield Button(f"{self.yes}  y", id="yes", variant="error")
                yield Button("Keep  n", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class ConflictScreen(ModalScreen[str]):
    """The entry being edited changed on disk: the user decides; nothing is overwritten silently."""

    BINDINGS = [
        Binding("m", "choose('mine')", "Keep mine", id="conflict.mine"),
        Binding("t", "choose('theirs')", "Take theirs", id="conflict.theirs"),
        Binding("a", "choose('new')", "Save as new", id="conflict.new"),
    ]

    def __init__(self, message: str, theirs: str | None) -> None:
        super().__init__(classes="dialog-screen")
        self.message = message
        self.theirs = theirs

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="conflict-dialog"):
            yield Label("Changed on disk while you were editing", classes="dialog-title")
            yield Static(self.message, markup=False)
            if self.theirs is not None:
                yield Static(Text.assemble(("On disk now: ", "bold"), self.theirs), markup=False, id="theirs")
            else:
                yield Static(Text("The entry no longer exists on disk.", style="bold"), id="theirs")
            with Horizontal(classes="buttons"):
                yield Button("Keep mine  m", id="mine", variant="warning")
                yield Button("Take theirs  t", id="theirs-button")
                yield Button("Save as new  a", id="new", variant="primary")

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss({"mine": "mine", "theirs-button": "theirs", "new": "new"}[event.button.id])


def field_row(label: str, widget) -> ComposeResult:
    with Horizontal(classes="field-row"):
        yield Label(label, classes="field-label")
        yield widget


@dataclass
class SettingsChoice:
    workspace_enabled: bool
    global_enabled: bool
    memory: dict[tuple[str, ...], object]
    theme: str


class SettingsScreen(SaveOrCancel, ModalScreen[SettingsChoice | None]):
    """The workspace switch (and the file it lives in), the global default, budgets, gates, theme."""

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
                    yield Label(f"Memory for this workspace\n[dim]stored in {self.paths.workspace_settings}[/dim]",
                                classes="switch-label")
                with Horizontal(classes="setting-row"):
                    yield Switch(value=bool(s.global_enabled), id="global-enabled")
                    yield Label(f"Default for other workspaces\n[dim]stored in {self.paths.global_settings}[/dim]",
                                classes="switch-label")
                with Horizontal(classes="setting-row"):
                    yield Switch(value=s.redact_secrets, id="redact")
                    yield Label("Redact secrets before injection", classes="switch-label")
                yield Label("Budgets (tokens)", classes="section-title")
                for key in ("total", "user", "project", "conversation"):
                    yield from field_row(key, Input(str(s.budget[key]), id=f"budget-{key}", type="integer",
                                                    validators=[Integer(minimum=0, maximum=1_000_000)], compact=True))
                yield Label("Gates (minimum relevance score, 0–1)", classes="section-title")
                for key in ("user", "project", "conversation"):
                    yield from field_row(key, Input(str(s.gate[key]), id=f"gate-{key}", type="number",
                                                    validators=[Number(minimum=0, maximum=1)], compact=True))
                yield Label("Limits", classes="section-title")
                yield from field_row("max item chars", Input(str(s.max_item_chars), id="max-chars", type="integer",
                                                             validators=[Integer(minimum=2, maximum=100_000)], compact=True))
                yield from field_row("max conversation items", Input(
                    str(s.max_items.get("conversation") or 0), id="max-conversation", type="integer",
                    validators=[Integer(minimum=0, maximum=100_000)], compact=True))
                yield Label("Theme", classes="section-title")
                yield Select([(t, t) for t in self.themes], value=self.theme_name if self.theme_name in self.themes else self.themes[0],
                             allow_blank=False, id="theme", compact=True)
                yield Static("", id="settings-error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button("Save  ctrl+s", id="save", variant="primary")
                yield Button("Cancel  esc", id="cancel")

    def on_mount(self) -> None:
        problems = [p for p in self.settings.problems]
        error = self.query_one("#settings-error", Static)
        if problems:
            error.update(Text("\n".join(f"⚠ {p.source}: {p.message}" for p in problems), style="bold"))
        self.query_one("#ws-enabled", Switch).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "theme" and isinstance(event.value, str):
            self.app.theme = event.value  # live preview; saved with the rest

    def action_cancel(self) -> None:
        self.app.theme = self.theme_name
        self.dismiss(None)

    def action_save(self) -> None:
        bad = [i for i in self.query(Input) if not i.is_valid]
        if bad:
            labels = ", ".join(i.id.replace("-", " ") for i in bad)
            self.query_one("#settings-error", Static).update(Text(f"Fix these values first: {labels}", style="bold red"))
            bad[0].focus()
            return
        s = self.settings
        memory: dict[tuple[str, ...], object] = {}
        for key in ("total", "user", "project", "conversation"):
            value = int(self.query_one(f"#budget-{key}", Input).value)
            if value != s.budget[key]:
                memory[("memory", "budget", key)] = value
        for key in ("user", "project", "conversation"):
            value = float(self.query_one(f"#gate-{key}", Input).value)
            if value != s.gate[key]:
                memory[("memory", "gate", key)] = value
        chars = int(self.query_one("#max-chars", Input).value)
        if chars != s.max_item_chars:
            memory[("memory", "maxItemChars",)] = chars
        conv = int(self.query_one("#max-conversation", Input).value)
        if conv != (s.max_items.get("conversation") or 0):
            memory[("memory", "maxItems", "conversation")] = conv
        redact = self.query_one("#redact", Switch).value
        if redact != s.redact_secrets:
            memory[("memory", "redactSecrets")] = redact
        theme = self.query_one("#theme", Select).value
        self.dismiss(SettingsChoice(
            workspace_enabled=self.query_one("#ws-enabled", Switch).value,
            global_enabled=self.query_one("#global-enabled", Switch).value,
            memory=memory,
            theme=str(theme),
        ))


class HelpScreen(ModalScreen[None]):
    """Every key, from the app's own bindings."""

    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="help.close")]

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        super().__init__(classes="dialog-screen")
        self.rows = rows

    def compose(self) -> ComposeResult:
        from rich.table import Table

        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for key, description in self.rows:
            table.add_row(key, description)
        with Vertical(classes="dialog", id="help-dialog"):
            yield Label("memtui — keys", classes="dialog-title")
            with VerticalScroll():
                yield Static(table)
                yield Static(Text.assemble(
                    "\nThe fold shows exactly the text Muse would add to its system prompt for the query. "
                    "Left-out memories are listed with the reason: below the relevance gate, over the token "
                    "budget, past the layer's maximum items, or archived. ctrl+p opens the command palette."),
                    markup=False)
            yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


