"""Layers built from the memories themselves (the store, read-only) and indexed, each saved
for the next process when everything it was built from can be checked later; the
conversation layer's state made straight from the rows, in bulk."""

from __future__ import annotations

import logging
import marshal
import time
import zlib
from typing import Any

from ..injection import LayerCandidates, LineMaker
from ..model import Layer
from ..paths import Paths, Problem
from ..settings import Settings
from . import saved_file
from .layer_index import LayerIndex
from .line_cache import LineCache
from .rows import conversation_columns, conversation_state
from .saved_file import MAGIC, DamagedPreparedIndex
from .saved_layer import cache_path, code_stamp, index_of, open_layer, save_layer, settings_key

log = logging.getLogger("memtui.prepared")


def _row_generation(paths: Paths, create: bool = False) -> int | str:
    from .conversations import Conversations

    db = Conversations(paths.db_path)
    try:
        return db.row_generation(create=create)
    finally:
        db.close()


def build_layers(paths: Paths, settings: Settings, save: bool,
                 missing: list[str]) -> tuple[dict[str, tuple[LayerCandidates, list[Problem]]], frozenset[str]]:
    """`missing` loaded from the memories and indexed (and saved): each one's index and
    problems, and those of them that failed."""
    from .memory import MemoryStore

    lines = LineCache()  # the lines saved for the layers rebuilt here: most of their texts did not change
    for layer in missing:
        stale = open_layer(paths, settings, layer)
        if stale is not None:
            try:
                stale.index.seed_made(lines)
            except DamagedPreparedIndex:
                pass
            finally:
                stale.close()
    gen = _row_generation(paths, create=save and paths.home.is_dir()) if Layer.CONVERSATION in missing else None
    read_ns = time.time_ns()
    maker = LineMaker(settings.max_item_chars, settings.redact_secrets)
    store = MemoryStore(paths, index=False)
    try:
        files = [layer for layer in missing if layer != Layer.CONVERSATION]
        if files:
            store.load_layers(files)
        built: dict[str, LayerCandidates] = {layer: LayerIndex.from_entries(layer, store.snapshot(layer), lines,
                                                                            keep_terms=False) for layer in files}
        failed = frozenset(layer for layer in files if layer in store.layer_errors)
        problems = {layer: store.layer_problems(layer) for layer in files}
        conversation = None
        if Layer.CONVERSATION in missing and save and not failed and isinstance(gen, int) and paths.home.is_dir():
            streamed = _streamed_rows(paths, settings, store, maker, gen)  # saved a batch at a time, then opened
            if streamed is not None:
                built[Layer.CONVERSATION], problems[Layer.CONVERSATION] = streamed
        if Layer.CONVERSATION in missing and Layer.CONVERSATION not in built:
            # its saved state made straight from the rows, in bulk (no entry per row)
            try:
                columns = conversation_columns(store.conversations.raw_rows(paths.workspace))
                problems[Layer.CONVERSATION] = []
            except Exception as exc:  # the layer fails alone, as in the store; the others still load
                columns = conversation_columns([])
                problems[Layer.CONVERSATION] = [Problem(str(paths.db_path), f"conversation memories unavailable: {exc}")]
                failed |= {Layer.CONVERSATION}
            conversation = conversation_state(columns, maker, lines)
            built[Layer.CONVERSATION] = index_of(*conversation)
        if save and not failed and paths.home.is_dir():
            for layer in missing:
                info: dict[str, Any]
                if layer == Layer.CONVERSATION:
                    if gen == "untracked" or conversation is None:
                        continue
                    info = {"gen": gen}
                    core, lists, postings = conversation
                else:
                    states = store.scan.file_states(layer)
                    if states is None:
                        continue
                    info = {"files": states, "read_ns": read_ns}
                    index = built[layer]
                    assert isinstance(index, LayerIndex)
                    state = index.state(maker)
                    lists = [state.pop(name) for name in ("rows", "shown", "made", "frags")]
                    postings = state.pop("postings")
                    core = {**state, "size": len(lists[0])}
                    built[layer] = index_of(core, lists, postings)  # answers with the lines and JSON just made
                save_layer(paths, settings, layer, core, lists, postings, info)
            rows_index = built.get(Layer.CONVERSATION)
            if isinstance(rows_index, LayerIndex) and isinstance(gen, int) and conversation is not None:
                rows_index.row_gen = gen  # read before the rows: they are at least as new
        return {layer: (built[layer], problems[layer]) for layer in missing}, failed
    finally:
        store.close()


def _streamed_rows(paths: Paths, settings: Settings, store: Any, maker: LineMaker,
                   gen: int) -> tuple[LayerCandidates, list[Problem]] | None:
    """The conversation layer saved a batch at a time (`rows_saved`: never every row held),
    then opened as any saved layer is; None when it was not saved (built in memory then,
    which says what is wrong)."""
    from .current_layers import current_layers
    from .rows_saved import save_rows_streamed

    def frame(data: dict[str, Any]) -> bytes:  # the header and body of `save_layer`
        body = marshal.dumps({"stamp": code_stamp(), "workspace": str(paths.workspace), "settings": settings_key(settings),
                              "layer": str(Layer.CONVERSATION), "info": {"gen": gen}, **data})
        return MAGIC + len(body).to_bytes(8, "big") + zlib.crc32(body).to_bytes(4, "big") + body

    try:
        save_rows_streamed(cache_path(paths, Layer.CONVERSATION), paths.home, store.conversations, paths.workspace,
                           maker, saved_file.CHUNK, frame)
    except Exception as exc:  # noqa: BLE001 - built in memory instead, which reports what is wrong
        log.info("conversation layer not saved a batch at a time: %s", exc)
        return None
    now = current_layers(paths, settings, layers=(Layer.CONVERSATION,)).get(Layer.CONVERSATION)
    return None if now is None else (now[0], now[1])
