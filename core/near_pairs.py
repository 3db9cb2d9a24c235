"""The pairs of memories close enough in characters to be near-duplicates (`similarity`'s
cutoff), kept between the doctor's runs: finding them among every memory compares each
with every other of a similar length (quadratic: a minute at 400,000 memories), while most
runs follow a change of a few. The pairs are a property of the texts alone, so what a run
found is saved in the Muse home's cache (`<home>/cache/duplicates-….bin`, rebuildable, never
required): the next run compares only the texts it has not seen with all the others, and
keeps the saved pairs whose two texts are still there. More than a third new texts: the
whole search again. What comes out is every pair at the cutoff, as the whole search finds
it (`similarity.close_pairs`); the doctor's walk then judges them as before."""

from __future__ import annotations

import hashlib
import logging
import os
from array import array
from collections.abc import Sequence
from pathlib import Path

from . import saved_cache
from .paths import Paths
from .saved_cache import read_saved, write_saved
from .similarity import close_across, close_pairs

log = logging.getLogger("memtui.near_pairs")

MAGIC = b"memtui-near-pairs\n"
KEY_BYTES = 16
MAX_BYTES = 1 << 30  # the largest saved file read
REDO_SHARE = 3  # more than 1/REDO_SHARE of the texts new: the whole search is cheaper


def text_key(norm: str) -> bytes:
    return hashlib.blake2b(norm.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


def _stamp() -> str:
    """Changes with the rule: this module's code and the similarity module's, and rapidfuzz's version."""
    import rapidfuzz

    from . import similarity

    digest = hashlib.sha256()
    for module in (similarity.__file__, __file__):
        st = os.stat(module)
        digest.update(f"{module} {st.st_size} {st.st_mtime_ns}\n".encode())
    return f"{digest.hexdigest()[:24]}:{rapidfuzz.__version__}"


def cache_path(paths: Paths) -> Path:
    return saved_cache.cache_path(paths, "duplicates")


class NearPairs:
    """`pairs(norms)`: every pair (i, j) of indexes of `norms` (normalised texts) at the
    near-duplicate cutoff, and every pair of equal texts; found with the help of the saved
    pairs of `paths` (None: no cache, the whole search)."""

    def __init__(self, paths: Paths | None):
        self.paths = paths
        self.compared = 0  # texts compared with all the others in the last call (its cost)

    def __call__(self, norms: list[str]) -> list[tuple[int, int]]:
        keys = [text_key(n) for n in norms]
        where: dict[bytes, list[int]] = {}
        for i, key in enumerate(keys):
            where.setdefault(key, []).append(i)
        distinct = list(where)  # one text each
        texts = [norms[where[key][0]] for key in distinct]
        saved = self._read()
        at = {key: k for k, key in enumerate(distinct)}
        if saved is not None:
            old_keys, old_pairs = saved
            fresh = [k for k, key in enumerate(distinct) if key not in old_keys]
        if saved is None or len(fresh) * REDO_SHARE > len(distinct):
            found = set(close_pairs(texts))
            self.compared = len(texts)
            self._write(distinct, found)
        else:
            found = set()
            for a, b in old_pairs:
                x, y = at.get(a), at.get(b)
                if x is not None and y is not None:
                    found.add((min(x, y), max(x, y)))
            for r, c in close_across([texts[k] for k in fresh], texts):
                x = fresh[r]
                if x != c:
                    found.add((min(x, c), max(x, c)))
            self.compared = len(fresh)
            if fresh or len(old_keys) != len(distinct):
                self._write(distinct, found)
        out = [(i, j) for group in where.values() if len(group) > 1
               for n, i in enumerate(group) for j in group[n + 1:]]
        out += [(i, j) for x, y in sorted(found) for i in where[distinct[x]] for j in where[distinct[y]]]
        return out

    def _read(self) -> tuple[set[bytes], list[tuple[bytes, bytes]]] | None:
        """The texts (keys) of the last run and their pairs at the cutoff, or None."""
        if self.paths is None:
            return None
        data = read_saved(cache_path(self.paths), MAGIC, _stamp(), MAX_BYTES, log, "saved near-duplicate pairs")
        if data is None:
            return None
        try:
            blob: bytes = data["keys"]
            order = [blob[k:k + KEY_BYTES] for k in range(0, len(blob), KEY_BYTES)]
            flat = array("I")
            flat.frombytes(data["pairs"])
            return set(order), [(order[a], order[b]) for a, b in zip(flat[::2], flat[1::2])]
        except Exception as exc:  # a cache is never required
            log.info("saved near-duplicate pairs not read (%s)", exc)
            return None

    def _write(self, keys: Sequence[bytes], pairs: set[tuple[int, int]]) -> None:
        if self.paths is None or not self.paths.home.is_dir():
            return
        flat = array("I", [k for pair in sorted(pairs) for k in pair])
        write_saved(self.paths, cache_path(self.paths), MAGIC, _stamp(), {"keys": b"".join(keys), "pairs": flat.tobytes()},
                    log, "near-duplicate pairs")
