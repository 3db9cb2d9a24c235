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

    def can_replace(self, message: Message) -> bool:
        """A burst collapses into one refresh: Textual drops this message for the newer
        `message`, which takes over every layer this one touched."""
        if isinstance(message, StoreChanged):
            message.change = StoreChange(self.change.layers | message.change.layers,
                                         self.change.paths + message.change.paths, message.change.reason)
            return True
        return False


class StoreLoaded(Message):
    """The first load finished (in a worker)."""


class PreviewReady(Message):
    def __init__(self, query: str, result: InjectionResult, generation: int) -> None:
        super().__init__()
        self.query = query
        self.result = result
        self.generation = generation
