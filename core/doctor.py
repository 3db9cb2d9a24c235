"""Health of the memory store: `status` (on/off and why, paths, counts, problems, index
health), `repair` (rebuild what memtui derives, in place; SPEC §8) and the doctor's
findings (SPEC §10): stale references, duplicates, unreachable and never-injected entries,
invalid files, an index out of step. The doctor only reads."""

from __future__ import annotations

import heapq
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from . import collector
from .actions import layer_counts, open_store
from .doctor_rows import Columns, prefiltered, texts_of
from .finding import KINDS, Finding
from .injection import HEADERS, TITLE, est, make_line
from .model import FILE_LAYERS, IMPORTANCE_RANK, LAYERS, Entry, Layer
from .paths import Paths, Problem
from .retrieval import hybrid_off_reason, model_status
from .settings import Settings, load_settings
from .store import MemoryStore
from .store.conversations import Conversations
from .store.database import busy_or_readonly
from .workspace_findings import already_loaded, never_fires, stale_references

if TYPE_CHECKING:
    from .store.snapshot import Snapshot
    from .text_memo import TextMemo

log = logging.getLogger("memtui.doctor")


def status(paths: Paths, no_workspace: str | None = None) -> dict[str, Any]:
    """Everything `memtui status` reports, as one JSON-ready object. `no_workspace`: why the
    current folder cannot be a workspace (the home folder itself, SPEC §1): the user layer alone
    is reported then, `workspace` is null and `no_workspace` says why."""
    settings = load_settings(paths)
    store = open_store(paths, Layer.USER if no_workspace else None)
    try:
        counts = layer_counts(store.entries())
        problems = list(settings.problems) + store.problems
        data: dict[str, Any] = {
            "enabled": settings.enabled,
            "why": settings.enabled_why,
            "settings_unreadable": settings.unknown_because is not None,  # then `enable` cannot help
            "workspace": str(paths.workspace),
            "home": str(paths.home),
            "paths": {
                "user_memory": str(paths.user_root),
                "project_memory": str(paths.project_root),
                "database": str(paths.db_path),
                "global_settings": str(paths.global_settings),
                "workspace_settings": str(paths.workspace_settings),
            },
            "counts": counts,
            "unreviewed": _unreviewed_count(store),
            "errors": [p.as_dict() for p in problems],
            "index": store.conversations.health(),
            "retrieval": model_status(settings),  # §13: the mode in use and its model, or why keyword
            "injection": {"mode": settings.injection, "source": settings.injection_source},  # §15
        }
        if settings.private_until is not None:  # §18: private mode, and until when
            from .forgetting_actions import private_state

            data["private"] = private_state(settings)
        if no_workspace:
            data["workspace"] = None
            data["no_workspace"] = no_workspace
            del data["paths"]["project_memory"], data["paths"]["workspace_settings"]
        if hybrid_off_reason(data["retrieval"]):
            data["errors"].append(Problem(str(paths.global_settings), hybrid_off_reason(data["retrieval"])).as_dict())
        if store.database.backup_path:
            data["index"]["backup"] = str(store.database.backup_path)
        return data
    finally:
        store.close()


def _unreviewed_count(store: MemoryStore) -> int | None:
    """How many memories await review (SPEC §12); None when the review state cannot be read
    (status reports the index's health on its own)."""
    from .review import unreviewed_among
    from .store.database import DatabaseError

    try:
        return len(unreviewed_among(store.entries(), store.review_state.accepted()))
    except (DatabaseError, OSError):
        return None


@dataclass
class RepairReport:
    ok: bool
    lines: list[str] = field(default_factory=list)
    entries: int = 0


