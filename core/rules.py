"""Which memory and rule files each assistant would load for a file of the workspace, and
why (SPEC §16, `memtui scope PATH`); and the rules that can never fire (the doctor's
`never_fires`).

Each assistant's documented behaviour, as read here:

- muse: a memory file with `paths:` is a candidate when a glob matches; one without is always one.
- claude-code: `CLAUDE.md`, `.claude/CLAUDE.md` and `CLAUDE.local.md` at the root, always;
  `.claude/rules/**/*.md`, always without `paths:`, else when a file matching one of its
  `paths:` (a YAML list of globs) is read; a `CLAUDE.md` in a sub-folder when files below it are read.
- cursor: `.cursor/rules/**/*.mdc`: `alwaysApply: true` always; else `globs` (comma-separated
  or a list) attach it to matching files; else a `description` lets the agent request it;
  else it is manual (`@rule`). A `.md` in `.cursor/rules` is not a rule. `.cursorrules` and
  a root `AGENTS.md` always; a nested `AGENTS.md` for its folder.
- copilot: `.github/copilot-instructions.md` always; `.github/instructions/**/*.instructions.md`
  by `applyTo: "a,b"` (`excludeAgent` keeps one of Copilot's agents from reading it).
- windsurf: `.windsurf/rules/*.md` by `trigger:` `always_on`, `glob` (+ `globs:`),
  `model_decision` (the model decides from its description) or `manual`; `.windsurfrules`
  and a root `AGENTS.md` always; a nested `AGENTS.md` for its folder.
- cline: `.clinerules/` (each `.md`; `paths:` makes one conditional on the files in context:
  mentioned, open, edited) or a single `.clinerules` file; a root `AGENTS.md` always.
- codex: `AGENTS.override.md`, else `AGENTS.md`, in each folder from the root down to where it
  works: the root's always, a sub-folder's for the files below it.
- gemini: `GEMINI.md` at the root always; in a sub-folder when a tool touches a file below it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

from . import scope
from .workspace_files import Listing

ASSISTANTS = ("muse", "claude-code", "cursor", "copilot", "windsurf", "cline", "codex", "gemini")
MAX_RULE_BYTES = 1 << 20


class Load(StrEnum):
    """How a rule file is loaded by its assistant."""

    ALWAYS = "always"
    GLOB = "glob"  # when a file in context matches its globs
    NESTED = "nested"  # for the files below its folder
    MODEL = "model_decides"  # the model requests it from its description
    MANUAL = "manual"  # only when attached by hand
    IGNORED = "ignored"  # its assistant never reads it (see `problem`)


@dataclass(frozen=True)
class Rule:
    assistant: str
    file: str  # workspace-relative ("/" separators); a user memory file: its path as shown
    load: Load
    globs: tuple[str, ...] = ()
    folder: str = ""  # NESTED: the folder it covers
    problem: str = ""  # why its assistant will not read it as it is written
    notes: tuple[str, ...] = ()  # what else is worth knowing (keys its assistant ignores)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"assistant": self.assistant, "file": self.file, "load": str(self.load)}
        if self.globs:
            out["globs"] = list(self.globs)
        if self.folder:
            out["folder"] = self.folder
        if self.problem:
            out["problem"] = self.problem
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class Decision:
    rule: Rule
    state: str  # loaded | not_loaded | model_decides | manual | ignored
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {**self.rule.as_dict(), "state": self.state, "why": self.why}


# ---------------------------------------------------------------------- reading rule files
def _read(workspace: Path, rel: str) -> str | None:
    from .bounded_reader import read_regular

    try:
        return read_regular(workspace / rel, MAX_RULE_BYTES, follow_symlinks=False).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _frontmatter(text: str, lenient: bool) -> tuple[dict[str, Any] | None, str]:
    """(meta, problem): the file's frontmatter mapping ({} without one), or None and why it
    cannot be read. `lenient`: as Cursor and Windsurf read theirs (a bare `globs: **/*.ts`)."""
    from .interop._files import SourceError, load_yaml_mapping, split_frontmatter

    split = split_frontmatter(text)
    if split.meta_text is None:
        return {}, ""
    try:
        if lenient:
            from .interop.cursor import rule_frontmatter

            return rule_frontmatter(split.meta_text), ""
        return load_yaml_mapping(split.meta_text), ""
    except SourceError as exc:
        return None, f"its frontmatter cannot be read ({exc})"


def _folder(rel: str) -> str:
    parent = PurePosixPath(rel).parent.as_posix()
    return "" if parent == "." else parent


def _under(path: str, folder: str) -> bool:
    return not folder or path == folder or path.startswith(folder + "/")


def _nested(assistant: str, files: Sequence[str], names: Sequence[str]) -> list[Rule]:
    """One file per folder (the first of `names` found there): the root's always, the others for their folder."""
    by_folder: dict[str, str] = {}
    for rel in files:
        name = PurePosixPath(rel).name
        if name in names:
            folder = _folder(rel)
            if folder.endswith("/.claude") or folder == ".claude":
                folder = _folder(folder)
            best = by_folder.get(folder)
            if best is None or names.index(name) < names.index(PurePosixPath(best).name):
                by_folder[folder] = rel
    return [Rule(assistant, rel, Load.ALWAYS if not folder else Load.NESTED, folder=folder)
            for folder, rel in sorted(by_folder.items())]


