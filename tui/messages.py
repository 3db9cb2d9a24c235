"""Messages between the store, the app's workers and the main screen."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.message import Message

from memtui.core.actions import ActionError
from memtui.core.injection import InjectionResult
from memtui.core.model import Entry
from memtui.core.store import Change, PlannedDelete, StoreChange

if TYPE_CHECKING:
    from memtui.core.finding_set import FoundSet
    from memtui.core.review import Pending

    from .startup import Opened
    from .widgets.preview import LeftOut


class Result(Message):
    """What a worker, the watcher or the store reports back to the app or a screen. One that
    arrives once its receiver is closing (the app exits, the screen is popped) is dropped
    there: nothing is left to show it in (`MemtuiApp.closing`, `MainScreen.gone`)."""


class StoreChanged(Result):
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


class StoreLoaded(Result):
    """The first load finished (`ok`), or failed (the start's worker says why). `ordered`:
    the conversation layer's snapshot and its pane order, found in the load's thread."""

    def __init__(self, ordered: tuple[Sequence[Entry], tuple[Entry, ...]] | None = None, ok: bool = True) -> None:
        super().__init__()
        self.ordered = ordered
        self.ok = ok


class PreparedOpened(Result):
    """The prepared index was opened (`startup.Opened`; None: it could not be): the panes and
    the first preview come from it while the store loads."""

    def __init__(self, opened: Opened | None) -> None:
        super().__init__()
        self.opened = opened


class IndexBuilding(Result):
    """The prepared index is being built (a first run, or layers whose memories changed)."""

    def __init__(self, layers: list[str]) -> None:
        super().__init__()
        self.layers = layers


class PreviewReady(Result):
    def __init__(self, query: str, result: InjectionResult, generation: int, left_out: LeftOut | None = None) -> None:
        super().__init__()
        self.query = query
        self.result = result
        self.generation = generation
        self.left_out = left_out  # the preview pane's LeftOut, built in the worker


class LeftOutReady(Result):
    """The near misses and per-reason lists of a preview already shown (a large store's are
    looked for once the typing pauses)."""

    def __init__(self, result: InjectionResult, generation: int, left_out: LeftOut) -> None:
        super().__init__()
        self.result = result
        self.generation = generation
        self.left_out = left_out


# ---------------------------------------------------------------- what a write worker reports
# The App's write worker posts exactly one of these per write: the outcome, typed, or the
# refusal. Each has one handler in the App (`@on(...)`), so every path from a write to what
# the user sees is visible to mypy and to a reader.


class WriteRefused(Result):
    """An action refused (`ActionError`); `title` heads the error notification."""

    def __init__(self, error: ActionError, title: str) -> None:
        super().__init__()
        self.error = error
        self.title = title


class EntryAdded(Result):
    def __init__(self, entry: Entry) -> None:
        super().__init__()
        self.entry = entry


class AlreadyRemembered(Result):
    """A new memory for `layer` was not added: `existing` already says it."""

    def __init__(self, existing: Entry, layer: str) -> None:
        super().__init__()
        self.existing = existing
        self.layer = layer


class EntryEdited(Result):
    def __init__(self, entry: Entry) -> None:
        super().__init__()
        self.entry = entry


class EditConflict(Result):
    """An edit found `entry` changed on disk; `theirs` is the version there now (None: gone).
    `unreadable`: why its file cannot be read now (then it cannot be saved there)."""

    def __init__(self, entry: Entry, mine: str, theirs: Entry | None, unreadable: str | None = None) -> None:
        super().__init__()
        self.entry = entry
        self.mine = mine
        self.theirs = theirs
        self.unreadable = unreadable


class DeleteAsked(Result):
    """The delete of `entry`, worked out off the loop (`plan`): to confirm, then apply as it is."""

    def __init__(self, entry: Entry, plan: PlannedDelete) -> None:
        super().__init__()
        self.entry = entry
        self.plan = plan


class ContradictionSettled(Result):
    """A contradiction the person settled in its dialog (SPEC §17): `said` tells what was done."""

    def __init__(self, said: str) -> None:
        super().__init__()
        self.said = said


class EntryDeleted(Result):
    def __init__(self, entry: Entry, change: Change) -> None:
        super().__init__()
        self.entry = entry
        self.change = change


class EntriesAccepted(Result):
    """Inbox entries accepted (SPEC §12)."""

    def __init__(self, entries: list[Entry]) -> None:
        super().__init__()
        self.entries = entries


class AcceptRefused(Result):
    def __init__(self, error: ActionError) -> None:
        super().__init__()
        self.error = error


class EntryRejected(Result):
    """An inbox entry rejected, which deletes it."""

    def __init__(self, entry: Entry, change: Change) -> None:
        super().__init__()
        self.entry = entry
        self.change = change


class ChangeUndone(Result):
    def __init__(self, change: Change) -> None:
        super().__init__()
        self.change = change


class NothingToUndo(Result):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class UndoLogRead(Result):
    """memtui's changes, newest first, and the id the next undo would revert."""

    def __init__(self, changes: list[Change], pending_id: str | None) -> None:
        super().__init__()
        self.changes = changes
        self.pending_id = pending_id


class UndoLogChanged(Result):
    """The undo log changed while it is open (a change made here or by `memtui` in another
    shell): posted to the open log, which shows it."""

    def __init__(self, changes: list[Change], pending_id: str | None, stamp: object) -> None:
        super().__init__()
        self.changes = changes
        self.pending_id = pending_id
        self.stamp = stamp


class MemorySwitched(Result):
    """The workspace's memory switch was saved as `enabled` in `path`."""

    def __init__(self, enabled: bool, path: Path) -> None:
        super().__init__()
        self.enabled = enabled
        self.path = path


class SwitchRefused(Result):
    def __init__(self, error: ActionError, wanted: bool) -> None:
        super().__init__()
        self.error = error
        self.wanted = wanted


class SettingsSaved(Result):
    def __init__(self, theme: str) -> None:
        super().__init__()
        self.theme = theme


class SettingsRefused(Result):
    def __init__(self, error: ActionError) -> None:
        super().__init__()
        self.error = error


class ThemeRemembered(Result):
    def __init__(self, theme: str) -> None:
        super().__init__()
        self.theme = theme


class StoreReloaded(Result):
    """A full reload finished: entries per layer (`actions.layer_counts`)."""

    def __init__(self, counts: dict[str, dict[str, int]]) -> None:
        super().__init__()
        self.counts = counts


class InsightsReady(Result):
    """The doctor's findings and the injection history, read in a worker."""

    def __init__(self, findings: FoundSet, stats: dict[str, tuple[Any, ...]], read: tuple[Any, ...] | None = None,
                 ok: bool = True) -> None:
        super().__init__()
        self.findings = findings
        self.stats = stats
        self.read = read  # what the doctor's child process read (`MemoryStore.read_state`); None: this store's
        self.ok = ok  # False: the doctor could not run (its finding says why)


class InboxReady(Result):
    """The entries awaiting review (`core.review.Pending`, newest first), read in a worker."""

    def __init__(self, items: Sequence[Pending]) -> None:
        super().__init__()
        self.items = items
