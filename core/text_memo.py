"""What the doctor derives from each memory's text alone (the sizes of its injected line under
given settings, its contradiction blocking keys), kept between runs by text: at 400,000
memories making them again is seconds of every run, while a run after a change meets a few
new texts. Saved in the Muse home's cache (`<home>/cache/doctor-….bin`, rebuildable, never
required), stamped with memtui's code (`saved_layer.code_stamp`): other code, nothing is taken.
Each kind of value is saved for the texts of the last run that asked for it, so texts gone
from the store drop out."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from . import saved_cache
from .paths import Paths
from .saved_cache import read_saved, write_saved

log = logging.getLogger("memtui.text_memo")

MAGIC = b"memtui-doctor-memo\n"
V = TypeVar("V")


def cache_path(paths: Paths) -> Path:
    return saved_cache.cache_path(paths, "doctor")


def _stamp() -> str:
    from .store.saved_layer import code_stamp

    return code_stamp()


class TextMemo:
    """`memo(kind, text, make)`: `make(text)` (a value marshal can save), taken from the last
    run's when it made one for the same text; `save()` keeps this run's."""

    def __init__(self, paths: Paths | None):
        self.paths = paths
        self._keys: dict[str, bytes] = {}
        self._saved: dict[str, dict[bytes, Any]] | None = None
        self._now: dict[str, dict[bytes, Any]] = {}
        self.made = 0  # values made in this run (not found saved)
        # each value made, one object per distinct value: marshal then saves each once and the
        # next run reads it back shared (at ten times the large corpus, 400,000 texts' line
        # sizes are 572 distinct tuples, and their contradiction groups 270,000)
        self._values: dict[Any, Any] = {}

    def shared(self, value: V) -> V:
        """`value`, or the equal one made before in this run (a tuple's items too)."""
        if isinstance(value, tuple):
            value = tuple(map(self.shared, value))  # type: ignore[assignment]
        try:
            return self._values.setdefault(value, value)
        except TypeError:  # not hashable: kept as it is
            return value

    def key(self, text: str) -> bytes:
        key = self._keys.get(text)
        if key is None:
            key = self._keys[text] = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        return key

    def has(self, kind: str) -> bool:
        """Whether the last run saved values of this kind."""
        if self._saved is None:
            self._saved = self._read()
        return bool(self._saved.get(kind))

    def table(self, kind: str, make: Callable[[str], V]) -> Callable[[str], V]:
        """The function `text -> value` of one kind, through the memo."""
        if self._saved is None:
            self._saved = self._read()
        saved = self._saved.get(kind, {})
        now = self._now.setdefault(kind, {})
        key_of = self.key

        def value(text: str) -> V:
            key = key_of(text)
            found = now.get(key)
            if found is None:
                found = saved.get(key)
                if found is None:
                    found = self.shared(make(text))
                    self.made += 1
                now[key] = found
            return found

        return value

    def _read(self) -> dict[str, dict[bytes, Any]]:
        if self.paths is None:
            return {}
        data = read_saved(cache_path(self.paths), MAGIC, _stamp(), 1 << 30, log, "the doctor's saved values")
        if data is None:
            return {}
        tables = data.get("tables")
        if not isinstance(tables, dict):
            log.info("the doctor's saved values not read (no tables)")
            return {}
        return tables

    def getter(self, kind: str) -> tuple[Callable[[str], Any], Callable[[str, Any], None]]:
        """(get, put) of one kind by text, for values that are checked before they are taken:
        `get` gives this run's or the last run's (None: none), `put` keeps one made now."""
        if self._saved is None:
            self._saved = self._read()
        saved = self._saved.get(kind, {})
        now = self._now.setdefault(kind, {})

        def get(text: str) -> Any:
            key = self.key(text)
            found = now.get(key)
            if found is None:
                found = saved.get(key)
                if found is not None:
                    now[key] = found
            return found

        def put(text: str, value: Any) -> None:
            now[self.key(text)] = self.shared(value)
            self.made += 1

        return get, put

    def keep(self, kind: str, values: dict[str, Any]) -> None:
        """Values of a kind found elsewhere in this run (by text), saved with it."""
        if self._saved is None:
            self._saved = self._read()
        saved = self._saved.get(kind, {})
        now = self._now.setdefault(kind, {})
        for text, value in values.items():
            key = self.key(text)
            if key not in saved:
                self.made += 1
            now[key] = self.shared(value)

    def save(self) -> None:
        """Keep this run's values (nothing is written when every value was found saved and
        no kind lost texts)."""
        if self.paths is None or not self.paths.home.is_dir() or not self._now:
            return
        saved = self._saved or {}
        if not self.made and all(len(table) == len(saved.get(kind, ())) for kind, table in self._now.items()):
            return
        tables = dict(saved)
        tables.update(self._now)
        write_saved(self.paths, cache_path(self.paths), MAGIC, _stamp(), {"tables": tables}, log, "the doctor's values")
