"""The §5 injection answered for a workspace: from the prepared index (`build_injection`:
`memtui preview`, the hooks) or from a loaded store (`inject_from_store`: the TUI, the MCP
server). The rule itself is `core.injection.inject`; this module only finds its layers."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .history import record as record_injection
from .injection import InjectionResult, LayerCandidates, inject
from .model import LAYERS
from .paths import Paths, Problem
from .scope import Files
from .settings import Settings, load_settings
from .store.layer_index import LayerIndex, snapshot_index
from .store.line_cache import LineCache
from .store.prepared import DamagedPreparedIndex, Prepared, cache_name, load_prepared, open_prepared, prepare

if TYPE_CHECKING:  # only its type: the hook's path never loads the whole store
    from .store.memory import MemoryStore

log = logging.getLogger("memtui.injection")


def _inject(paths: Paths, layers: Mapping[str, LayerCandidates], settings: Settings, query: str,
            failed_layers: frozenset[str], errors: list[Problem], now: float | None = None,
            session: Any = None, prepared_stamp: tuple[str, str] | None = None,
            unreviewed: frozenset[str] = frozenset(), files: Files = ()) -> InjectionResult:
    """`inject`, with the §13 scores when a §13 setting is on (their module, and numpy with
    it, is imported only then), and the expired entries (SPEC §18) left out."""
    expired, flags = _expired(paths, settings, layers, now, errors)
    pinned = frozenset(entry_id for entry_id, flag in flags.items() if flag.pinned)  # `memtui pin` (SPEC §18)
    if not (settings.enabled and (settings.retrieval == "hybrid" or settings.half_life_days is not None)):
        return inject(layers, settings, query, workspace=str(paths.workspace), failed_layers=failed_layers,
                      errors=errors, unreviewed=unreviewed, files=files, expired=expired, pinned=pinned)
    from .retrieval import compute

    extra = compute(paths, settings, layers, query, now=now, session=session, prepared_stamp=prepared_stamp,
                    flags=flags)
    result = inject(layers, settings, query, workspace=str(paths.workspace), failed_layers=failed_layers,
                    errors=errors + extra.problems, extra=extra.extra, unreviewed=unreviewed, files=files, expired=expired,
                    pinned=pinned)
    result.retrieval = extra.shown
    result.now = extra.now
    result.strengths = extra.strengths
    return result


def _expired(paths: Paths, settings: Settings, layers: Mapping[str, LayerCandidates], now: float | None,
             errors: list[Problem]) -> tuple[frozenset[str], dict[str, Any]]:
    """SPEC §18: the ids expired at `now` (a file's `expires`, kept per layer so no row is read,
    and the entries' own in memtui's table) and the entries' own flags, for the decay."""
    if not settings.enabled or settings.private:
        return frozenset(), {}
    from .forgetting import expired_ids, safe_flags

    flags, problem = safe_flags(paths.db_path)
    if problem:
        errors.append(Problem(str(paths.db_path), problem))
    expiring = [item for view in layers.values() for item in _expiring_of(view).items()]
    if not expiring and not any(f.expires is not None for f in flags.values()):
        return frozenset(), flags
    return expired_ids(expiring, flags, time.time() if now is None else now), flags


def _expiring_of(view: LayerCandidates) -> dict[str, float]:
    found = getattr(view, "expiring", None)
    if found is not None:
        return dict(found())
    return {e.id: e.expires for e in (view.entry(p) for p in range(view.size)) if e.expires is not None}


def inject_from_store(store: MemoryStore, settings: Settings, query: str, now: float | None = None,
                      files: Files = ()) -> InjectionResult:
    """The injection over a loaded MemoryStore (the TUI and the MCP server call this); the
    semantic model, when hybrid retrieval is on, is loaded once per store."""
    lines = store.lines
    layers = store_layers(store, settings)
    errors = list(settings.problems) + store.problems
    unreviewed: frozenset[str] = frozenset()
    if settings.require_review:  # SPEC §12: computed only when the setting is on
        from .review import held_back

        unreviewed = held_back(store.review_state, store.entries())
    session = None
    if settings.enabled and settings.retrieval == "hybrid":
        session = lines.semantic
        if session is None:
            from .retrieval import SemanticSession

            session = lines.semantic = SemanticSession(store.paths.home)
    return _inject(store.paths, layers, settings, query, frozenset(store.layer_errors), errors, now=now,
                   session=session, unreviewed=unreviewed, files=files)


