"""Entry vectors for hybrid retrieval (SPEC §13), computed once per entry text and kept beside
the prepared index in `<home>/cache/`.

One file per model version, `vectors-<model>.npy`: a NumPy structured array of (key, vector)
rows, where the key is a digest of the text that was embedded (so an entry's vector follows its
text, whatever its id, layer or file) and the vector is the model's unit vector in float32 — the
canonical form, used alike when it was just computed and when it was read back, so a score never
depends on whether the cache was warm. The file is read memory-mapped; new texts are embedded in
one batch and the file is rewritten atomically. Like every cache it is never required: a damaged
or unreadable file is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from .. import gate
from ..bounded_reader import open_regular
from ..display import path_text
from ..semantic import Embedder

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("memtui.vectors")

KEY_BYTES = 16
MAX_ROWS = 2_000_000  # a cache past this is started afresh rather than grown forever
MAX_CACHE_BYTES = 1 << 34  # far more than MAX_ROWS rows of any model: a bigger file is not a cache


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


class VectorCache:
    """Vectors for texts: from the cache file when known, else embedded and added to it."""

    def __init__(self, home: Path, embedder: Embedder):
        import numpy as np

        self.embedder = embedder
        self.home = home
        self.path = home / "cache" / f"vectors-{embedder.info.tag}.npy"
        self._dtype = np.dtype([("key", f"S{KEY_BYTES}"), ("vec", "<f4", (embedder.dim,))])
        self._rows = self._read()
        self._where: dict[bytes, int] | None = None

    def _read(self) -> np.ndarray:
        """The cache's rows, memory-mapped; none (so it is rebuilt) when the file is not a
        whole cache of this layout, said on stderr. Opened by the bounded reader: a FIFO or
        device in its place is refused, never waited on."""
        import numpy as np

        empty = np.zeros(0, dtype=self._dtype)
        try:
            fd = open_regular(self.path, MAX_CACHE_BYTES)
        except FileNotFoundError:
            return empty
        except OSError as exc:
            log.warning("vector cache %s not used (%s); rebuilt", path_text(str(self.path)), exc)
            return empty
        try:
            with os.fdopen(fd, "rb") as handle:
                rows = self._map(handle)
        except Exception as exc:  # noqa: BLE001 - any damage: a cache is never required
            log.warning("vector cache %s not used (%s); rebuilt", path_text(str(self.path)), exc)
            return empty
        return empty if rows is None else rows

    def _map(self, handle: BinaryIO) -> np.ndarray | None:
        """The rows of the open .npy file, mapped; ValueError when it is not a whole array of
        this layout (another model's, a cut or padded file)."""
        import numpy as np
        from numpy.lib import format as npy

        version = npy.read_magic(handle)
        header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran, dtype = header(handle)
        if dtype != self._dtype or len(shape) != 1 or fortran:
            raise ValueError("another layout")
        offset = handle.tell()
        if os.fstat(handle.fileno()).st_size != offset + shape[0] * dtype.itemsize:
            raise ValueError("its size does not match its header")
        if shape[0] == 0:
            return None
        rows: np.ndarray = np.memmap(handle, dtype=dtype, mode="r", offset=offset, shape=shape)
        return rows

    def _index(self) -> dict[bytes, int]:
        if self._where is None:
            # NumPy's fixed-width bytes drop trailing NUL bytes when read: pad them back
            self._where = {bytes(key).ljust(KEY_BYTES, b"\0"): i for i, key in enumerate(self._rows["key"].tolist())}
        return self._where

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One float32 unit vector per text (rows in the order given)."""
        import numpy as np

        keys = [text_key(t) for t in texts]
        where = self._index()
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key not in where and key not in missing:
                missing[key] = text
        if missing:
            self._add(list(missing), self.embedder.embed(list(missing.values())).astype(np.float32))
            where = self._index()
        if not keys:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        out = np.asarray(self._rows["vec"][[where[k] for k in keys]], dtype=np.float32)
        if not np.isfinite(out).all():  # a damaged cache (NaN, inf): started afresh
            if len(missing) != len(set(keys)):
                log.warning("vector cache %s holds vectors that are not numbers; rebuilt", path_text(str(self.path)))
                self._rows, self._where = np.zeros(0, dtype=self._dtype), None
                return self.vectors(texts)
            log.warning("the embedding model gave vectors that are not numbers; those texts score 0")
            out = np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)
        return out

    def _add(self, keys: list[bytes], vectors: np.ndarray) -> None:
        import numpy as np

        fresh = np.zeros(len(keys), dtype=self._dtype)
        fresh["key"] = keys
        fresh["vec"] = vectors
        rows = fresh if len(self._rows) + len(fresh) > MAX_ROWS else np.concatenate([np.asarray(self._rows), fresh])
        self._rows = rows
        self._where = None
        buffer = io.BytesIO()
        np.save(buffer, rows, allow_pickle=False)
        try:
            gate.make_dir(self.path.parent, root=self.home, mode=0o700)
            gate.write(self.path, buffer.getvalue(), root=self.home, kind=gate.Kind.DATA)
        except OSError as exc:  # a cache is never required (a refusal of the write gate is one too)
            log.info("vector cache not saved: %s", exc)