def _claude_code_rule(rel: str, meta: dict[str, Any]) -> Rule:
    """A `.claude/rules` file's mode from its `paths:` (a YAML list of globs)."""
    notes = ("`globs:` is Cursor's key: Claude Code reads `paths:`, so this rule loads for every file",) \
        if "globs" in meta and "paths" not in meta else ()
    paths = meta.get("paths")
    if paths is None or paths == []:
        return Rule("claude-code", rel, Load.ALWAYS, notes=notes)
    if isinstance(paths, list) and all(isinstance(p, str) for p in paths):
        return Rule("claude-code", rel, Load.GLOB, scope.globs_of(paths))
    return Rule("claude-code", rel, Load.IGNORED, scope.globs_of(paths),
                problem="`paths:` is not a YAML list of globs (`paths:` then `  - \"src/**\"` lines), "
                        "the form Claude Code reads")


def cursor_rule(rel: str, meta: dict[str, Any]) -> Rule:
    """A `.mdc` rule's mode from its frontmatter (`alwaysApply`, `globs`, `description`)."""
    always = meta.get("alwaysApply")
    globs = scope.globs_of(meta.get("globs"))
    problem = ""
    if always is not None and not isinstance(always, bool):
        problem = (f"`alwaysApply: {json.dumps(always)}` is a string, not the boolean true: Cursor does not apply it always"
                   if str(always).strip().lower() == "true" else f"`alwaysApply: {json.dumps(str(always))}` is not a boolean")
    if always is True:
        return Rule("cursor", rel, Load.ALWAYS, globs)
    if globs:
        return Rule("cursor", rel, Load.GLOB, globs, problem=problem)
    if str(meta.get("description") or "").strip():
        return Rule("cursor", rel, Load.MODEL, problem=problem)
    return Rule("cursor", rel, Load.IGNORED if problem else Load.MANUAL, problem=problem)


def _copilot_rule(rel: str, meta: dict[str, Any]) -> Rule:
    """A `.instructions.md` file's mode from its `applyTo` (and `excludeAgent`, noted)."""
    notes = (f"`excludeAgent: {meta['excludeAgent']}`: Copilot's {meta['excludeAgent']} does not read it",) \
        if meta.get("excludeAgent") else ()
    globs = scope.globs_of(meta.get("applyTo"))
    if globs:
        return Rule("copilot", rel, Load.GLOB, globs, notes=notes)
    return Rule("copilot", rel, Load.MANUAL, notes=notes + ("no `applyTo`: attached by hand only",))


WINDSURF_TRIGGERS = {"always_on": Load.ALWAYS, "glob": Load.GLOB, "model_decision": Load.MODEL, "manual": Load.MANUAL}


