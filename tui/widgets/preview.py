"""The injection preview: a query, the fold with the exact injected text beside one budget
gauge per layer, and what was left out: near misses first, the rest counted per reason."""

from __future__ import annotations

import heapq
import re
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import islice

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Collapsible, Static
from textual.widgets._collapsible import CollapsibleTitle

from memtui.core.assistants import TARGETS, Target
from memtui.core.assistants.delivery import for_target, protocol
from memtui.core.display import escape_name, escape_text
from memtui.core.injection import Candidate, InjectionResult
from memtui.core.model import LAYERS, Layer

from ..text import LAYER_TITLES, one_line, problems_note
from .line_input import LineInput

REASONS = {
    "below_gate": "below the relevance gate",
    "budget": "over the token budget",
    "max_items": "past the layer's max items",
    "archived": "archived",
    "unreviewed": "awaiting review (memory.requireReview; i opens the inbox)",
    "out_of_scope": "out of scope (their paths: match no file in context)",
    "superseded": "superseded (replaced by a newer memory)",
    "expired": "expired (past their expires date)",
}
SHORT_REASONS = {"below_gate": "below gate", "budget": "over budget", "max_items": "max items", "archived": "archived",
                 "unreviewed": "unreviewed", "out_of_scope": "out of scope", "superseded": "superseded",
                 "expired": "expired"}
NEAR_MISSES = 8  # listed first: the memories that almost made it
PER_REASON = 60  # listed under each reason when expanded; every line is re-rendered per query
GAUGE_CELLS = 4
SCAN_LIMIT = 5000  # candidates looked at for near misses and the lists; the counts are always exact


def injected_renderable(text: str) -> RenderableType:
    """The exact injected text, control characters shown escaped; a memory's line that
    wraps hangs under its own text, not under the dash."""
    if not text:
        return Text("(nothing would be injected)", style="dim")
    parts: list[RenderableType] = []
    items: Table | None = None
    for line in text.split("\n"):
        if line.startswith("- "):
            if items is None:
                items = Table.grid()
                items.add_column(width=2, no_wrap=True)
                items.add_column(ratio=1)
                parts.append(items)
            items.add_row("- ", Text(escape_text(line[2:])))
        else:
            items = None
            parts.append(Text(escape_text(line), style="bold" if line.startswith("#") else ""))
    return Group(*parts)


def gauge(used: int, allowance: int) -> Text:
    filled = 0 if allowance <= 0 else min(GAUGE_CELLS, round(GAUGE_CELLS * used / allowance))
    bar = Text("█" * filled, style="bold")
    bar.append("░" * (GAUGE_CELLS - filled), style="dim")
    return bar


def gauges_renderable(result: InjectionResult) -> Text:
    """One gauge per layer, on one line above the fold: tokens used of the layer's allowance
    (its budget plus what the layers before it left unused; `Proj 212/1264` is 212 of 1264)."""
    line = Text(no_wrap=True, overflow="ellipsis")
    for i, layer in enumerate(LAYERS):
        used, allowance, _carry = result.layer_budget.get(layer, (0, 0, 0))
        if i:
            line.append("  ")
        line.append(f"{LAYER_TITLES[layer][:4]} ", style="bold")
        line.append_text(gauge(used, allowance))
        line.append(f" {used}/{allowance}")
    return line


def fold_title(result: InjectionResult, summary: LeftOut) -> str:
    """`33 memories injected · 834/2000 tokens · truncated · 1 clipped`: "truncated" only when
    memories were left out for the budget, "N clipped" when injected ones were shortened."""
    noun = "memory" if result.count == 1 else "memories"
    parts = [f"{result.count} {noun} injected", f"{result.tokens}/{result.budget.get('total', 0)} tokens"]
    if summary.over_budget:
        parts.append("truncated")
    clipped = sum(1 for c in result.included if c.clipped)
    if clipped:
        parts.append(f"{clipped} clipped")
    if result.count == 0 and result.disabled_reason:
        parts.append(result.disabled_reason.replace("_", " "))
    return " · ".join(parts)


