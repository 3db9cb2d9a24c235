"""The store: every memory of one home and workspace, one module per job.

- `scan`: files -> entries, incremental, each bad file a reported problem
- `database`: the one connection to muse.db, its schema and its backup before a schema change
- `conversations`: Muse's tables there (conversation rows, FTS5, the rows' change counter)
- `index`: memtui's own tables there (the Markdown index and parse cache, the review state)
- `edits`: checked atomic writes under a writer lock, the trash and the undo log
- `changes`: a change as the undo log records it
- `snapshot`: the immutable view readers get
- `memory`: `MemoryStore`, which composes them (its writes in `writing`)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import lazy_exports

if TYPE_CHECKING:
    from .database import DatabaseError
    from .edits import Change, ChangeLog
    from .memory import MemoryStore, StoreChange
    from .scan import FileRecord
    from .snapshot import Snapshot
    from .writing import PlannedDelete

# Imported on first use, so that `core.store.prepared` (the hook's warm path) does not pay
# for the whole store (sqlite_utils among it).
_WHERE = {"Change": "edits", "ChangeLog": "edits", "DatabaseError": "database",
          "MemoryStore": "memory", "PlannedDelete": "writing", "StoreChange": "memory", "FileRecord": "scan", "Snapshot": "snapshot"}


__getattr__ = lazy_exports(globals(), _WHERE)


__all__ = ["Change", "ChangeLog", "DatabaseError", "FileRecord", "MemoryStore", "PlannedDelete", "Snapshot", "StoreChange"]
