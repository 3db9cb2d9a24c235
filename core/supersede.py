"""Supersession and contradictions (SPEC §17): `memtui supersede OLD --by NEW`, the doctor's
`contradiction` findings, and the pairs a person kept as not contradicting.

**The Markdown form** (docs/supersession.md). A superseded entry stays where it is, byte for
byte; its file's frontmatter lists it under `superseded`, with what replaced it:

    ---
    superseded:
    - entry: The API server listens on port 8080
      by: project:context.md
      by_text: The API server listens on port 9090
    ---

    - The API server listens on port 8080
    - The API server listens on port 9090

`entry` is the superseded entry's exact text (every entry of the file with that text);
`by` is where the new memory lives (`user:<path>`, `project:<path>`, relative to the layer's
memory root, or `conversation:<id>`), and `by_text` its text. The body is never touched, so
SPEC §2's entry rules and neighbour invariant hold for every file, with or without the key;
the file is readable as it is; git's merge driver unites the lists (like `tags`); the jsonl
backup carries the file whole. An entry whose text changes afterwards is no longer listed,
so it is active again: the edit is a new statement.

What a person keeps as not contradicting ("keep both") is theirs, a decision like a review: a
key per pair of texts (`kept:<key>`) in memtui's review table in muse.db, never in a memory
file; undoable like an accepted review."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import markdown as md
from .model import Entry, Layer
from .similarity import normalise_for_duplicates

if TYPE_CHECKING:
    from .doctor import Finding
    from .store import MemoryStore
    from .store.edits import Change

KEY = "superseded"
KEPT = "kept:"  # a pair kept as not contradicting, among the review table's keys


class SupersedeRefused(ValueError):
    """`supersede` cannot be done as asked (the message says why); nothing was changed."""


# ---------------------------------------------------------------------- the frontmatter list
def listed(meta: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(entry text, by, by_text) for each well-formed item of the frontmatter's `superseded`
    list; anything else there is left alone and means nothing."""
    items = meta.get(KEY)
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("entry"), str) and isinstance(item.get("by"), str):
            by_text = item.get("by_text")
            out.append((item["entry"], item["by"], by_text if isinstance(by_text, str) else ""))
    return out


def place_of(entry: Entry) -> str:
    """Where an entry lives, as the `by` of a supersession names it."""
    if entry.layer == Layer.CONVERSATION:
        return f"conversation:{entry.id}"
    return f"{entry.layer}:{entry.rel_path}"


def superseding_id(by: str, by_text: str, roots: dict[str, Path]) -> str:
    """The id of the entry `by` and `by_text` name (how the store makes ids), or `by` itself
    when its layer's root is unknown here."""
    layer, _, rel = by.partition(":")
    if layer == Layer.CONVERSATION:
        return rel
    root = roots.get(layer)
    if root is None or not rel:
        return by
    return md.entry_id(layer, str(root / rel), by_text, 0)


def _yaml_block(items: list[Any], eol: str) -> list[str]:
    import yaml

    dumped = yaml.safe_dump({KEY: items}, allow_unicode=True, sort_keys=False, default_flow_style=False,
                            width=10**6)
    return [line + eol for line in dumped.splitlines()]