# whole words only: "over the token budget" keeps its "token" when the fold's `tokens` are cut
TITLE_CUTS = tuple((re.compile(old), new) for old, new in (
    (r"\bmemories injected\b", "injected"), (r"\bmemory injected\b", "injected"), (r" tokens\b", " tok"),
    (r"(?<=\d) tok\b", ""), (r"\btruncated\b", "trunc.")))


def fit_title(title: str, width: int) -> str:
    """A fold's title in `width` cells, shortened word by word (`33 injected · 834/2000 ·
    truncated · 1 clipped`) so what ends it (truncated, N clipped) stays in view."""
    for old, new in TITLE_CUTS:
        if cell_len(title) <= width:
            break
        title = old.sub(new, title)
    return title


def near_miss_key(c: Candidate) -> tuple[float, int]:
    return (-c.score, 0 if c.status == "budget" else 1)


def candidate_line(c: Candidate, scored: bool = True) -> Text:
    """`below gate 0.33  notes.md:4  text…`; the score only when there is a query."""
    reason = SHORT_REASONS.get(c.status, c.status)
    if scored and c.status in ("below_gate", "budget"):
        reason = f"{reason} {c.score:.2f}"
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"  {reason:<17}", style="yellow" if c.status == "budget" else "dim")
    if scored and c.parts is not None:  # hybrid retrieval (§13): the score is the larger of the two
        out.append(f"kw {c.parts[0]:.2f} · sem {c.parts[1]:.4f}  ", style="dim")
    if scored and c.why is not None:  # focused injection (§15): the parts of the score, and the cut
        out.append(why_brief(c) + "  ", style="dim")
    if c.entry.layer == Layer.CONVERSATION:
        where = f"“{escape_name(c.entry.conversation_title or 'no conversation')}”"
    else:
        where = escape_name(c.entry.source_ref)
    out.append(f"{where}  ", style="dim")
    out.append(one_line(c.entry.text)[:120])
    return out


def why_brief(c: Candidate) -> str:
    """A focused candidate's score in a few characters: `kw 0.50 · rel 0.62 / cut 0.31`."""
    why = c.why
    if why is None:
        return ""
    pinned = "pinned · " if why.pinned else ""
    return f"{pinned}kw {why.keyword:.2f} · rel {why.relevance:.2f} / cut {why.cut:.2f}"


WHY_LINES = 12  # the injected lines whose `why` the preview shows


def why_renderable(result: InjectionResult) -> Text:
    """Focused injection (SPEC §15): why each injected line is in, one line each."""
    out = Text(no_wrap=True, overflow="ellipsis")
    shown = [c for c in result.included[:WHY_LINES] if c.why is not None]
    if not shown:
        return out
    out.append("Why these (focused injection):", style="bold")
    for c in shown:
        assert c.why is not None
        out.append("\n  ")
        out.append(f"{one_line(c.entry.text)[:40]:<40}  ")
        out.append(c.why.summary(), style="dim")
    if len(result.included) > WHY_LINES:
        out.append(f"\n  … and {len(result.included) - WHY_LINES} more: memtui preview --json", style="dim")
    return out


@dataclass
class LeftOut:
    """What the preview lists of the candidates left out: built in the preview worker."""

    total: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # per reason, exact
    near: list[Candidate] = field(default_factory=list)
    samples: dict[str, list[Candidate]] = field(default_factory=dict)  # per reason, nearest first
    over_budget: int = 0  # left out because the budget was spent (near misses included)
    pending: bool = False  # the counts only: the near misses and lists are still being looked for


def left_out_counts(result: InjectionResult) -> LeftOut:
    """What is left out, counted (cheap: no candidate produced), the near misses pending."""
    counts = result.status_counts()
    counts.pop("included", None)
    return LeftOut(total=sum(counts.values()), counts=counts, over_budget=counts.get("budget", 0), pending=True)


