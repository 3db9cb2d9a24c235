"""An immutable view of every entry: what readers (injection, faces) get from the store."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from ..model import LAYERS, Entry, Layer
from .saved_rows import SavedEntries, every_entry


@dataclass(frozen=True)
class Snapshot:
    """The entries of the three layers at one moment. A reload builds a new one and swaps it
    in with one assignment, so a reader sees the old snapshot or the new one, never a mix."""

    layers: Mapping[str, Sequence[Entry]]  # a tuple each, or a large conversation layer's `SavedEntries`
    by_id: Mapping[str, Entry] = field(repr=False)  # (not a `SavedEntries`': it finds its own)

    @classmethod
    def build(cls, files: Mapping[str, tuple[Entry, ...]], conversation: Sequence[Entry]) -> Snapshot:
        layers: dict[str, Sequence[Entry]] = {Layer.USER: files.get(Layer.USER, ()), Layer.PROJECT: files.get(Layer.PROJECT, ()),
                  Layer.CONVERSATION: conversation}
        by_id = {e.id: e for name in LAYERS if not isinstance(layers[name], SavedEntries) for e in layers[name]}
        return cls(MappingProxyType(layers), MappingProxyType(by_id))

    @classmethod
    def empty(cls) -> Snapshot:
        return cls.build({}, ())

    def entries(self, layer: str | None = None) -> list[Entry]:
        if layer is None:
            return [e for name in LAYERS for e in self.layers[name]]
        return list(self.layers[layer])

    def each(self) -> Iterator[Entry]:
        """Every entry, a large conversation layer's read as it goes rather than held."""
        return every_entry([self.layers[name] for name in LAYERS])

    def get(self, entry_id: str) -> Entry | None:
        found = self.by_id.get(entry_id)
        saved = self.layers[Layer.CONVERSATION]
        if found is None and isinstance(saved, SavedEntries):
            return saved.get(entry_id)
        return found