def repair(paths: Paths) -> RepairReport:
    """Rebuild the Markdown rows and the FTS index inside muse.db from the files. The
    database itself is never renamed, replaced or deleted (it belongs to Muse too): when it
    is locked, read-only or damaged, that is reported and nothing is changed."""
    health = Conversations(paths.db_path).health()
    state = health.get("state", "ok" if health.get("ok") else "damaged")
    if health.get("exists") and state != "ok":
        reason = health.get("error") or health.get("integrity") or health.get("fts_integrity") or state
        if state == "locked":
            return RepairReport(False, [f"{paths.db_path} is locked by another process (Muse?); nothing changed. "
                                        "Try again when it is idle."])
        if state == "read-only":
            return RepairReport(False, [f"{paths.db_path} is read-only ({reason}); nothing changed."])
        return RepairReport(False, [
            f"{paths.db_path} is damaged ({reason}); memtui does not move or replace Muse's database.",
            "Markdown memories still work without it. Recover what it holds with sqlite3's `.recover`, "
            "or let Muse rebuild it; then `memtui import jsonl` restores a backup made with `memtui export jsonl`.",
        ])
    store = open_store(paths)
    try:
        n = store.rebuild_index()
    except Exception as exc:
        state = busy_or_readonly(exc)
        what = {"locked": "is locked by another process", "read-only": "is read-only"}.get(state or "", "")
        return RepairReport(False, [f"{paths.db_path} {what or 'could not be rebuilt'} ({exc}); nothing changed."])
    finally:
        store.close()
    return RepairReport(True, [f"Index rebuilt from the Markdown files: {n} entries."], n)


# ---------------------------------------------------------------------- findings (SPEC §10)
NEVER_INJECTED_DAYS = 30

def reported_order(e: Entry) -> tuple[int, str, int, float, str]:
    """The order `duplicates` reports in: layers in their order, Markdown entries in file
    order, conversation memories by date (then id)."""
    if e.layer == Layer.CONVERSATION:
        return LAYERS.index(e.layer), "", 0, e.updated_at, e.id
    return LAYERS.index(e.layer), e.rel_path, e.line_start, 0.0, ""


def _visible(entries: Sequence[Entry]) -> Sequence[Entry]:
    """The entries not archived, in the order `duplicates` and `contradictions` report in
    (over `Columns`, with their texts as a column and each entry made when asked)."""
    if isinstance(entries, Columns):
        return entries.in_order(reported_order)
    return sorted((e for e in entries if not e.archived), key=reported_order)


def duplicates(entries: Sequence[Entry], paths: Paths | None = None, in_order: bool = False) -> list[Finding]:
    """Pairs of active entries (in one layer or across layers) that are near-duplicates by
    the same rule as `remember`'s check. Each later entry is reported against the first:
    layers in their order (user, project, conversation), Markdown entries in file order,
    conversation memories by date (the newer is the duplicate), whatever order `entries`
    come in (a store that took its conversation entries from the prepared index lists them
    in another order than one that read the rows). Blocked, never all pairs
    (`similarity.duplicate_pairs`). With `paths`, the pairs close enough to judge are those
    saved by the last run, and the texts it had not seen compared with all (`near_pairs`).
    `in_order`: `entries` are the visible ones in that order already (`_visible`)."""
    from .contradictions import is_label
    from .near_pairs import NearPairs
    from .similarity import duplicate_pairs

    visible = entries if in_order else _visible(entries)
    texts = texts_of(visible)
    # a bare label (`**NEVER**:`) heads the list after it: the same label over two lists is no repeat (§17)
    active = [i for i, text in enumerate(texts) if not is_label(text)]
    out = []
    for first, second in duplicate_pairs([texts[i] for i in active], max, NearPairs(paths) if paths is not None else None):
        earlier, later = visible[active[first]], visible[active[second]]
        out.append(Finding("duplicate", later.source_ref, f"near-duplicate of {earlier.source_ref}", later.id, later.layer))
    return out