def windsurf_rule(rel: str, meta: dict[str, Any]) -> Rule:
    trigger = str(meta.get("trigger") or "").strip()
    load = WINDSURF_TRIGGERS.get(trigger)
    globs = scope.globs_of(meta.get("globs"))
    if load is None:
        return Rule("windsurf", rel, Load.IGNORED, globs,
                    problem=f"`trigger: {trigger or '(none)'}` is not always_on, glob, model_decision or manual")
    if load is Load.GLOB and not globs:
        return Rule("windsurf", rel, Load.IGNORED, problem="`trigger: glob` without `globs:`")
    return Rule("windsurf", rel, load, globs if load is Load.GLOB else ())


def _cline_rule(rel: str, meta: dict[str, Any]) -> Rule:
    globs = scope.globs_of(meta.get("paths"))
    return Rule("cline", rel, Load.GLOB if globs else Load.ALWAYS, globs)


LEGACY = ("the legacy single-file form",)


@dataclass(frozen=True)
class Layout:
    """Where one assistant keeps its memory and rule files and how it reads them: every
    assistant has the same shape (`_rules_of`), its differences are these fields."""

    assistant: str
    always: tuple[str, ...] = ()  # files at the root it always loads
    legacy: tuple[str, ...] = ()  # the same, in a form it still reads (noted as such)
    below: tuple[str, ...] = ()  # a file of this name in a sub-folder: for the files below it
    folder: str = ""  # its rules folder: each file below it whose name ends in `reads` is a rule
    reads: tuple[str, ...] = ()
    misnamed: tuple[str, str] = ("", "")  # (name ending, problem): a file there it never reads
    lenient: bool = False  # its frontmatter read as Cursor and Windsurf read theirs
    unreadable: str = "it cannot be read"  # the problem of a file that is not UTF-8 text
    skips: str = ""  # said after a frontmatter's problem: what the assistant does then
    rule: Callable[[str, dict[str, Any]], Rule] | None = None  # a rule file's mode from its frontmatter
    nested: tuple[str, ...] = ()  # one file per folder (the first of these there): the root's always, the others below


LAYOUTS = (
    Layout("claude-code", always=("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"), below=("CLAUDE.md",),
           folder=".claude/rules/", reads=(".md",), unreadable="it cannot be read as UTF-8 text",
           skips="; Claude Code skips it", rule=_claude_code_rule),
    Layout("cursor", legacy=(".cursorrules",), folder=".cursor/rules/", reads=(".mdc",),
           misnamed=(".md", "a `.md` file in .cursor/rules: Cursor reads `.mdc` rules"), lenient=True,
           unreadable="it cannot be read; Cursor skips it without a word", skips="; Cursor skips it without a word",
           rule=cursor_rule, nested=("AGENTS.md",)),
    Layout("copilot", always=(".github/copilot-instructions.md",), folder=".github/instructions/",
           reads=(".instructions.md",), misnamed=(".md", "Copilot reads `NAME.instructions.md` files only"),
           rule=_copilot_rule),
    Layout("windsurf", legacy=(".windsurfrules",), folder=".windsurf/rules/", reads=(".md",), lenient=True,
           rule=windsurf_rule, nested=("AGENTS.md",)),
    Layout("cline", always=(".clinerules",), folder=".clinerules/", reads=(".md", ".txt"), rule=_cline_rule,
           nested=("AGENTS.md",)),
    Layout("codex", nested=("AGENTS.override.md", "AGENTS.md")),
    Layout("gemini", nested=("GEMINI.md",)),
)


def _rules_of(layout: Layout, workspace: Path, files: Sequence[str]) -> list[Rule]:
    """One assistant's files: those it always loads, those of its sub-folders, each file of its
    rules folder (ignored, with the reason, when it cannot be read), then the nested ones."""
    who = layout.assistant
    out = [Rule(who, rel, Load.ALWAYS) for rel in layout.always if rel in files]
    out += [Rule(who, rel, Load.ALWAYS, notes=LEGACY) for rel in layout.legacy if rel in files]
    if layout.below:  # the root's are among `always`
        out += [r for r in _nested(who, files, layout.below) if r.load is Load.NESTED]
    for rel in files if layout.folder else ():
        if not rel.startswith(layout.folder):
            continue
        if rel.endswith(layout.reads):
            out.append(_read_rule(layout, workspace, rel))
        elif layout.misnamed[0] and rel.endswith(layout.misnamed[0]):
            out.append(Rule(who, rel, Load.IGNORED, problem=layout.misnamed[1]))
    if layout.nested:
        out += _nested(who, files, layout.nested)
    return out


