"""Messages between the store, the app's workers and the main screen."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from memtui.core.actions import ActionError
from memtui.core.injection import InjectionResult
from memtui.core.store import StoreChange


class StoreChanged(Message):
    """The store reloaded (posted from the watcher's or a writer's thread)."""

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
    def __init__(self, query: str, result: InjectionResult, generation: int, left_out: Any = None) -> None:
        super().__init__()
        self.query = query
        self.result = result
        self.generation = generation
        self.left_out = left_out  # the preview pane's LeftOut, built in the worker


class WriteDone(Message):
    """A write worker finished: `result` is what the action returned, or `error` why it refused."""

    def __init__(self, job: str, result: Any, error: ActionError | None, context: dict[str, Any]) -> None:
        super().__init__()
        self.job = job
        self.result = result
        self.error = error
        self.context = context


class InsightsReady(Message):
    """The doctor's findings and the injection history, read in a worker."""

    def __init__(self, findings: list[Any], stats: dict[str, tuple[int, int]]) -> None:
        super().__init__()
        self.findings = findings
        self.stats = stats


class InboxReady(Message):
    """The entries awaiting review (`core.review.Pending`, newest first), read in a worker."""

    def __init__(self, items: list[Any]) -> None:
        super().__init__()
        self.items = items
