"""Supersession and contradictions, the actions (SPEC §17): `memtui supersede OLD --by NEW`
and the pairs a person keeps as not contradicting. The file form is `supersession`'s.

A superseded entry stays where it is, byte for byte; its file's frontmatter lists it under
`superseded`, with what replaced it. What a person keeps as not contradicting ("keep both")
is theirs, a decision like a review: a key per pair of texts (`kept:<key>`) in memtui's
review table in muse.db, never in a memory file; undoable like an accepted review."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from . import markdown as md
from .model import Entry, Layer
from .supersession import KEPT, mark_superseded, pair_key, place_of

if TYPE_CHECKING:
    from .store import MemoryStore
    from .store.edits import Change


class SupersedeRefused(ValueError):
    """`supersede` cannot be done as asked (the message says why); nothing was changed."""


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


