"""The trash (SPEC §8): the previous version of every file memtui changes or deletes is
kept in `<memory root>/.trash/`, with a manifest, so the last change can be undone — also
after a restart."""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .fileio import ConflictError, atomic_write_bytes, read_if_exists, sha256

MANIFEST = "manifest.json"


@dataclass
class TrashFile:
    path: str  # absolute path of the memory file
    saved: str | None  # name of the saved previous version inside the op folder (None: file did not exist)
    after_sha256: str | None  # what memtui wrote (None: file removed)


@dataclass
class TrashOp:
    id: str
    time: float
    action: str  # delete | edit | create
    summary: str
    files: list[TrashFile] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)  # conversation rows as they were before
    undone: bool = False
    folder: Path | None = None

    def manifest(self) -> dict:
        return {
            "id": self.id,
            "time": self.time,
            "action": self.action,
            "summary": self.summary,
            "files": [f.__dict__ for f in self.files],
            "rows": self.rows,
            "undone": self.undone,
        }


def new_op_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + f"-{time.time_ns() % 1_000_000:06d}-" + uuid.uuid4().hex[:6]


class Trash:
    """The trash folders of the memory roots (each op lives in the root its files are in)."""

    def __init__(self, roots: list[Path]):
        self.roots = roots

    @staticmethod
    def folder(root: Path, op_id: str) -> Path:
        return root / ".trash" / op_id

    def save(self, root: Path, op: TrashOp, previous: dict[str, bytes | None]) -> Path:
        """Write the previous versions of `op`'s files and the manifest, before the change."""
        folder = self.folder(root, op.id)
        folder.mkdir(parents=True, exist_ok=True)
        for i, tf in enumerate(op.files):
            data = previous.get(tf.path)
            if data is None:
                tf.saved = None
                continue
            tf.saved = f"{i:03d}-{Path(tf.path).name}"
            atomic_write_bytes(folder / tf.saved, data)
        op.folder = folder
        self.write_manifest(op)
        return folder

    def write_manifest(self, op: TrashOp) -> None:
        assert op.folder is not None
        data = json.dumps(op.manifest(), indent=2, ensure_ascii=False).encode()
        atomic_write_bytes(op.folder / MANIFEST, data)

    def ops(self) -> list[TrashOp]:
        found: list[TrashOp] = []
        for root in self.roots:
            base = root / ".trash"
            if not base.is_dir():
                continue
            for folder in base.iterdir():
                manifest = folder / MANIFEST
                try:
                    data = json.loads(manifest.read_text("utf-8"))
                except (OSError, ValueError):
                    continue
                op = TrashOp(
                    id=data["id"], time=data["time"], action=data["action"], summary=data.get("summary", ""),
                    files=[TrashFile(**f) for f in data.get("files", [])], rows=data.get("rows", []),
                    undone=bool(data.get("undone")), folder=folder,
                )
                found.append(op)
        found.sort(key=lambda o: (o.time, o.id))
        return found

    def last(self) -> list[TrashOp]:
        """The parts (one per root) of the most recent operation not yet undone."""
        pending = [op for op in self.ops() if not op.undone]
        if not pending:
            return []
        last_id = pending[-1].id
        return [op for op in pending if op.id == last_id]

    @staticmethod
    def check_restorable(op: TrashOp) -> None:
        for tf in op.files:
            current = read_if_exists(Path(tf.path))
            now = None if current is None else sha256(current)
            if now != tf.after_sha256:
                kept = f" (the previous version is kept in {op.folder})" if op.folder else ""
                raise ConflictError(f"{tf.path} changed since memtui wrote it; not restored{kept}")

    @staticmethod
    def restore_files(op: TrashOp) -> list[Path]:
        restored = []
        assert op.folder is not None
        for tf in op.files:
            path = Path(tf.path)
            if tf.saved is None:
                if path.exists():
                    os.unlink(path)
            else:
                atomic_write_bytes(path, (op.folder / tf.saved).read_bytes())
            restored.append(path)
        return restored