def _read_rule(layout: Layout, workspace: Path, rel: str) -> Rule:
    text = _read(workspace, rel)
    if text is None:
        return Rule(layout.assistant, rel, Load.IGNORED, problem=layout.unreadable)
    meta, problem = _frontmatter(text, layout.lenient)
    if meta is None:
        return Rule(layout.assistant, rel, Load.IGNORED, problem=problem + layout.skips)
    assert layout.rule is not None  # a layout with a rules folder says how it reads a rule
    return layout.rule(rel, meta)


def discover(workspace: Path, listing: Listing, muse: Iterable[tuple[str, tuple[str, ...]]] = ()) -> list[Rule]:
    """Every memory and rule file of the workspace, per assistant. `muse`: Muse's memory files
    as (label, globs)."""
    files = listing.files
    out = [Rule("muse", label, Load.GLOB if globs else Load.ALWAYS, globs) for label, globs in muse]
    for layout in LAYOUTS:
        out += _rules_of(layout, workspace, files)
    return out


# ---------------------------------------------------------------------- deciding
def decide(rule: Rule, path: str) -> Decision:
    """Whether `rule`'s assistant loads it when working on `path` (workspace-relative)."""
    if rule.load is Load.IGNORED:
        return Decision(rule, "ignored", f"never loaded: {rule.problem}")
    if rule.load is Load.ALWAYS:
        return Decision(rule, "loaded", "always")
    if rule.load is Load.NESTED:
        if _under(path, rule.folder):
            return Decision(rule, "loaded", f"nested folder: {rule.folder}/")
        return Decision(rule, "not_loaded", f"only for files below {rule.folder}/")
    if rule.load is Load.GLOB:
        hit = next((g for g in rule.globs if scope.matches([g], path)), None)
        if hit is not None:
            return Decision(rule, "loaded", f"glob matched: {hit}")
        return Decision(rule, "not_loaded", f"no glob matches: {', '.join(rule.globs)}")
    if rule.load is Load.MODEL:
        return Decision(rule, "model_decides", "the model decides from its description")
    return Decision(rule, "manual", "only when attached by hand")


@dataclass
class ScopeReport:
    path: str
    decisions: list[Decision]
    never_fires: list[NeverFires] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path,
                "assistants": {a: [d.as_dict() for d in self.decisions if d.rule.assistant == a] for a in ASSISTANTS},
                "never_fires": [n.as_dict() for n in self.never_fires]}


@dataclass(frozen=True)
class NeverFires:
    rule: Rule
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"assistant": self.rule.assistant, "file": self.rule.file, "reason": self.reason}


def never_fires(rules: Sequence[Rule], listing: Listing) -> list[NeverFires]:
    """The rules that can never fire: one its assistant ignores as written, or a scoped one
    whose globs match no file of the workspace (said only when the listing is complete)."""
    out = []
    for rule in rules:
        if rule.load is Load.IGNORED or (rule.problem and "alwaysApply" in rule.problem):
            out.append(NeverFires(rule, rule.problem))
        elif rule.load is Load.GLOB and listing.complete and not scope.matching(rule.globs, listing.files):
            out.append(NeverFires(rule, f"no file of the workspace matches {', '.join(rule.globs)}"))
    return out


def report(workspace: Path, path: str, listing: Listing, muse: Iterable[tuple[str, tuple[str, ...]]] = ()) -> ScopeReport:
    rules = discover(workspace, listing, muse)
    return ScopeReport(path, [decide(r, path) for r in rules], never_fires(rules, listing))
