"""The Markdown form of supersession (SPEC §17), pure: what a file's frontmatter says is
superseded and by what, and the file with one more entry listed. docs/supersession.md says
why the form is this one.

    ---
    superseded:
    - entry: The API server listens on port 8080
      by: project:context.md
      by_text: The API server listens on port 9090
    ---

`entry` is the superseded entry's exact text (every entry of the file with that text); `by`
is where the new memory lives (`user:<path>`, `project:<path>`, relative to the layer's
memory root, or `conversation:<id>`), and `by_text` its text. The body is never touched, so
SPEC §2's entry rules and neighbour invariant hold for every file, with or without the key."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path
from typing import Any

from . import markdown as md
from .model import Entry, Layer
from .similarity import normalise_for_duplicates

KEY = "superseded"
KEPT = "kept:"  # a pair kept as not contradicting, among the review table's keys


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


def pair_key(a: str, b: str) -> str:
    """The key of a pair of texts kept as not contradicting: the same whichever comes first."""
    first, second = sorted((normalise_for_duplicates(a), normalise_for_duplicates(b)))
    return hashlib.sha256(f"{first}\0{second}".encode()).hexdigest()[:32]