class LineSizes:
    """Per entry text, the sizes of the line the injection makes of it (step 8: one line,
    secrets redacted, clamped): its tokens (step 9), then its size as each hook with a limit
    counts it (`over_limit`). Each text's line is made once: the TUI's doctor, which runs
    after every change, keeps them per store (`_sizes_of`)."""

    def __init__(self, settings: Settings):
        from .assistants import TARGETS
        from .assistants.delivery import protocol

        self.key = (settings.max_item_chars, bool(settings.redact_secrets))
        self.limited = [(proto, proto.limit) for proto in (protocol(target) for target in TARGETS) if proto.limit is not None]
        self._measures = [proto.measure for proto, _ in self.limited]
        self.known: dict[str, tuple[int, ...]] = {}
        self.make: Callable[[str], tuple[int, ...]] = self._make  # `TextMemo`'s, in the doctor

    def __call__(self, text: str) -> tuple[int, ...]:
        sizes = self.known.get(text)
        if sizes is None:
            sizes = self.known[text] = self.make(text)
        return sizes

    def _make(self, text: str) -> tuple[int, ...]:
        line = make_line(text, *self.key)[0]
        return self._of(line, est(line))

    def _of(self, line: str, tokens: int) -> tuple[int, ...]:
        return (tokens, *[measure(line) for measure in self._measures])

    def take_saved(self, paths: Paths, settings: Settings, texts: Iterable[str]) -> None:
        """The lines of `texts` that the prepared index (`memtui preview`, the hook) already
        made with these settings: a line depends on its text and the settings alone, and
        reading it is much cheaper than redacting the text again."""
        from .store.line_cache import LineCache
        from .store.prepared import saved_indexes

        try:
            cache = LineCache()
            for index in saved_indexes(paths, settings).values():
                index.seed_made(cache)
        except Exception as exc:  # a cache is never required: the lines are made instead
            log.info("the doctor made every line: the prepared index's were not read (%s)", exc)
            return
        made = cache.made.get(self.key, {})
        for text in texts:
            saved = made.get(text)
            if saved is not None and text not in self.known:
                self.known[text] = self._of(saved.line, saved.tokens)


_SIZES: WeakKeyDictionary[MemoryStore, LineSizes] = WeakKeyDictionary()


def _sizes_of(store: MemoryStore, settings: Settings, texts: Sequence[str], memo: TextMemo | None = None) -> LineSizes:
    """The store's line sizes from its last doctor run with the same settings, kept to
    `texts` (an edited entry's old text is dropped); on the first run, those the
    doctor saved last time (`memo`), else those the prepared index holds."""
    kept = _SIZES.get(store)
    sizes = LineSizes(settings)
    kind = f"sizes {sizes.key}"
    if memo is not None:
        sizes.make = memo.table(kind, sizes.make)
    if kept is not None and kept.key == sizes.key:
        sizes.known = {text: kept.known[text] for text in texts if text in kept.known}
    elif memo is None or not memo.has(kind):
        sizes.take_saved(store.paths, settings, texts)
        if memo is not None:
            memo.keep(kind, sizes.known)  # the next run finds them saved
    _SIZES[store] = sizes
    return sizes


