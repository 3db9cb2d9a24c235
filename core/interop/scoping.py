"""Scope carried between formats (SPEC §16): Cursor's `globs` become a memtui file's `paths:`
on import and come back as `globs` on export; what a format cannot hold is said, never
dropped in silence.

| Muse `paths:` | Cursor `globs` (+ `alwaysApply`) | Claude Code `.claude/rules` `paths:` | Copilot `applyTo` | Windsurf `trigger: glob` + `globs` |

Only Cursor rules are an import and export format with a scope here; the other tools' scoped
files are read by `memtui scope` and the doctor (`core.rules`). What has no equivalent:
Cursor's agent-requested and manual rules (Muse has no model-requested memories), Copilot's
`excludeAgent`, Windsurf's `model_decision`, Continue's `regex`; and a scoped memory exported
to a format without per-file scope (agents-md, claude-code's auto memory, a Cline memory bank).
"""

from __future__ import annotations

from typing import Any

from ..scope import globs_of
from . import Memory

SCOPED_FORMATS = frozenset({"cursor", "jsonl"})  # formats that keep a memory's scope on export


def foreign_scope(meta: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    """The scope an instructions or rule file's frontmatter gives (Claude Code's and Cline's
    `paths`, Copilot's `applyTo`, Windsurf's `trigger: glob` + `globs`, Continue's `globs`), and
    what of it cannot be carried ("" when nothing)."""
    notes = []
    trigger = str(meta.get("trigger") or "").strip()
    globs = globs_of(meta.get("paths")) or globs_of(meta.get("applyTo"))
    if not globs and trigger in ("", "glob"):
        globs = globs_of(meta.get("globs"))
    if meta.get("excludeAgent"):
        notes.append(f"Copilot's `excludeAgent: {meta['excludeAgent']}` cannot be carried (Muse gives every "
                     "assistant the same memories)")
    if trigger == "model_decision":
        notes.append("Windsurf's `trigger: model_decision` cannot be carried: Muse has no model-requested "
                     "memories, so it comes in unscoped and is injected by relevance")
    elif trigger == "manual":
        notes.append("Windsurf's `trigger: manual` cannot be carried: it comes in unscoped, injected by relevance")
    if meta.get("regex"):
        notes.append("Continue's `regex` cannot be carried: Muse scopes by file globs only")
    return globs, "; ".join(notes)


def imported_scope(fmt: str, memory: Memory) -> tuple[tuple[str, ...], str]:
    """(the globs the imported memory's file gets as `paths:`, what could not be carried: "" when nothing)."""
    if fmt == "agents-md":  # an instructions or rule file given by path: its frontmatter's scope
        scope = memory.extra.get("scope")
        note = memory.extra.get("scope_note")
        return (tuple(scope) if isinstance(scope, list) else ()), (note if isinstance(note, str) else "")
    if fmt != "cursor":
        return (), ""
    if memory.extra.get("alwaysApply") is True:
        return (), ""
    listed = memory.extra.get("globs_list")
    globs = globs_of(listed if isinstance(listed, list) and listed else memory.extra.get("globs"))
    if globs:
        return globs, ""
    if memory.description.strip():
        return (), ("an agent-requested Cursor rule (a description, no globs): Muse has no model-requested "
                    "memories, so it comes in unscoped and is injected by relevance")
    return (), "a manual Cursor rule (@-mention only): it comes in unscoped and is injected by relevance"


def exported_scope(fmt: str, paths: tuple[str, ...], extra: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """What a memtui file with `paths:` gives the format's record (`extra` keys), and what
    cannot be carried ("" when nothing)."""
    if not paths:
        return {}, ""
    if fmt == "cursor":
        out: dict[str, Any] = {"globs": ", ".join(paths), "alwaysApply": False}
        if isinstance(extra.get("globs_list"), list) or any("," in g for g in paths):
            out["globs_list"] = list(paths)  # a glob holding a comma only survives as a list item
        else:
            out.pop("globs_list", None)
        return out, ""
    if fmt in SCOPED_FORMATS:
        return {}, ""
    return {}, f"its scope (paths: {', '.join(paths)}) cannot be carried: {fmt} has no per-file scope"
