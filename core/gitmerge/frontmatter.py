"""The frontmatter of the merged file: whole when one side left it alone, else key by key."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import markdown
from ..markdown import MemoryFileError, frontmatter_updated_at, strip_eol, tags_of
from .parse import CannotMergeByEntry, Version

_MISSING = object()


def _later(a: Any, b: Any) -> Any:
    ta = frontmatter_updated_at({"updatedAt": a}) if a is not _MISSING else None
    tb = frontmatter_updated_at({"updatedAt": b}) if b is not _MISSING else None
    if tb is not None and (ta is None or tb > ta):
        return b
    return a


def merge_tags(base: Any, ours: Any, theirs: Any) -> list[str]:
    """Ours, without a tag theirs removed, then the tags theirs added."""
    b = set(tags_of({"tags": base})) if base is not _MISSING else set()
    o = list(tags_of({"tags": ours})) if ours is not _MISSING else []
    t = list(tags_of({"tags": theirs})) if theirs is not _MISSING else []
    kept = [x for x in o if not (x in b and x not in t)]
    return kept + [x for x in t if x not in o and x not in b and x not in kept]


def merge_items(base: Any, ours: Any, theirs: Any) -> list[Any]:
    """A list merged as `merge_tags` merges tags: ours, without an item theirs removed, then
    the items theirs added."""
    b, o, t = ([] if v is _MISSING else v for v in (base, ours, theirs))
    kept = [x for x in o if not (x in b and x not in t)]
    return kept + [x for x in t if x not in o and x not in b]


def merge_meta(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any] | None:
    """The merged frontmatter mapping, or None when a key changed differently on both sides."""
    merged: dict[str, Any] = {}
    for key in [*ours, *[k for k in theirs if k not in ours]]:
        vb, vo, vt = base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING)
        if vo == vt:
            value = vo
        elif vo == vb:
            value = vt
        elif vt == vb:
            value = vo
        elif key == "tags":
            value = merge_tags(vb, vo, vt)
            if value == list(tags_of({"tags": vo})) and vo is not _MISSING:
                value = vo
            elif value == list(tags_of({"tags": vt})) and vt is not _MISSING:
                value = vt
        elif key == "updatedAt" and vo is not _MISSING and vt is not _MISSING:
            value = _later(vo, vt)
        elif key == "superseded" and all(v is _MISSING or isinstance(v, list) for v in (vb, vo, vt)):
            value = merge_items(vb, vo, vt)  # SPEC §17: supersessions on both sides are all kept
        else:
            return None
        if value is not _MISSING:
            merged[key] = value
    return merged


def _yaml_key_spans(yaml_lines: Sequence[str], meta: dict[str, Any]) -> list[tuple[Any, int, int]] | None:
    """(key, first line, end line) of each top-level key of a block-style mapping, in order,
    or None when the keys cannot be told apart by line (flow style, several keys on a line)."""
    import yaml

    loader, _ = markdown._parsers()
    try:
        node = yaml.compose("".join(yaml_lines), Loader=loader)
    except yaml.YAMLError:
        return None
    if node is None:
        return []
    if not isinstance(node, yaml.MappingNode) or node.flow_style or len(node.value) != len(meta):
        return None
    starts = [key_node.start_mark.line for key_node, _ in node.value]
    if any(b <= a for a, b in zip(starts, starts[1:])):
        return None
    ends = [*starts[1:], len(yaml_lines)]
    return [(key, start, end) for key, start, end in zip(meta, starts, ends)]


def _dump(meta: dict[str, Any], eol: str) -> list[str]:
    import yaml

    text = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=None, width=10**6)
    return [line + eol for line in text.splitlines()] if meta else []


def render_header(ours: Version, theirs: Version, merged: dict[str, Any], eol: str) -> list[str]:
    """Frontmatter lines holding `merged`: ours' lines, with each key that takes theirs' value
    copied from theirs and a new value (united tags) written in block style; when that does not
    load back as `merged`, the whole mapping written out."""
    candidates: list[list[str]] = []
    o_spans = _yaml_key_spans(ours.header[1:-1], ours.meta) if ours.header else None
    t_spans = _yaml_key_spans(theirs.header[1:-1], theirs.meta) if theirs.header else []
    if o_spans is not None and t_spans is not None:
        o_yaml, t_yaml = list(ours.header[1:-1]), list(theirs.header[1:-1])
        t_lines = {key: t_yaml[start:end] for key, start, end in t_spans}
        body = o_yaml[: o_spans[0][1]] if o_spans else list(o_yaml)
        for key, start, end in o_spans:
            if key not in merged:
                continue
            if merged[key] is ours.meta[key] or merged[key] == ours.meta[key]:
                body += o_yaml[start:end]
            elif key in t_lines and merged[key] == theirs.meta[key]:
                body += t_lines[key]
            else:
                body += _dump({key: merged[key]}, eol)
        for key, value in merged.items():
            if key not in ours.meta:
                body += t_lines[key] if key in t_lines and value == theirs.meta.get(key, _MISSING) else _dump({key: value}, eol)
        fence_open = ours.header[0]
        fence_close = ours.header[-1] if ours.header[-1].endswith(("\n", "\r")) else ours.header[-1] + eol
        candidates.append([fence_open, *body, fence_close])
    candidates.append(["---" + eol, *_dump(merged, eol), "---" + eol])
    for lines in candidates:
        try:
            if markdown.load_frontmatter_yaml("".join(lines[1:-1])) == merged:
                return lines
        except MemoryFileError:
            continue
    raise CannotMergeByEntry("the merged frontmatter cannot be written so that it reads back the same")


@dataclass
class Header:
    ours: list[str]  # the lines in the result when the conflict (if any) is resolved with ours
    theirs: list[str]
    meta_ours: dict[str, Any]
    meta_theirs: dict[str, Any]

    @property
    def conflicting(self) -> bool:
        return self.ours != self.theirs


def merge_header(base: Version, ours: Version, theirs: Version, eol: str) -> Header:
    def norm(version: Version) -> list[str]:
        return [strip_eol(x) for x in version.header]

    t_header = list(theirs.header)
    if norm(ours) == norm(base):
        return Header(t_header, t_header, theirs.meta, theirs.meta)
    if norm(theirs) == norm(base) or norm(theirs) == norm(ours):
        return Header(list(ours.header), list(ours.header), ours.meta, ours.meta)
    merged = merge_meta(base.meta, ours.meta, theirs.meta)
    if merged is None:
        return Header(list(ours.header), t_header, ours.meta, theirs.meta)
    if merged == ours.meta:
        return Header(list(ours.header), list(ours.header), ours.meta, ours.meta)
    if merged == theirs.meta:
        return Header(t_header, t_header, theirs.meta, theirs.meta)
    lines = render_header(ours, theirs, merged, eol)
    return Header(lines, lines, merged, merged)