def left_out(result: InjectionResult) -> LeftOut:
    """Near misses (highest score, then over budget) and the first of each reason, from the
    first SCAN_LIMIT candidates in injection order (each layer's best first); counts from
    `status_counts()`, so no keystroke produces every candidate of a large store."""
    counts = result.status_counts()
    counts.pop("included", None)
    out = LeftOut(total=sum(counts.values()), counts=counts, over_budget=counts.get("budget", 0))
    seen = [c for c in islice(result.iter_candidates(), SCAN_LIMIT) if c.status != "included"]
    out.near = heapq.nsmallest(NEAR_MISSES, (c for c in seen if c.status in ("budget", "max_items") or c.score > 0),
                               key=near_miss_key)
    shown = {id(c) for c in out.near}
    rest: dict[str, list[Candidate]] = defaultdict(list)
    for c in seen:
        if id(c) not in shown:
            rest[c.status].append(c)
    out.samples = {reason: heapq.nsmallest(PER_REASON, group, key=near_miss_key) for reason, group in rest.items()}
    for c in out.near:
        out.counts[c.status] -= 1  # the rest, counted per reason
    return out


class PreviewPane(Vertical):
    """A query, the fold and the gauges, and what was left out and why. ctrl+t shows it as
    an assistant's hook delivers it (Claude Code, Codex, Gemini CLI: cut to what each keeps),
    then as Muse injects it again; the title says which."""

    BINDINGS = [Binding("ctrl+t", "cycle_target", "Assistant", id="preview.target"),  # in the footer while in the preview
                Binding("ctrl+o", "scope", "Scope", show=False, id="preview.scope"),
                # from the fold to each "N more …" list and back (only while a fold's title is focused)
                # (priority: before the scroll around them takes ↑/↓ to scroll)
                Binding("down", "step_fold(1)", "Next list", show=False, priority=True, id="preview.next_fold"),
                Binding("up", "step_fold(-1)", "Previous list", show=False, priority=True, id="preview.previous_fold")]
    files_wanted = False  # the files field asked for (ctrl+o); else shown while scoped memories are in play

    class ScopeAsked(Message):
        """Show what each assistant loads for the first file of the files field (SPEC §16)."""
    TARGET_CYCLE: tuple[Target | None, ...] = (None, *TARGETS)
    target: Target | None = None
    _last: tuple[InjectionResult, LeftOut | None] | None = None
    # Per keystroke only what is on screen is rebuilt: a collapsed reason's list is made when
    # it is expanded, and a Static whose content did not change is not updated (an update
    # lays the whole screen out again).
    _lists: dict[str, tuple[list[Candidate], bool]] = {}  # reason -> (its candidates, scored), while collapsed
    _content: dict[str, object] = {}  # widget id -> what it shows
    _near: list[Text] = []  # the near-miss lines shown last (kept, dimmed, while the next are looked for)
    _left_lines = -1  # the line breaks of the left-out summary shown last

    def _update(self, widget: Static, content: Text, key: object = None, layout: bool = True) -> None:
        """`widget.update(content)` unless it already shows it (`key`: what stands for it);
        without `layout` when its size stays (the screen is then not laid out again)."""
        key = content if key is None else key
        if widget.id is not None and self._content.get(widget.id) == key:
            return
        if widget.id is not None:
            self._content = {**self._content, widget.id: key}
        widget.update(content, layout=layout)

    @staticmethod
    def _title(fold: Collapsible, title: str) -> None:
        """A fold's new title, shown without laying the screen out again: its title row is one
        line across the pane (app.tcss), whatever it says, so it is shortened to fit
        (`fit_title`). (Setting `fold.title` would: the title's label updates with a layout,
        once per keystroke.)"""
        head = fold.query_one(CollapsibleTitle)
        room = head.content_region.width - 2  # after "▸ "
        shown = fit_title(title, room) if room > 0 else title
        if str(fold.title) == title and str(head.label) == shown:
            return
        content = Content(shown)
        fold.set_reactive(Collapsible.title, title)
        head.set_reactive(CollapsibleTitle.label, content)
        head.update(Content.assemble(head.collapsed_symbol if head.collapsed else head.expanded_symbol, " ", content),
                    layout=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "step_fold":  # else ↑/↓ go on to what they do elsewhere (scrolling)
            return isinstance(self.screen.focused, CollapsibleTitle) and self.screen.focused in self.query(
                CollapsibleTitle)
        return True

    def action_step_fold(self, step: int) -> None:
        """↓/↑ on a fold's title: the next (previous) fold shown, the fold to "N more below
        the gate" and on."""
        titles = [t for t in self.query(CollapsibleTitle) if t.parent is not None and t.parent.display]
        focused = self.screen.focused
        if focused not in titles:
            return
        i = titles.index(focused) + step
        if 0 <= i < len(titles):
            titles[i].focus()

    def on_resize(self) -> None:
        """The titles shortened for the new width (or shown whole again), once laid out."""
        self.call_after_refresh(self._refit_titles)

    def _refit_titles(self) -> None:
        for fold in self.query(Collapsible):
            self._title(fold, str(fold.title))

    def action_cycle_target(self) -> None:
        self.target = self.TARGET_CYCLE[(self.TARGET_CYCLE.index(self.target) + 1) % len(self.TARGET_CYCLE)]
        self.border_title = self.title_for(self.target)
        if self._last is not None:
            self.show(*self._last)

    @staticmethod
    def title_for(target: Target | None) -> str:
        return "Injection preview" if target is None else f"Injection preview · as {protocol(target).name} receives it"

    def compose(self) -> ComposeResult:
        yield LineInput(placeholder="Type a message to preview what Muse would inject…", id="query", compact=True)
        files = LineInput(placeholder="Files in context (src/api/users.py …) · ctrl+o: what each assistant loads",
                          id="context-files", compact=True)
        files.display = False  # shown while scoped memories are in play, or when asked for (ctrl+o)
        yield files
        yield Static(id="gauges", markup=False)
        with VerticalScroll(id="preview-scroll"):
            with Collapsible(title="…", collapsed=True, collapsed_symbol="▸", expanded_symbol="▾", id="fold"):
                yield Static(id="injected-text", markup=False)
            yield Static(id="problems", markup=False)
            yield Static(id="left-out", markup=False)
            for reason in REASONS:
                with Collapsible(title=reason, collapsed=True, collapsed_symbol="▸", expanded_symbol="▾",
                                 id=f"left-{reason}", classes="reason"):
                    yield Static(id=f"left-{reason}-list", markup=False, classes="reason-list")

    def on_mount(self) -> None:
        self.border_title = "Injection preview"

    def action_scope(self) -> None:
        """ctrl+o: the files field (shown, focused); with a file typed there, what each
        assistant loads for it."""
        field = self.query_one("#context-files", LineInput)
        if field.display and field.value.strip():
            self.post_message(self.ScopeAsked())
            return
        self.files_wanted = field.display = True
        field.focus()

    def show(self, result: InjectionResult, summary: LeftOut | None = None) -> None:
        self._last = (result, summary)
        delivered = for_target(result, self.target)
        cut = result.count - delivered.count
        result = delivered
        fold = self.query_one("#fold", Collapsible)
        injected = self.query_one("#injected-text", Static)
        problems = self.query_one("#problems", Static)
        left = self.query_one("#left-out", Static)
        gauges = self.query_one("#gauges", Static)
        notes = Text()
        if result.errors:  # one line: the injection below stays in view
            notes.append("⚠ ", style="bold red")
            notes.append(f"{problems_note(result.errors)}\n", style="red")
        if result.disabled_reason == "switch_off":
            fold.title = Content("memory is off for this workspace · nothing injected")  # type: ignore[assignment]  # literal, never markup
            injected.update(Text.assemble(
                ("Memory is off", "bold"), f" — {escape_text(result.enabled_why)}.\n",
                "Press ", ("t", "bold"), " to turn it on for this workspace (or run `memtui enable`)."))
            gauges.display = False
            problems.update(notes)
            problems.display = bool(notes.plain.strip())
            left.update(Text.assemble(("Memory is off: ", "bold"), "press ", ("t", "bold"), " to turn it on."))
            for reason in REASONS:
                self.query_one(f"#left-{reason}", Collapsible).display = False
            self._content = {}  # updated here directly: the next preview updates every part
            self._left_lines = -1
            return
        summary = summary or left_out(result)
        field = self.query_one("#context-files", LineInput)
        wanted = self.files_wanted or bool(field.value) or bool(result.status_counts().get("out_of_scope"))
        if field.display != wanted:
            field.display = wanted
        self._title(fold, fold_title(result, summary))
        if self._content.get("injected-text") != result.text:
            self._content = {**self._content, "injected-text": result.text}
            # folded, its size does not matter until it is unfolded (which lays the screen out)
            injected.update(injected_renderable(result.text), layout=not fold.collapsed)
        gauges.display = True
        self._update(gauges, gauges_renderable(result), layout=False)  # one line across the pane
        if result.redacted:
            notes.append(f"Redacted {result.redacted} secret{'s' if result.redacted != 1 else ''} ", style="bold")
            notes.append("(memory.redactSecrets in the global settings)\n", style="dim")
        model = result.retrieval["model"] if result.retrieval else None
        if model:  # hybrid retrieval (§13): which model scored
            notes.append(f"Hybrid retrieval: score = max(keyword, semantic) · {model['name']} {model['version']}\n",
                         style="dim")
        why = why_renderable(result)
        if why.plain:
            notes.append_text(why)
            notes.append("\n")
        if cut and self.target is not None:
            proto = protocol(self.target)
            notes.append(f"Cut to the {proto.limit} {proto.unit} {proto.name} keeps: {cut} "
                         f"{'entry' if cut == 1 else 'entries'} left out\n", style="bold")
        clipped = [c for c in result.included if c.clipped]
        if clipped:
            notes.append(f"Clipped to {len(clipped[0].line) - 2} characters: {len(clipped)}\n", style="dim")
        notes.rstrip()
        self._update(problems, notes)
        problems.display = bool(notes.plain.strip())
        self._show_left_out(result, left, summary)

    def _show_left_out(self, result: InjectionResult, left: Static, summary: LeftOut | None) -> None:
        summary = summary or left_out(result)
        scored = bool(result.query.strip())
        body = Text(no_wrap=True, overflow="ellipsis")
        body.append(f"Left out ({summary.total})", style="bold")
        if not summary.total:
            body.append("\n  nothing", style="dim")
            self._near = []
        elif summary.pending:  # the last query's near misses, dimmed, until this one's are found
            body.append("  nearest first…", style="dim")
            for line in self._near:
                dimmed = line.copy()
                dimmed.stylize("dim")
                body.append("\n")
                body.append_text(dimmed)
        elif summary.near:
            body.append("  nearest first", style="dim")
            self._near = [candidate_line(c, scored) for c in summary.near]
            for line in self._near:
                body.append("\n")
                body.append_text(line)
        else:
            self._near = []
        # laid out again only when its number of lines changes (each line is cut to the pane's width)
        self._update(left, body, layout=body.plain.count("\n") != self._left_lines)
        self._left_lines = body.plain.count("\n")
        for reason, label in REASONS.items():
            fold = self.query_one(f"#left-{reason}", Collapsible)
            count = summary.counts.get(reason, 0)
            fold.display = count > 0
            if not count:
                continue
            group = summary.samples.get(reason, [])
            more = "" if len(group) >= count else f" (first {len(group)}; all: memtui preview --json)"
            if summary.pending:
                self._title(fold, f"{count} {label}")
                continue  # an open list keeps the last one until this query's is found
            self._title(fold, f"{count} {'more ' if summary.near else ''}{label}{more}")
            self._lists = {**self._lists, reason: (group, scored)}
            if not fold.collapsed:
                self._show_list(reason)

    def _show_list(self, reason: str) -> None:
        """The listed candidates of one reason, made when its fold is open."""
        group, scored = self._lists.get(reason, ([], True))
        lines = Text(no_wrap=True, overflow="ellipsis")
        for i, c in enumerate(group):
            if i:
                lines.append("\n")
            lines.append_text(candidate_line(c, scored))
        self._update(self.query_one(f"#left-{reason}-list", Static), lines)

    @on(Collapsible.Expanded, ".reason")
    def _reason_expanded(self, event: Collapsible.Expanded) -> None:
        if event.collapsible.id is not None:
            self._show_list(event.collapsible.id.removeprefix("left-"))
