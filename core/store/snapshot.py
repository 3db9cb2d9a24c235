"""An immutable view of every entry: what readers (injection, faces) get from the store."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..model import LAYERS, Entry, Layer


@dataclass(frozen=True)
class Snapshot:
    """The entries of the three layers at one moment. A reload builds a new one and swaps it
    in with one assignment, so a reader sees the old snapshot or the new one, never a mix."""

    layers: Mapping[str, tuple[Entry, ...]]
    by_id: Mapping[str, Entry] = field(repr=False)

    @classmethod
    def build(cls, files: Mapping[str, tuple[Entry, ...]], conversation: tuple[Entry, ...]) -> Snapshot:
        layers: dict[str, tuple[Entry, ...]] = {Layer.USER: files.get(Layer.USER, ()), Layer.PROJECT: files.get(Layer.PROJECT, ()),
                  Layer.CONVERSATION: conversation}
        by_id = {e.id: e for name in LAYERS for e in layers[name]}
        return cls(MappingProxyType(layers), MappingProxyType(by_id))

    @classmethod
    def empty(cls) -> Snapshot:
        return cls.build({}, ())

    def entries(self, layer: str | None = None) -> list[Entry]:
        if layer is None:
            return [e for name in LAYERS for e in self.layers[name]]
        return list(self.layers[layer])

    def get(self, entry_id: str) -> Entry | None:
        return self.by_id.get(entry_id)