def unreachable(layers: Mapping[str, Sequence[Entry]], settings: Settings, sizes: LineSizes | None = None) -> list[Finding]:
    """Active entries no query can inject (SPEC §10): the entries of higher importance in the
    layer come first whatever the query, and with the entry they overflow the largest
    allowance the layer can ever get (its cap plus the most carry), or fill its max items.
    Only layers whose gate lets everything in (gate <= 0) are judged: elsewhere a query can
    drop the entries in front."""
    sizes = sizes or LineSizes(settings)
    remaining = settings.budget["total"] - est(TITLE)
    out = []
    carry = 0
    for layer in LAYERS:
        cap = settings.budget.get(layer, 0)
        largest = min(cap + carry, remaining)
        carry += cap  # the most carry the next layer can get: every earlier layer unused
        if settings.gate.get(layer, 0.0) > 0:
            continue
        entries = Columns.of(layers.get(layer, []))
        active = [i for i in range(len(entries)) if not entries.archived[i]]
        rank = [IMPORTANCE_RANK.get(entries.importance[i], 1) for i in active]
        cost = [sizes(entries.text[i])[0] for i in active]
        # what is ahead of an entry is every entry of a higher importance (a lower rank): per
        # rank, how many entries those are and what they cost together
        count_of: dict[int, int] = {}
        cost_of: dict[int, int] = {}
        for r, c in zip(rank, cost):
            count_of[r] = count_of.get(r, 0) + 1
            cost_of[r] = cost_of.get(r, 0) + c
        ahead = {r: (sum(n for k, n in count_of.items() if k < r), sum(c for k, c in cost_of.items() if k < r))
                 for r in count_of}
        limit = settings.max_items.get(layer)
        header = est(HEADERS[layer])
        for i, r, c in zip(active, rank, cost):
            n_ahead, cost_ahead = ahead[r]
            if limit is not None and n_ahead >= limit:
                e = entries[i]
                out.append(Finding("unreachable", e.source_ref,
                                   f"{n_ahead} entries of higher importance fill max items ({limit})", e.id, layer))
                continue
            need = header + cost_ahead + c
            if need > largest:
                e = entries[i]
                why = (f"with the {n_ahead} entries of higher importance it needs {need} tokens; "
                       f"the {layer} layer gets at most {largest}") if n_ahead else \
                      f"it alone needs {need} tokens; the {layer} layer gets at most {largest}"
                out.append(Finding("unreachable", e.source_ref, why, e.id, layer))
    return out


def never_injected(entries: Sequence[Entry], paths: Paths) -> list[Finding]:
    """With injection history (SPEC §11): active entries not injected in the last 30 days of
    recorded injections while others were."""
    try:
        from . import history
    except ImportError:  # no history module: nothing to judge by
        return []
    try:
        stats = history.stats(paths.db_path, paths.workspace)
    except Exception:
        return []
    if not stats:
        return []
    cutoff = time.time() - NEVER_INJECTED_DAYS * 86400
    recent = {eid for eid, (_count, last_ms) in stats.items() if last_ms >= cutoff * 1000}
    if not recent:
        return []
    judged = prefiltered(entries, lambda c, i: c.ids[i] not in recent)  # (those injected cannot be found)
    # only entries older than the window: one written (or last changed) within it has not had
    # its 30 days yet, so a memory made yesterday is not "never injected"
    return [Finding("never_injected", e.source_ref, f"not injected in the last {NEVER_INJECTED_DAYS} days",
                    e.id, e.layer)
            for e in judged if not e.archived and e.id not in recent and e.updated_at < cutoff]


def index_findings(store: MemoryStore) -> list[Finding]:
    """The search index out of step with the files (rows of missing files, files not indexed
    or indexed from other content)."""
    if not store.database.exists():
        return []
    try:
        indexed = store.file_index.indexed()
    except Exception as exc:
        return [Finding("index", str(store.paths.db_path), f"index unreadable: {exc}")]
    files = store.file_hashes()
    roots = (str(store.paths.user_root) + os.sep, str(store.paths.project_root) + os.sep)
    out = []
    for path, sha in sorted(files.items()):
        if indexed.get(path) != sha:
            out.append(Finding("index", path, "changed since it was indexed (the next `memtui preview` or the TUI "
                                              "indexes it; `memtui doctor --fix` does now)"))
    for path in sorted(set(indexed) - set(files)):
        if path.startswith(roots):
            out.append(Finding("index", path, "indexed but no longer a memory file; `memtui doctor --fix` rebuilds it"))
    return out


def findings(paths: Paths, kinds: tuple[str, ...] = KINDS, store: MemoryStore | None = None) -> list[Finding]:
    """Everything the doctor finds (SPEC §10). Only reads: never changes a memory. Given an
    already loaded `store` (the TUI's), it judges that store's snapshot instead of loading
    every file again."""
    settings = load_settings(paths)
    # millions of objects at ten times the store, next to no cycles (in the TUI's worker thread, a
    # small store's run, the pause is the whole process's for that run: harmless, and short)
    with collector.paused():
        if store is not None:
            return _findings(paths, settings, store, kinds)
        own = MemoryStore(paths, index=False)  # a doctor that reads must not repair as it reads
        try:
            _load(own, settings)
            return _findings(paths, settings, own, kinds)
        finally:
            own.close()