def mark_superseded(parsed: md.ParsedFile, old_text: str, by: str, by_text: str, today: date) -> str:
    """The file with `old_text` listed as superseded by `by` in its frontmatter (made when the
    file has none); the body is unchanged. Raises md.EditRefused when the frontmatter cannot
    take the list (a `superseded` that is not a list, flow-style frontmatter)."""
    import yaml

    item = {"entry": old_text, "by": by, "by_text": by_text}
    lines = list(parsed.lines)
    eol = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    fm = parsed.frontmatter_lines
    if fm is None:
        bom = md.BOM if lines and lines[0].startswith(md.BOM) else ""
        if bom:
            lines[0] = lines[0][len(bom):]
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += eol
        head = [bom + "---" + eol, *_yaml_block([item], eol), f"updatedAt: {today.isoformat()}{eol}", "---" + eol]
        text = "".join(head + lines)
    else:
        existing = parsed.meta.get(KEY)
        if existing is not None and not isinstance(existing, list):
            raise md.EditRefused(f"its frontmatter's `{KEY}` is not a list; fix it by hand first")
        start, end = fm
        block = "".join(lines[start:end])
        if block.strip().startswith("{"):
            raise md.EditRefused(f"its frontmatter is one flow mapping; add `{KEY}` by hand")
        lines = md.touch_updated_at(lines, fm, today)
        new_block = _yaml_block([*(existing or []), item], eol)
        at, until = end, end
        if existing is not None:
            root = yaml.compose(block, Loader=yaml.SafeLoader)
            found = [(k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == KEY] \
                if isinstance(root, yaml.MappingNode) else []
            if len(found) != 1:
                raise md.EditRefused(f"its frontmatter's `{KEY}` could not be found to extend; fix it by hand")
            key, value = found[0]
            if key.start_mark.column != 0:
                raise md.EditRefused(f"its frontmatter's `{KEY}` is not a top-level block key; fix it by hand")
            at = start + key.start_mark.line
            until = start + value.end_mark.line + (1 if value.end_mark.column else 0)
        lines[at:until] = new_block
        text = "".join(lines)
    after = md.parse_text(text)
    if [(e.text, e.section) for e in after.entries] != [(e.text, e.section) for e in parsed.entries] \
            or (old_text, by, by_text) not in listed(after.meta):
        raise md.EditRefused("the file would not read back with the same entries; nothing changed")
    return text


# ---------------------------------------------------------------------- the action
def supersede(store: MemoryStore, old: Entry, new: Entry) -> Change:
    """Mark `old` superseded by `new` (SPEC §17): `old` stays where it is and leaves the
    injection (status `superseded`). One undoable change of `old`'s file."""
    from .store.edits import ConflictError

    if old.id == new.id:
        raise SupersedeRefused("a memory cannot supersede itself")
    if old.superseded_by:
        raise SupersedeRefused(f"{old.source_ref} is already superseded")
    if new.archived:
        raise SupersedeRefused(f"{new.source_ref} is itself archived or superseded; it cannot replace another")
    if old.layer == Layer.CONVERSATION or old.path is None:
        raise SupersedeRefused(f"{old.source_ref} is a conversation memory: only a Markdown memory can be marked "
                               "superseded for now; delete or edit it instead")
    rec = store.file_record(old.path)
    if rec is None or old.id not in {e.id for e in rec.entries}:
        raise ConflictError(f"{old.path}: the entry no longer exists; reload and try again")
    try:
        data = mark_superseded(rec.parsed, old.text, place_of(new), new.text, date.today()).encode("utf-8")
    except md.EditRefused as exc:
        raise SupersedeRefused(f"{old.rel_path}: {exc}") from None
    summary = f"supersede {old.source_ref} by {new.source_ref}"
    change = store.log.apply("supersede", summary, {old.path: (old.layer, data)}, {old.path: rec.data})
    store.reload(changed=[old.path], conversation=False, reason="write")
    return change


def superseding(store: MemoryStore, entry: Entry) -> Entry | None:
    """The entry that superseded `entry`, while it is there."""
    return store.get(entry.superseded_by) if entry.superseded_by else None


# ---------------------------------------------------------------------- kept apart
def pair_key(a: str, b: str) -> str:
    """The key of a pair of texts kept as not contradicting: the same whichever comes first."""
    first, second = sorted((normalise_for_duplicates(a), normalise_for_duplicates(b)))
    return hashlib.sha256(f"{first}\0{second}".encode()).hexdigest()[:32]


def kept_apart(store: MemoryStore) -> set[str]:
    """The pair keys the person kept as not contradicting (a read: nothing is created)."""
    return {key[len(KEPT):] for key in store.review_state.accepted() if key.startswith(KEPT)}


def keep_both(store: MemoryStore, a: Entry, b: Entry) -> Change:
    """Remember that `a` and `b` do not contradict: the doctor never reports the pair again
    (while their texts stay as they are). A decision of the person's, kept like a review, in
    memtui's review table (`kept:<pair key>`); one undoable change."""
    from .store.edits import ReviewChange

    layer = Layer.PROJECT if Layer.PROJECT in (a.layer, b.layer) else a.layer  # seen where its memories are
    summary = f"keep both {a.source_ref} and {b.source_ref}"
    return store.log.apply("keep_both", summary, {}, {}, reviews=[ReviewChange(KEPT + pair_key(a.text, b.text), a.id, layer)])


# ---------------------------------------------------------------------- the doctor
def contradiction_findings(store: MemoryStore, entries: list[Entry]) -> list[Finding]:
    """Pairs of visible entries (any layers; archived and superseded ones are not visible) that
    state different values for the same thing (`contradictions.contradiction_pairs`), each
    reported on both sides, naming the other; pairs kept apart are left out."""
    from .contradictions import contradiction_pairs
    from .doctor import Finding, reported_order

    visible = sorted((e for e in entries if not e.archived), key=reported_order)
    try:
        kept = kept_apart(store)
    except Exception:  # an unreadable table hides nothing: every pair is reported
        kept = set()

    def skip(i: int, j: int) -> bool:
        return bool(kept) and pair_key(visible[i].text, visible[j].text) in kept

    out = []
    for i, j, found in contradiction_pairs([e.text for e in visible], skip):
        first, later = visible[i], visible[j]
        for mine, theirs, said, other_said in ((later, first, found.theirs, found.mine),
                                                (first, later, found.mine, found.theirs)):
            out.append(Finding("contradiction", mine.source_ref,
                               f"{found.kind}: says {said.shown} where {theirs.source_ref} says {other_said.shown}",
                               mine.id, mine.layer, other_id=theirs.id, other_source=theirs.source_ref))
    return out
