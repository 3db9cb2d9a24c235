"""A finding of the doctor (SPEC §10): what it is about and why, one line; the kinds the
doctor reports, and each entry's findings for a face's badges."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .model import Entry

KINDS = ("stale_reference", "duplicate", "unreachable", "never_injected", "invalid", "index", "already_loaded",
         "over_limit", "unreviewed", "conflict", "never_fires", "contradiction",
         "expired", "to_evict")

@dataclass(frozen=True)
class Finding:
    kind: str
    source: str  # the entry's source (path:line or conversation:…), or the file / database
    reason: str  # one line
    entry_id: str | None = None
    layer: str | None = None
    other_id: str | None = None  # a `contradiction`'s other entry (SPEC §17)
    other_source: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "source": self.source, "id": self.entry_id, "layer": self.layer,
                "reason": self.reason}
        if self.other_id is not None:
            data["other"] = {"id": self.other_id, "source": self.other_source}
        return data



def conflict_file(finding: Finding) -> tuple[str | None, str]:
    """The (layer, memory-root-relative path) a `conflict` finding is about."""
    return finding.layer, finding.source.rpartition(":")[0]


def findings_by_entry(found: Iterable[Finding], entries: Callable[[], Iterable[Entry]]) -> dict[str, tuple[Finding, ...]]:
    """Each entry's findings, for a face's badges: its own, and a `conflict` of its file (a
    half-merged file is marked on every entry it still has). `entries` is called only when a
    file-level finding needs them."""
    by_entry: dict[str, list[Finding]] = {}
    files: dict[tuple[str | None, str], list[Finding]] = {}
    for finding in found:
        if finding.entry_id:
            by_entry.setdefault(finding.entry_id, []).append(finding)
        elif finding.kind == "conflict":
            files.setdefault(conflict_file(finding), []).append(finding)
    if files:
        for entry in entries():
            for finding in files.get((entry.layer, entry.rel_path), ()):
                by_entry.setdefault(entry.id, []).append(finding)
    return {k: tuple(v) for k, v in by_entry.items()}