ROWS_LEFT_SAVED = 50_000  # conversation rows from which the doctor leaves the layer in the prepared index


def _load(store: MemoryStore, settings: Settings) -> None:
    """Load `store`, its conversation entries taken from the prepared index's saved rows when
    memtui's change counter says they are the rows as they are now (every row is read
    otherwise): ≈0.3 s less of a large store's doctor. A layer of `ROWS_LEFT_SAVED` rows or
    more stays there (`SavedEntries`: the doctor reads it as columns, `doctor_rows`)."""
    from .store.prepared import saved_conversation

    try:
        layer = saved_conversation(store.paths, settings)
        row_gen = getattr(layer, "row_gen", None)
        if layer is not None and row_gen is not None and layer.size >= ROWS_LEFT_SAVED:
            store.rows_from_prepared(lambda: layer, ROWS_LEFT_SAVED)
        elif layer is not None and row_gen is not None:
            store.offer_conversation(layer.all_entries(), row_gen)  # type: ignore[attr-defined]
    except Exception as exc:  # a cache is never required
        log.info("conversation rows read whole: %s", exc)
    store.load()


def findings_read(paths: Paths) -> tuple[list[Finding], tuple[Any, ...] | None]:
    """`findings(paths)` and what it read (`MemoryStore.read_state`): a reader that loaded
    the memories itself can tell whether it judged what the caller holds."""
    settings = load_settings(paths)
    own = MemoryStore(paths, index=False)
    try:
        with collector.paused():
            _load(own, settings)
            return _findings(paths, settings, own, KINDS), own.read_state()
    finally:
        own.close()


def _findings(paths: Paths, settings: Settings, store: MemoryStore, kinds: tuple[str, ...]) -> list[Finding]:
    from .text_memo import TextMemo

    memo = TextMemo(paths)  # what each text gave the last run
    out = _found(paths, settings, store, kinds, memo)
    memo.save()
    return out


def _judged(snapshot: Snapshot) -> Sequence[Entry]:
    """Every entry as columns (a large conversation layer's read from the prepared index, its
    entries made only when asked for): user, project, conversation, each in the store's order."""
    return Columns(snapshot.layers[layer] for layer in LAYERS)


def _found(paths: Paths, settings: Settings, store: MemoryStore, kinds: tuple[str, ...], memo: TextMemo) -> list[Finding]:
    snapshot = store.current  # one consistent view, even while the store reloads
    entries = _judged(snapshot)
    out: list[Finding] = []
    in_order: list[Sequence[Entry]] = []

    def visible() -> Sequence[Entry]:  # sorted once for the two kinds that need it
        if not in_order:
            in_order.append(_visible(entries))
        return in_order[0]
    if "invalid" in kinds:
        out += [Finding("invalid", p.source, p.message) for p in list(settings.problems) + store.file_problems]
        out += [Finding("invalid", p.source, p.message, layer=layer) for layer, p in store.layer_errors.items()]
    if "index" in kinds:
        out += index_findings(store)
    if "stale_reference" in kinds:  # (only a text with a `/` can name a path)
        out += stale_references(list(prefiltered(entries, lambda c, i: "/" in c.text[i])), paths.workspace)
    if "duplicate" in kinds:
        out += duplicates(visible(), paths, in_order=True)
    sizes = _sizes_of(store, settings, texts_of(entries), memo) if "unreachable" in kinds or "over_limit" in kinds else None
    if "unreachable" in kinds:
        out += unreachable({layer: snapshot.layers[layer] for layer in LAYERS}, settings, sizes)
    if "never_injected" in kinds:
        out += never_injected(entries, paths)
    if "already_loaded" in kinds:
        out += already_loaded(entries, paths.workspace)
    if "over_limit" in kinds:
        out += over_limit(entries, settings, paths, sizes)
    if "unreviewed" in kinds and settings.require_review:
        out += unreviewed(store, entries)
    if "never_fires" in kinds:  # (of the Markdown layers: a conversation memory has no scope)
        out += never_fires([e for layer in FILE_LAYERS for e in snapshot.layers[layer]], paths.workspace)
    if "conflict" in kinds:
        out += conflicts(store)
    if "contradiction" in kinds:
        out += contradictions(store, visible(), memo, in_order=True)
    if "expired" in kinds or "to_evict" in kinds:
        out += forgetting(store, settings, entries, kinds)
    return out


