"""A cache file of memtui's own in the Muse home (`<home>/cache/<name>-<workspace digest>.bin`):
a marshalled dict behind a magic line and the body's CRC-32, stamped with the code that made
it. Read by the bounded reader, written through the write gate; a cache is never required, so
a missing, damaged, foreign or stale file reads as nothing and a failed write is only logged."""

from __future__ import annotations

import hashlib
import logging
import marshal
import zlib
from pathlib import Path
from typing import Any

from . import gate
from .bounded_reader import read_regular_if_exists
from .paths import Paths


def cache_path(paths: Paths, name: str) -> Path:
    """This workspace's cache file called `name` in the Muse home."""
    digest = hashlib.sha256(str(paths.workspace).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return paths.home / "cache" / f"{name}-{digest}.bin"


def read_saved(path: Path, magic: bytes, stamp: str, limit: int, log: logging.Logger, what: str) -> dict[str, Any] | None:
    """The dict `write_saved` saved at `path` with this `magic` and `stamp`, or None (missing,
    not read, another magic or stamp, a CRC that does not hold; a body that does not load is
    said on `log` as `what` not read)."""
    try:
        raw = read_regular_if_exists(path, limit)
    except OSError:
        return None
    if raw is None or not raw.startswith(magic):
        return None
    body = raw[len(magic) + 4:]
    if zlib.crc32(body) != int.from_bytes(raw[len(magic):len(magic) + 4], "big"):
        return None
    try:
        data = marshal.loads(body)
    except Exception as exc:  # noqa: BLE001 - a cache is never required
        log.info("%s not read (%s)", what, exc)
        return None
    if not isinstance(data, dict):
        log.info("%s not read (a %s, not a table)", what, type(data).__name__)
        return None
    return data if data.get("stamp") == stamp else None


def write_saved(paths: Paths, path: Path, magic: bytes, stamp: str, data: dict[str, Any], log: logging.Logger,
                what: str) -> None:
    """Save `data` (marshallable) at `path`, stamped, through the write gate; a failure is said
    on `log` as `what` not saved."""
    body = marshal.dumps({"stamp": stamp, **data})
    try:
        gate.make_dir(path.parent, root=paths.home, mode=0o700)
        gate.write(path, magic + zlib.crc32(body).to_bytes(4, "big") + body, root=paths.home, kind=gate.Kind.DATA)
    except (OSError, ValueError) as exc:
        log.info("%s not saved: %s", what, exc)
