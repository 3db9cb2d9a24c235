"""The store: every memory of one home and workspace, one module per job.

- `scan`: files -> entries, incremental, each bad file a reported problem
- `index`: muse.db (schema, FTS5, conversation rows, the parsed-entry cache)
- `edits`: checked atomic writes under a writer lock, the trash and the undo log
- `snapshot`: the immutable view readers get
- `memory`: `MemoryStore`, which composes them
"""

from .edits import Change, ChangeLog
from .index import DatabaseError, MuseDB
from .memory import MemoryStore, StoreChange
from .scan import FileRecord
from .snapshot import Snapshot

__all__ = ["Change", "ChangeLog", "DatabaseError", "FileRecord", "MemoryStore", "MuseDB", "Snapshot", "StoreChange"]