def conflicts(store: MemoryStore) -> list[Finding]:
    """SPEC §8 "Unmerged files": each region of git conflict markers in a memory file, as the
    file and its lines (`context.md:8-12`); those lines are never entries, so never injected.
    (Markers in a frontmatter make the file `invalid`, with that reason.)"""
    from . import markdown as md

    out = []
    for rec in sorted(store.file_records(), key=lambda r: (r.layer, r.rel)):
        if b"<<<<<<<" not in rec.data:
            continue
        for start, end in md.conflict_regions(md.split_lines(rec.data.decode("utf-8", "replace"))):
            out.append(Finding("conflict", f"{rec.rel}:{start + 1}-{end}",
                               f"lines {start + 1}-{end} of this {rec.layer} memory file are an unfinished git merge "
                               "(conflict markers): never injected, and memtui will not change the file until the "
                               "merge is finished", layer=rec.layer))
    return out


def contradictions(store: MemoryStore, entries: Sequence[Entry], memo: TextMemo | None = None,
                   in_order: bool = False) -> list[Finding]:
    """Pairs of visible entries (any layers; archived and superseded ones are not visible) that
    state different values for the same thing (SPEC §17, `contradictions.contradiction_pairs`),
    each reported on both sides, naming the other; pairs the person kept apart are left out."""
    from .contradictions import SavedFacts, contradiction_pairs, rough_digests, rough_groups
    from .supersede import kept_apart
    from .supersession import pair_key

    visible = entries if in_order else _visible(entries)
    texts = texts_of(visible)
    try:
        kept = kept_apart(store)
    except Exception:  # an unreadable review table hides nothing: every pair is reported
        kept = set()

    def skip(i: int, j: int) -> bool:
        return bool(kept) and pair_key(texts[i], texts[j]) in kept

    out = []
    groups_of = memo.table("rough groups", rough_digests) if memo is not None else rough_groups
    fact_of = SavedFacts(*memo.getter("facts")) if memo is not None else None
    for i, j, found in contradiction_pairs(texts, skip, groups_of=groups_of, fact_of=fact_of):
        first, later = visible[i], visible[j]
        for mine, theirs, said, other_said in ((later, first, found.theirs, found.mine),
                                                (first, later, found.mine, found.theirs)):
            out.append(Finding("contradiction", mine.source_ref,
                               f"{found.kind}: says {said.shown} where {theirs.source_ref} says {other_said.shown}",
                               mine.id, mine.layer, other_id=theirs.id, other_source=theirs.source_ref))
    return out