def store_layers(store: MemoryStore, settings: Settings, layers: tuple[str, ...] = LAYERS) -> dict[str, LayerIndex]:
    """The store's layers as its injection reads them: indexed once per snapshot, taken from
    the prepared index when it holds the same entries (the search scores from them too)."""
    lines = store.lines
    key = (settings.max_item_chars, bool(settings.redact_secrets))
    if key not in lines.made:  # the first time with these settings: take the lines already made
        lines.made[key] = {}
        _seed_lines(store.paths, settings, lines)
    return {layer: snapshot_index(lines, layer, store.snapshot(layer)) for layer in layers}


def _seed_lines(paths: Paths, settings: Settings, lines: LineCache) -> None:
    """Offer the prepared index's layers (same memtui and settings, even when the memories
    changed since): a layer whose entries the store's snapshot holds exactly is taken as it
    is, so the TUI's first preview needs no indexing; another one gives its made lines (a
    line depends on its text and the settings alone), so few are made and redacted again."""
    try:
        prepared = load_prepared(paths, settings, sources=False)  # any saved text -> line pair is right
        if prepared is not None:
            lines.saved.update({layer: index for layer, index in prepared.indexes.items()
                                if isinstance(index, LayerIndex)})
    except Exception as exc:  # a cache is never required
        log.info("made lines not taken from the prepared index: %s", exc)


def _unreviewed_of(paths: Paths, indexes: Mapping[str, LayerCandidates]) -> frozenset[str]:
    """`memory.requireReview`: the ids of the prepared entries still awaiting review (the
    review table read with sqlite3 alone, each entry's fields read without making it)."""
    from .review import held_back

    return held_back(paths.db_path, (index.review_fields(p) for index in indexes.values() for p in range(index.n_active)))


def inject_prepared(paths: Paths, prepared: Prepared, settings: Settings, query: str, *, now: float | None = None,
                    session: Any = None, files: Files = ()) -> InjectionResult:
    """The injection over a prepared index's layers, as `memtui preview`, the hooks and the
    TUI's preview compute it. `session`: §13's model and vector cache, kept by the caller
    between queries (hybrid retrieval); `files`: the files in context (SPEC §16)."""
    # layers that are exactly a saved state (`stamp`): §13 keeps their vectors beside it
    stamp = prepared.stamp if settings.retrieval == "hybrid" else None
    unreviewed = _unreviewed_of(paths, prepared.indexes) if settings.require_review and settings.enabled else frozenset()
    return _inject(paths, prepared.indexes, settings, query, prepared.failed_layers,
                   list(settings.problems) + prepared.problems, now=now, session=session,
                   prepared_stamp=(cache_name(paths), stamp) if stamp else None, unreviewed=unreviewed, files=files)


def build_injection(workspace: str | Path | None, query: str, home: str | Path | None = None,
                    record: bool = False, now: float | None = None, files: Files = ()) -> InjectionResult:
    """What Muse appends to its system prompt for `query` in `workspace` (SPEC §5).

    With `record`, a real injection: one record is added to the injection history (§11);
    a failure to record never raises, it is logged and listed in `errors`. `files`: the files
    in context (SPEC §16), workspace-relative, or a function giving them when a scoped memory
    needs them."""
    started = time.perf_counter()
    paths = Paths.resolve(home=home, workspace=workspace)
    settings = load_settings(paths)
    if not settings.enabled or settings.private:  # off, or private (SPEC §18): nothing is read
        return inject({}, settings, query, workspace=str(paths.workspace), errors=settings.problems)

    def answer(prepared: Prepared) -> InjectionResult:
        result = inject_prepared(paths, prepared, settings, query, now=now, files=files)
        for c in result.included:  # read here what every caller uses, so a damaged section shows now
            c.id  # noqa: B018  (the entry's id and source: the history records them)
        return result

    try:  # what changed since it was saved is taken in; a layer that cannot be is rebuilt alone
        result = answer(open_prepared(paths, settings))
    except DamagedPreparedIndex as exc:
        log.warning("%s", exc)
        result = answer(prepare(paths, settings))
    result.retrieval_ms = (time.perf_counter() - started) * 1000
    if record:
        outcome = record_injection(paths.db_path, result, paths.workspace)
        if outcome.error:
            result.errors.append(Problem(str(paths.db_path), outcome.error))
    return result

