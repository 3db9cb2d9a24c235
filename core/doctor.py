"""Health of the memory store: `status` (on/off and why, paths, counts, problems, index
health) and `repair` (rebuild what memtui derives, in place; SPEC §8)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .actions import layer_counts, open_store
from .paths import Paths
from .settings import load_settings
from .store import MuseDB
from .store.index import busy_or_readonly


def status(paths: Paths) -> dict:
    """Everything `memtui status` reports, as one JSON-ready object."""
    settings = load_settings(paths)
    store = open_store(paths)
    try:
        counts = layer_counts(store.entries())
        problems = list(settings.problems) + store.problems
        data: dict[str, Any] = {
            "enabled": settings.enabled,
            "why": settings.enabled_why,
            "workspace": str(paths.workspace),
            "home": str(paths.home),
            "paths": {
                "user_memory": str(paths.user_root),
                "project_memory": str(paths.project_root),
                "database": str(paths.db_path),
                "global_settings": str(paths.global_settings),
                "workspace_settings": str(paths.workspace_settings),
            },
            "counts": counts,
            "errors": [p.as_dict() for p in problems],
            "index": store.db.health(),
        }
        if store.db.backup_path:
            data["index"]["backup"] = str(store.db.backup_path)
        return data
    finally:
        store.close()


@dataclass
class RepairReport:
    ok: bool
    lines: list[str] = field(default_factory=list)
    entries: int = 0


def repair(paths: Paths) -> RepairReport:
    """Rebuild the Markdown rows and the FTS index inside muse.db from the files. The
    database itself is never renamed, replaced or deleted (it belongs to Muse too): when it
    is locked, read-only or damaged, that is reported and nothing is changed."""
    health = MuseDB(paths.db_path).health()
    state = health.get("state", "ok" if health.get("ok") else "damaged")
    if health.get("exists") and state != "ok":
        reason = health.get("error") or health.get("integrity") or health.get("fts_integrity") or state
        if state == "locked":
            return RepairReport(False, [f"{paths.db_path} is locked by another process (Muse?); nothing changed. "
                                        "Try again when it is idle."])
        if state == "read-only":
            return RepairReport(False, [f"{paths.db_path} is read-only ({reason}); nothing changed."])
        return RepairReport(False, [
            f"{paths.db_path} is damaged ({reason}); memtui does not move or replace Muse's database.",
            "Markdown memories still work without it. Save the conversation memories with `memtui export`, "
            "then let Muse (or sqlite3's .recover) rebuild the file.",
        ])
    store = open_store(paths)
    try:
        n = store.rebuild_index()
    except Exception as exc:
        state = busy_or_readonly(exc)
        what = {"locked": "is locked by another process", "read-only": "is read-only"}.get(state or "", "")
        return RepairReport(False, [f"{paths.db_path} {what or 'could not be rebuilt'} ({exc}); nothing changed."])
    finally:
        store.close()
    return RepairReport(True, [f"Index rebuilt from the Markdown files: {n} entries."], n)