def forgetting(store: MemoryStore, settings: Settings, entries: Sequence[Entry], kinds: tuple[str, ...] = KINDS,
               now: float | None = None) -> list[Finding]:
    """SPEC §18: `expired` entries (left out of every injection) and, with decay on, the
    `to_evict` ones (strength below 0.1), each with what to do."""
    from .forgetting import TO_EVICT, iso, read_flags
    from .forgetting_actions import ActionError, entry_vitals

    if settings.half_life_days is None:  # no decay: only an entry with an expiry can be judged
        try:
            own = {entry_id for entry_id, f in read_flags(store.paths.db_path).items() if f.expires is not None}
            entries = [e for e in prefiltered(entries, lambda c, i: c.expires[i] is not None or c.ids[i] in own)
                       if e.expires is not None or e.id in own]
        except Exception:  # noqa: BLE001 - entry_vitals says why the table cannot be read
            pass
    try:
        vit = entry_vitals(store, settings, now, entries)
    except ActionError as exc:
        return [Finding("index", str(store.paths.db_path), str(exc))]
    out = []
    for e in entries:
        v = vit.get(e.id)
        if v is None or e.archived:
            continue
        if v.expired and "expired" in kinds and v.expires is not None:
            out.append(Finding("expired", e.source_ref, f"expired {iso(v.expires)[:16].replace('T', ' ')} UTC: left out "
                               "of every injection; delete it, or lift its expiry (`expires:` in its file, "
                               "`memtui expire REF never`)", e.id, e.layer))
        elif v.level == TO_EVICT and "to_evict" in kinds and v.strength is not None:
            out.append(Finding("to_evict", e.source_ref, f"strength {v.strength:.2f}, unused since "
                               f"{iso(v.last_used)[:10]}: archive it (`status: archived`) or delete it "
                               "(`memtui delete REF`); `memtui pin REF` keeps it", e.id, e.layer))
    return out


def over_limit(entries: Sequence[Entry], settings: Settings, paths: Paths, sizes: LineSizes | None = None) -> list[Finding]:
    """For each assistant that keeps a limited amount of hook context (Claude Code: 10,000
    characters; Codex: 10,000 bytes): whether the budget lets these memories render more
    than that. The bound is generous (the entries that give the most text per token, as
    many as the whole budget pays for, every layer header), so no query can exceed it; the
    hook then cuts whole entries, so the finding says which budget would fit."""
    sizes = sizes or LineSizes(settings)
    columns = Columns.of(entries)
    measured = [sizes(text) for text, archived in zip(columns.text, columns.archived) if not archived]  # (tokens, size per hook)
    if not measured:
        return []
    total = settings.budget["total"]
    out = []
    # `most` walks the items by text per token, most first, until the budget is spent: at most one
    # item per token of the total and every item that costs no token, so only those are sorted
    reach = total + 1 + sum(1 for size in measured if size[0] <= 0)
    for at, (proto, limit) in enumerate(sizes.limited, start=1):
        items = heapq.nlargest(reach, ((size[at] + 1, size[0]) for size in measured),  # + 1: the newline before each line
                               key=lambda it: it[0] / max(it[1], 1))  # (as `sorted(..., reverse=True)[:reach]`)
        fixed = proto.measure(TITLE) + sum(proto.measure(h) + 2 for h in HEADERS.values())

        def most(budget: int, items: list[tuple[int, int]] = items, fixed: int = fixed) -> int:
            room, size = budget - est(TITLE), fixed
            for chars, cost in items:
                if room <= 0:
                    break
                take = min(1.0, room / max(cost, 1))
                size += int(chars * take + 0.999)
                room -= cost
            return size

        bound = most(total)
        if bound <= limit:
            continue
        low, high = 0, total  # the largest budget whose bound fits: most() grows with the budget
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (mid, high) if most(mid) <= limit else (low, mid - 1)
        out.append(Finding("over_limit", str(paths.global_settings),
                           f"memory.budget.total {total} can give up to {bound} {proto.unit} of these memories; "
                           f"{proto.name} keeps {limit} (the hook drops the last entries); "
                           f"a total of {low} or less always fits"))
    return out


def unreviewed(store: MemoryStore, entries: Sequence[Entry]) -> list[Finding]:
    """With `memory.requireReview` on: every entry awaiting review, which no injection sends
    until the person accepts it (SPEC §12)."""
    from .review import held_back

    held = held_back(store.review_state, entries)
    return [Finding("unreviewed", e.source_ref, "awaiting review: left out of every injection while "
                    "memory.requireReview is on (`memtui review`)", e.id, e.layer)
            for e in prefiltered(entries, lambda c, i: c.ids[i] in held) if e.id in held]


