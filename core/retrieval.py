"""SPEC §13 around the rule: the semantic scores and the decay factors `core.injection.inject`
takes per layer (`ExtraScores`), computed here because the rule knows neither the model nor the
injection history.

Imported only when a §13 setting is on, so keyword retrieval never loads numpy or the model.
"""

from __future__ import annotations

import logging
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
    """The model and its vector cache, loaded once by whoever keeps it (a process, the TUI's
    store), or why it could not be: then retrieval is keyword."""

    def __init__(self, home: Path):
        from .semantic import Embedder, ModelUnavailable

        self.home = home
        self.cache: Any = None
        self.reason: str | None = None
        try:
            from .store.vectors import VectorCache

            self.cache = VectorCache(home, Embedder.load())
        except ModelUnavailable as exc:
            self.reason = str(exc)

    @property
    def info(self) -> dict[str, str] | None:
        return None if self.cache is None else self.cache.embedder.info.as_dict()


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
        if session.cache is None:
            out.shown = {"mode": "keyword", "requested": "hybrid", "model": None, "reason": session.reason}
            out.problems.append(Problem(str(paths.global_settings), hybrid_off_reason(out.shown)))
        else:
            out.shown = {"mode": "hybrid", "model": session.info}
            semantic = _semantic(session, layers, query, prepared_stamp)
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
    """Each position's rounded clipped cosine with the query; entry vectors from the cache
    (embedded once per text), kept on the layer's index while it lives."""
    from .semantic import similarities

    cache = session.cache
    query_vec = cache.embedder.embed([query])[0]
    out: dict[str, list[float]] = {}
    for layer, view in layers.items():
        aligned = None
        if prepared_stamp:
            aligned = session.home / "cache" / f"layer-vectors-{cache.embedder.info.tag}-{prepared_stamp[0]}-{layer}.npz"
        matrix = _layer_vectors(cache, view, aligned, f"{prepared_stamp[1]}:{layer}" if prepared_stamp else "")
        out[layer] = similarities(query_vec, matrix) if view.size else []
    return out


def _layer_vectors(cache: Any, view: LayerCandidates, aligned: Path | None = None, stamp: str = "") -> Any:
    """The layer's vectors in position order: kept on its index (the TUI's store), or saved
    beside the prepared index for exactly that saved state (`aligned`, `stamp`: the hook reads
    one file instead of every entry's text), or from the vector cache by text."""
    tag = cache.embedder.info.tag
    kept = getattr(view, "semantic_vectors", None)
    if kept is not None and kept[0] == tag:
        return kept[1]
    matrix = _read_aligned(aligned, stamp, view.size, cache.embedder.dim) if aligned is not None else None
    if matrix is None:
        from .semantic import entry_text

        texts = [entry_text(*row) for row in _fields(view, ("text", "section", "name", "description", "tags"))]
        matrix = cache.vectors(texts)
        if aligned is not None:
            _save_aligned(aligned, stamp, matrix)
    try:
        view.semantic_vectors = (tag, matrix)  # type: ignore[attr-defined]
    except AttributeError:  # a view without room for them: computed again next time (from the cache)
        pass
    return matrix


def _read_aligned(path: Path, stamp: str, size: int, dim: int) -> Any:
    """The layer's saved vectors: `size` rows of `dim` numbers, or None (computed again) when
    the file is missing, of another state, or damaged in any way (said on stderr). Read by the
    bounded reader: a FIFO or device in its place is refused, never waited on."""
    import io

    import numpy as np

    from .display import path_text
    from .fileio import read_regular

    try:
        data = read_regular(path, MAX_ALIGNED_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("layer vectors %s not used (%s); computed again", path_text(str(path)), exc)
        return None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as saved:
            if str(saved["stamp"]) != stamp:
                return None
            matrix = saved["vectors"]
        if matrix.shape != (size, dim) or matrix.dtype != np.float32 or not np.isfinite(matrix).all():
            raise ValueError(f"{matrix.dtype} vectors of shape {matrix.shape}, not {size} whole rows of {dim}")
    except Exception as exc:  # noqa: BLE001 - any damage (a cut zip, another shape, NaN): a cache is never required
        log.warning("layer vectors %s not used (%s); computed again", path_text(str(path)), exc)
        return None
    return matrix


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
