"""A finding of the doctor (SPEC §10): what it is about and why, one line; the kinds the
doctor reports (a face holds them as `finding_set.FoundSet`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
