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
from collections.abc import Iterable
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
        # each distinct text once (its key -> its place among them), the places of its repeats
        place: dict[bytes, int] = {}
        first: list[int] = []  # each distinct text's first index in `norms`
        repeats: dict[int, list[int]] = {}  # a text's place -> its indexes, for a text met more than once
        for i, norm in enumerate(norms):
            k = place.setdefault(text_key(norm), len(first))
            if k == len(first):
                first.append(i)
            else:
                repeats.setdefault(k, [first[k]]).append(i)
        texts = [norms[i] for i in first]
        saved = self._read(place)
        if saved is not None:
            known, old_pairs, had = saved
            fresh = [k for k in range(len(first)) if not known[k]]
        if saved is None or len(fresh) * REDO_SHARE > len(first):
            found = set(close_pairs(texts))
            self.compared = len(texts)
            self._write(place, found)
        else:
            found = {(min(x, y), max(x, y)) for x, y in old_pairs}
            for r, c in close_across([texts[k] for k in fresh], texts):
                x = fresh[r]
                if x != c:
                    found.add((min(x, c), max(x, c)))
            self.compared = len(fresh)
            if fresh or had != len(first):  # new texts, or texts gone
                self._write(place, found)
        out = [(i, j) for k in sorted(repeats) for n, i in enumerate(repeats[k]) for j in repeats[k][n + 1:]]
        out += [(i, j) for x, y in sorted(found) for i in repeats.get(x, (first[x],)) for j in repeats.get(y, (first[y],))]
        return out

    def _read(self, place: dict[bytes, int]) -> tuple[bytearray, list[tuple[int, int]], int] | None:
        """Which of the texts (`place`: key -> place) the last run had, its pairs at the
        cutoff whose two texts are both still here (as places) and how many texts it had;
        None when nothing is saved."""
        if self.paths is None:
            return None
        data = read_saved(cache_path(self.paths), MAGIC, _stamp(), MAX_BYTES, log, "saved near-duplicate pairs")
        if data is None:
            return None
        try:
            blob: bytes = data["keys"]
            now = array("i", (place.get(blob[k:k + KEY_BYTES], -1) for k in range(0, len(blob), KEY_BYTES)))
            known = bytearray(len(place))
            for k in now:
                if k >= 0:
                    known[k] = 1
            flat = array("I")
            flat.frombytes(data["pairs"])
            pairs = [(now[a], now[b]) for a, b in zip(flat[::2], flat[1::2])]
            return known, [(x, y) for x, y in pairs if x >= 0 and y >= 0], len(now)
        except Exception as exc:  # a cache is never required
            log.info("saved near-duplicate pairs not read (%s)", exc)
            return None

    def _write(self, keys: Iterable[bytes], pairs: set[tuple[int, int]]) -> None:
        if self.paths is None or not self.paths.home.is_dir():
            return
        flat = array("I", [k for pair in sorted(pairs) for k in pair])
        write_saved(self.paths, cache_path(self.paths), MAGIC, _stamp(), {"keys": b"".join(keys), "pairs": flat.tobytes()},
                    log, "near-duplicate pairs")
