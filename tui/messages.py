"""Messages the app passes between the store, its workers and its widgets."""

from __future__ import annotations

from textual.message import Message

from memtui.core.injection import InjectionResult
from memtui.core.store import StoreChange


class StoreChanged(Message):
    """The store reloaded (posted from the watcher's thread)."""

    def __init__(self, change: StoreChange) -> None:
        super().__init__()
        self.change = change

    def can_replace(self, message: Message) -> bool:  # a burst collapses into one refresh
        return isinstance(message, StoreChanged)


class StoreLoaded(Message):
    """The first load finished (in a worker)."""


class PreviewReady(Message):
    def __init__(self, query: str, result: InjectionResult, generation: int) -> None:
        super().__init__()
        self.query = query
        self.result = result
        self.generation = generation
