"""SPEC §13 around the rule: the semantic scores and the decay factors `core.injection.inject`
takes per layer (`ExtraScores`), computed here because the rule knows neither the model nor the
injection history.

Imported only when a §13 setting is on, so keyword retrieval never loads numpy or the model.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .history import stats as history_stats
from .injection import ExtraScores, LayerCandidates
from .model import RetrievalStatus
from .paths import Paths, Problem
from .settings import Settings

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

log = logging.getLogger("memtui.retrieval")

DAY = 86400.0


@dataclass
class Retrieval:
    """What §13 adds to one injection: the per-layer scores, and what the result reports."""

    extra: dict[str, ExtraScores] = field(default_factory=dict)
    shown: RetrievalStatus | None = None  # `retrieval` of `preview --json`: mode, model, or why keyword
    now: str | None = None  # `now` of `preview --json` when decay is on
    strengths: dict[str, tuple[float, str]] | None = None  # §18: id -> (strength, level) when decay is on
    problems: list[Problem] = field(default_factory=list)


class SemanticSession:
    """The model's files, found once by whoever keeps it (a process, the TUI's store), or why
    they could not be: then retrieval is keyword. What scoring needs is loaded when it is
    needed: the message's vector from the prebuilt query model and the weights' rows
    (`core.query_vector`, no numpy), the memories' vectors from the files saved beside the
    prepared index; the embedder and its vector cache (numpy, the tokenizer) only for memories
    whose vectors are not saved yet, or a message the query model leaves to `tokenizers`."""

    def __init__(self, home: Path):
        from .semantic import ModelUnavailable, locate

        self.home = home
        self.files: Any = None
        self.reason: str | None = None
        self._cache: Any = None
        self._query: Any = None  # the QueryModel, False when there is none to be had
        self._rows: Any = None
        try:
            self.files = locate()
        except ModelUnavailable as exc:
            self.reason = str(exc)

    @property
    def info(self) -> dict[str, str] | None:
        return None if self.files is None else self.files.info.as_dict()

    @property
    def cache(self) -> Any:
        """The vector cache over the loaded embedder (ModelUnavailable when it cannot load)."""
        if self._cache is None:
            from .semantic import Embedder
            from .store.vectors import VectorCache

            self._cache = VectorCache(self.home, Embedder(self.files))
        return self._cache

    def query_vector(self, text: str) -> list[float]:
        """The message's unit vector (float32 values): the query model's ids, or `tokenizers`'
        for a message it leaves to them (the same ids), and the mean of their rows."""
        from .query_vector import Unsupported, WeightRows
        from .semantic import TENSOR, ModelUnavailable

        model = self._query_model()
        text = _LONE_SURROGATE.sub("\ufffd", text)  # not text (a prompt's `\ud800`): `tokenizers` refuses it
        try:
            if not model:
                raise Unsupported("no query model")
            ids = model.ids(text)
        except Unsupported:
            ids = self.cache.embedder.token_ids(text)
        if self._rows is None:
            try:
                self._rows = WeightRows(self.files.weights, TENSOR)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ModelUnavailable(f"the semantic model's weights could not be read: {exc}") from exc
        vector: list[float] = self._rows.vector(ids)
        return vector

    def _query_model(self) -> Any:
        """The prebuilt query model for this model version: read from the cache folder, else
        built from the tokenizer's JSON and saved there through the write gate; False when this
        tokenizer is not one it takes (or its file cannot be read): `tokenizers` does them all."""
        if self._query is not None:
            return self._query
        from . import gate
        from .bounded_reader import read_regular
        from .display import path_text
        from .query_vector import MAX_MODEL_BYTES, QueryModel, Unsupported, build

        path = self.home / "cache" / f"query-model-{self.files.info.tag}.bin"
        try:
            self._query = QueryModel.parse(read_regular(path, MAX_MODEL_BYTES))
            return self._query
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError) as exc:  # damaged: built again
            log.warning("query model %s not used (%s); built again", path_text(str(path)), exc)
        try:
            data = build(read_regular(self.files.tokenizer, MAX_MODEL_BYTES))
            self._query = QueryModel.parse(data)
        except (Unsupported, OSError, ValueError, KeyError, TypeError) as exc:
            log.info("no query model (%s): messages are tokenized by tokenizers", exc)
            self._query = False
            return self._query
        try:
            gate.make_dir(path.parent, root=self.home, mode=0o700)
            gate.write(path, data, root=self.home, kind=gate.Kind.DATA)
        except OSError as exc:  # a cache is never required (a refusal of the write gate is one too)
            log.info("query model not saved: %s", exc)
        return self._query


def model_status(settings: Settings) -> RetrievalStatus:
    """Retrieval as `memtui status` shows it: the mode in use, the model, or why keyword
    (without loading the model: its files are only found)."""
    if settings.retrieval != "hybrid":
        return {"mode": "keyword", "model": None}
    from .semantic import ModelUnavailable, locate

    try:
        files = locate()
    except ModelUnavailable as exc:
        return {"mode": "keyword", "requested": "hybrid", "model": None, "reason": str(exc)}
    return {"mode": "hybrid", "model": files.info.as_dict()}


def hybrid_off_reason(status: RetrievalStatus) -> str:
    """The problem `status` lists when hybrid retrieval is set but cannot run, else ''."""
    if status.get("requested") == "hybrid":
        return f"memory.retrieval is \"hybrid\" but {status.get('reason')}; using keyword retrieval"
    return ""


def parse_now(value: str) -> float:
    """`--now ISO`: seconds since the epoch; a time without a zone is UTC."""
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).isoformat()


def active(settings: Settings) -> bool:
    return settings.enabled and (settings.retrieval == "hybrid" or settings.half_life_days is not None)


def compute(paths: Paths, settings: Settings, layers: Mapping[str, LayerCandidates], query: str,
            now: float | None = None, session: SemanticSession | None = None,
            prepared_stamp: tuple[str, str] | None = None, flags: Mapping[str, Any] | None = None) -> Retrieval:
    """The §13 scores of every position of `layers` for `query`. `prepared_stamp`: (name,
    state) of the prepared index file the layers were read from, unchanged while they were."""
    out = Retrieval()
    semantic: dict[str, list[float]] = {}
    if settings.retrieval == "hybrid":
        if session is None:
            session = SemanticSession(paths.home)
        if session.files is not None:
            from .semantic import ModelUnavailable

            try:
                semantic = _semantic(session, layers, query, prepared_stamp)
            except ModelUnavailable as exc:  # found, but damaged: said, and keyword
                session.files, session.reason = None, str(exc)
        if session.files is None:
            out.shown = {"mode": "keyword", "requested": "hybrid", "model": None, "reason": session.reason}
            out.problems.append(Problem(str(paths.global_settings), hybrid_off_reason(out.shown)))
        else:
            out.shown = {"mode": "hybrid", "model": session.info}
    decay: dict[str, list[float]] = {}
    if settings.half_life_days is not None:
        moment = time.time() if now is None else now
        out.now = iso(moment)
        out.strengths = {}
        decay = _decay(paths, settings.half_life_days, layers, moment, out.problems, flags or {}, out.strengths)
    for layer in layers:
        if layer in semantic or layer in decay:
            out.extra[layer] = ExtraScores(semantic.get(layer), decay.get(layer))
    return out


def _semantic(session: SemanticSession, layers: Mapping[str, LayerCandidates], query: str,
              prepared_stamp: tuple[str, str] | None = None) -> dict[str, list[float]]:
    """Each position's rounded clipped cosine with the query (`core.query_vector.scores`), the
    same by every path. Vectors that are not numbers (a damaged file) are computed again."""
    from .display import path_text
    from .query_vector import NotNumbers, scores

    query_vec = session.query_vector(query)
    tag = session.files.info.tag
    out: dict[str, list[float]] = {}
    for layer, view in layers.items():
        aligned = None
        if prepared_stamp:
            aligned = session.home / "cache" / f"layer-vectors-f64-{tag}-{prepared_stamp[0]}-{layer}.npz"
        stamp = f"{prepared_stamp[1]}:{layer}" if prepared_stamp else ""
        if not view.size:
            out[layer] = []
            continue
        try:
            out[layer] = scores(query_vec, _layer_vectors(session, view, aligned, stamp))
        except NotNumbers as exc:
            where = path_text(str(aligned)) if aligned is not None else "kept in memory"
            log.warning("layer vectors %s not used (%s); computed again", where, exc)
            out[layer] = scores(query_vec, _layer_vectors(session, view, aligned, stamp, fresh=True))
    return out


def _layer_vectors(session: SemanticSession, view: LayerCandidates, aligned: Path | None = None,
                   stamp: str = "", fresh: bool = False) -> Any:
    """The layer's vectors in position order (`Rows`): kept on its index (the TUI's store), or
    saved beside the prepared index for exactly that saved state (`aligned`, `stamp`: the hook
    maps one file instead of reading every entry's text, without numpy), or from the vector
    cache by text (the embedder loaded for them; always, when `fresh`)."""
    from .query_vector import Rows

    tag = session.files.info.tag
    kept = None if fresh else getattr(view, "semantic_vectors", None)
    if kept is not None and kept[0] == tag:
        return kept[1]
    rows = _read_aligned(aligned, stamp, view.size) if aligned is not None and not fresh else None
    if rows is None:
        from .semantic import entry_text

        cache = session.cache
        texts = [entry_text(*row) for row in _fields(view, ("text", "section", "name", "description", "tags"))]
        matrix = cache.vectors(texts)
        import numpy as np

        wide = np.ascontiguousarray(matrix, dtype=np.float64)  # float32 values, summed in float64 (`scores`)
        rows = Rows(wide.reshape(-1), len(texts), cache.embedder.dim)
        if aligned is not None:
            _save_aligned(aligned, stamp, wide)
    try:
        view.semantic_vectors = (tag, rows)  # type: ignore[attr-defined]
    except AttributeError:  # a view without room for them: computed again next time (from the cache)
        pass
    return rows


def _read_aligned(path: Path, stamp: str, size: int) -> Any:
    """The layer's saved vectors (`Rows`, over the mapped file: nothing copied), or None
    (computed again) when the file is missing, of another state, or damaged in its form (said
    on stderr; vectors that are not numbers are found as they are scored). Opened by the
    bounded reader (a FIFO or device in its place is refused, never waited on) and read without
    numpy: the .npz is a zip of two stored .npy arrays, whose small headers are read here."""
    import mmap
    import zipfile

    from .bounded_reader import open_regular
    from .display import path_text
    from .query_vector import Rows, le_array
    from .semantic import MODEL_DIM

    try:
        fd = open_regular(path, MAX_ALIGNED_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("layer vectors %s not used (%s); computed again", path_text(str(path)), exc)
        return None
    try:
        try:
            mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        with zipfile.ZipFile(_MappedFile(mapped)) as saved:
            kind, shape, body = _npy(memoryview(saved.read("stamp.npy")))
            if not kind.startswith("<U") or shape != () or bytes(body).decode("utf-32-le").rstrip("\0") != stamp:
                return None
            member = saved.getinfo("vectors.npy")
        if member.compress_type != zipfile.ZIP_STORED:
            raise ValueError("compressed vectors")
        local = mapped[member.header_offset:member.header_offset + 30]
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise ValueError("no zip entry where its directory says")
        start = member.header_offset + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
        kind, shape, body = _npy(memoryview(mapped)[start:start + member.file_size])
        dim = MODEL_DIM
        if kind != "<f8" or len(shape) != 2 or shape[0] != size or shape[1] != dim or len(body) != size * dim * 8:
            raise ValueError(f"{kind} vectors of shape {shape}, not {size} whole rows of {dim} float64")
        flat = le_array("d", bytes(body)) if sys.byteorder == "big" else body
    except Exception as exc:  # noqa: BLE001 - any damage (a cut zip, another shape): a cache is never required
        log.warning("layer vectors %s not used (%s); computed again", path_text(str(path)), exc)
        return None
    return Rows(flat, size, dim)


class _MappedFile:
    """A mapped file as the file `zipfile` reads (an mmap reads, seeks and tells; before
    Python 3.13 it does not say it can seek)."""

    def __init__(self, mapped: Any):
        self.mapped = mapped

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.mapped.seek(offset, whence)
        return int(self.mapped.tell())

    def tell(self) -> int:
        return int(self.mapped.tell())

    def read(self, n: int = -1) -> bytes:
        return bytes(self.mapped.read(n if n is not None and n >= 0 else None))


def _npy(data: memoryview) -> tuple[str, tuple[int, ...], memoryview]:
    """(dtype, shape, the data's bytes) of a C-ordered .npy array; ValueError for anything else."""
    if bytes(data[:6]) != b"\x93NUMPY" or len(data) < 10:
        raise ValueError("not a .npy array")
    major = data[6]
    width = 2 if major == 1 else 4
    length = int.from_bytes(data[8:8 + width], "little")
    start = 8 + width
    header = bytes(data[start:start + length]).decode("latin-1")
    descr = re.search(r"'descr':\s*'([^']*)'", header)
    fortran = re.search(r"'fortran_order':\s*(True|False)", header)
    shape = re.search(r"'shape':\s*\(([^)]*)\)", header)
    if descr is None or fortran is None or shape is None or fortran.group(1) != "False":
        raise ValueError("an .npy header it does not read")
    dims = tuple(int(n) for n in shape.group(1).replace(" ", "").split(",") if n)
    return descr.group(1), dims, data[start + length:]


MAX_ALIGNED_BYTES = 1 << 31  # a layer's saved vectors: far more than any layer's rows of any model


def _save_aligned(path: Path, stamp: str, matrix: Any) -> None:
    import io

    import numpy as np

    from . import gate

    buffer = io.BytesIO()
    np.savez(buffer, stamp=np.array(stamp), vectors=matrix)
    home = path.parent.parent  # <home>/cache/<file>
    try:
        gate.make_dir(path.parent, root=home, mode=0o700)
        gate.write(path, buffer.getvalue(), root=home, kind=gate.Kind.DATA)
    except OSError as exc:  # a cache is never required (a refusal of the write gate is one too)
        log.info("layer vectors not saved: %s", exc)


def _fields(view: LayerCandidates, names: tuple[str, ...]) -> Iterator[tuple[Any, ...]]:
    """Those fields of every position's entry; from the saved rows when the layer has them."""
    read = getattr(view, "fields", None)
    for pos in range(view.size):
        if read is not None:
            yield read(pos, names)
        else:
            e = view.entry(pos)
            yield tuple(getattr(e, name) for name in names)


def _decay(paths: Paths, half_life: float, layers: Mapping[str, LayerCandidates], now: float,
           problems: list[Problem], flags: Mapping[str, Any] | None = None,
           strengths: dict[str, tuple[float, str]] | None = None) -> dict[str, list[float]]:
    """`0.5 ** (age / N)`, age in days since the entry was last injected (§11 history, this
    workspace) or updated, whichever is later; never negative. A pinned entry (its file's
    `pinned: true`, or its own pin in `flags`) does not decay: 1 (SPEC §18). Each factor is
    the entry's strength, kept with its level in `strengths` when given."""
    from .forgetting import level_of
    try:
        injected = history_stats(paths.db_path, paths.workspace) if paths.db_path.exists() else {}
    except Exception as exc:  # the history is an input, not a requirement: ages from updates alone
        problems.append(Problem(str(paths.db_path), f"injection history unreadable for decay: {exc}"))
        injected = {}
    out: dict[str, list[float]] = {}
    for layer, view in layers.items():
        factors = []
        for entry_id, updated_at, pinned in _fields(view, ("id", "updated_at", "pinned")):
            own = flags.get(entry_id) if flags else None
            if pinned or (own is not None and own.pinned):
                factor = 1.0
            else:
                last = updated_at
                hit = injected.get(entry_id)
                if hit is not None:
                    last = max(last, hit[1] / 1000.0)
                age = max(0.0, now - last) / DAY
                factor = 0.5 ** (age / half_life)
            factors.append(factor)
            if strengths is not None:
                strengths[entry_id] = (factor, level_of(factor))
        out[layer] = factors
    return out
