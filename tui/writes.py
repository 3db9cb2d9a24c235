"""The main screen's writes: a new memory, an edit (and an edit that meets a change on disk),
a delete, undo, and the inbox's accept and reject. Each runs in the app's write worker
(`MemtuiApp.write`), which posts its typed outcome here, to the main screen; the handlers
say what happened and select what changed. The outcome then bubbles on to the app, which
refreshes what it holds (the inbox, the doctor's findings) and says a refusal."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.message import Message
from textual.screen import Screen

from memtui.core import actions
from memtui.core.display import display_path, escape_name
from memtui.core.model import Entry, Layer
from memtui.core.store import PlannedDelete

from . import screens
from .messages import (
    AcceptRefused,
    AlreadyRemembered,
    ChangeUndone,
    ContradictionSettled,
    DeleteAsked,
    EditConflict,
    EntriesAccepted,
    EntryAdded,
    EntryDeleted,
    EntryEdited,
    EntryRejected,
    NothingToUndo,
    StoreReloaded,
    UndoLogRead,
    WriteRefused,
)
from .text import LAYER_TITLES, describe, sentence, snippet, where

if TYPE_CHECKING:
    from .app import MemtuiApp


class MemoryWrites(Screen[None]):
    """The main screen's base: the writes it (and the inbox) asks for, and their outcomes."""

    @property
    def memtui(self) -> MemtuiApp:
        return cast("MemtuiApp", self.app)

    def select_after_reload(self, layer: str, entry_id: str) -> None:
        raise NotImplementedError  # the main screen's

    # -- new
    def remember(self, text: str, layer: str) -> None:
        """Save `text` as a new memory in `layer` (in the worker); the pane selects it."""
        store = self.memtui.store

        def job() -> Message | None:
            done = actions.remember(store, text, layer, check_enabled=False)
            if done.duplicate_of is not None:
                return AlreadyRemembered(done.duplicate_of, layer)
            return None if done.entry is None else EntryAdded(done.entry)

        self.memtui.write(job)

    def on_already_remembered(self, message: AlreadyRemembered) -> None:
        existing = message.existing
        self.select_after_reload(message.layer, existing.id)
        self.memtui.say(f"Already remembered in {describe(existing)}: {snippet(existing.text)}",
                        title="Not added", severity="warning", timeout=8)

    def on_entry_added(self, message: EntryAdded) -> None:
        entry = message.entry
        self.select_after_reload(entry.layer, entry.id)
        if self.memtui.settings.enabled:
            self.memtui.say(f"Added to {describe(entry)}", title="Saved")
        else:
            self.memtui.say(f"Added to {describe(entry)}. Memory is off for this workspace: Muse won't use it "
                            "until you turn memory on (t).", title="Saved · memory off", severity="warning", timeout=8)

    # -- edit
    def edit_memory(self, entry: Entry | None, text: str | None = None, banner: str | None = None) -> None:
        """The editor on `entry` (with `text` in place of its own; `banner`: why saving it
        did not work the last time)."""
        if entry is None:
            self.memtui.say("Select a memory first.", severity="warning")
            return
        screen = screens.EditScreen(f"Edit · {describe(entry)}", entry.text if text is None else text, entry=entry)
        if banner:
            screen.mark_conflict(banner)
        self.app.push_screen(screen, lambda new: self.save_edit(entry, new))

    def save_edit(self, entry: Entry, text: str | None) -> None:
        if text is None or text.strip() == entry.text:
            return
        if not text.strip():
            self.memtui.say("A memory can't be empty; use d to delete it.", severity="error")
            return
        store = self.memtui.store

        def job() -> Message | None:
            """Save, or on a conflict reload that file and find the version on disk (and, when
            the file cannot be read now, why)."""
            current = store.get(entry.id) or entry  # same text, maybe moved by changes around it
            try:
                new = actions.edit(store, current, text)
            except actions.Conflict:
                store.reload(changed=[entry.path] if entry.path else None, conversation=entry.layer == Layer.CONVERSATION)
                problem = store.problem_of(entry.path) if entry.path else None
                return EditConflict(entry, text, actions.on_disk_now(store, entry), problem.message if problem else None)
            return None if new is None else EntryEdited(new)

        self.memtui.write(job)

    def on_entry_edited(self, message: EntryEdited) -> None:
        new = message.entry
        self.select_after_reload(new.layer, new.id)
        self.memtui.say(f"Saved {describe(new)}", title="Saved")

    def on_edit_conflict(self, message: EditConflict) -> None:
        self.resolve_conflict(message.entry, message.mine, message.theirs, message.unreadable)

    def resolve_conflict(self, entry: Entry, mine: str, theirs: Entry | None,
                         unreadable: str | None = None) -> None:
        """Ask what to keep. When the entry's file cannot be read now, nothing can be saved in
        it: "keep mine" goes back to the editor with the text and the reason; only "save as
        new" (which names its file) writes elsewhere."""
        paths = self.memtui.paths
        new_file = "muse.db" if entry.layer == Layer.CONVERSATION else display_path(paths.default_file(entry.layer).name)
        file = where(entry).rsplit(":", 1)[0]
        reason = (unreadable or "").split("; skipped")[0]  # what is wrong, without what memtui does about it
        why = f"{file} can't be read now ({reason})"
        if unreadable:
            message = f"{describe(entry)} was changed on disk, and {file} can no longer be read. "
        else:
            message = f"{describe(entry)} was changed by someone else since you opened it. "
        message += f"Save as new adds your text to {new_file}."

        def chosen(choice: str | None) -> None:
            if unreadable and choice in ("mine", "edit"):
                if choice == "mine":
                    self.memtui.say(f"Not saved: {why}. Your text is still in the editor.", title="Not saved",
                                    severity="warning", timeout=10)
                self.edit_memory(entry, mine, banner=f"Not saved: {why}. Fix the file and save again, or save "
                                                     "and choose Save as new (a).")
            elif choice == "mine":
                if theirs is None:
                    self.remember(mine, entry.layer)
                else:
                    self.save_edit(theirs, mine)
            elif choice == "new":
                self.remember(mine, entry.layer)
            elif choice == "edit":
                self.edit_memory(theirs or entry, mine) if theirs else self.new_after_conflict(entry.layer, mine)
            else:
                self.memtui.say("Kept the version on disk; your edit was discarded.", title="Not saved")

        self.app.push_screen(screens.ConflictScreen(message, mine, theirs.text if theirs else None,
                                                    gone=f"{file} can't be read now: {reason}" if unreadable else None),
                             chosen)

    def new_after_conflict(self, layer: str, text: str) -> None:
        def done(new: str | None) -> None:
            if new is not None and new.strip():
                self.remember(new, layer)

        self.app.push_screen(screens.EditScreen(f"New {LAYER_TITLES[layer].lower()} memory (the original is gone)",
                                                text, layer=layer), done)

    def check_edit_conflict(self) -> None:
        """(The store changed) an entry's id holds while its text does: a vanished id means the
        entry itself changed on disk (changes elsewhere in its file are no conflict: the
        splice keeps them)."""
        screen, store = self.app.screen, self.memtui.store
        if (isinstance(screen, screens.EditScreen) and screen.entry is not None and not screen.conflict
                and store.get(screen.entry.id) is None):
            problem = store.problem_of(screen.entry.path) if screen.entry.path else None
            screen.mark_conflict(f"{where(screen.entry).rsplit(':', 1)[0]} can't be read now ({problem.message}). "
                                 "Saving will ask what to keep." if problem else
                                 "This memory changed on disk. Saving will ask what to keep.")

    # -- delete
    def on_delete_asked(self, message: DeleteAsked) -> None:
        entry, plan = message.entry, message.plan
        warning = actions.delete_warning(plan)
        body = Text.assemble(("This memory will be deleted:\n\n", ""), (snippet(entry.text, 400), "bold"),
                             (f"\n\nfrom {describe(entry)}. You can undo with u.", "dim"))
        if warning:
            body.append(f"\n\n⚠ {escape_name(warning)}", style="bold")
        store = self.memtui.store

        def job(plan: PlannedDelete = plan) -> EntryDeleted | None:
            change = actions.delete(store, plan)
            return None if change is None else EntryDeleted(entry, change)

        def answer(yes: bool | None) -> None:
            if yes:
                self.memtui.write(job, "Not deleted")

        self.app.push_screen(screens.ConfirmScreen("Delete memory?", body), answer)

    def on_entry_deleted(self, message: EntryDeleted) -> None:
        entry = message.entry
        self.memtui.say(f"Deleted {describe(entry)}: {sentence(snippet(entry.text))} Press u to undo.", title="Deleted")

    def on_contradiction_settled(self, message: ContradictionSettled) -> None:
        self.memtui.say(message.said, title="Contradiction")

    # -- undo
    def undo_last(self) -> None:
        store = self.memtui.store

        def job() -> ChangeUndone:
            pending = actions.undo_preview(store)
            if pending is None:
                raise actions.NotFound("Nothing to undo.")
            return ChangeUndone(actions.undo(store, pending.id))

        def refused(error: actions.ActionError) -> Message:
            return NothingToUndo(str(error)) if isinstance(error, actions.NotFound) else WriteRefused(error, "Cannot undo")

        self.memtui.write(job, refused)

    def on_nothing_to_undo(self, message: NothingToUndo) -> None:
        self.memtui.say(message.reason, title="Undo")

    def on_change_undone(self, message: ChangeUndone) -> None:
        self.memtui.say(f"Undone: {escape_name(message.change.summary)}", title="Undo", timeout=8)

    def on_undo_log_read(self, message: UndoLogRead) -> None:
        self.app.push_screen(screens.UndoLogScreen(message.changes, message.pending_id))

    # -- the inbox (SPEC §12)
    def accept_memories(self, entries: list[Entry]) -> None:
        store = self.memtui.store
        self.memtui.write(lambda: EntriesAccepted(actions.accept(store, entries)), AcceptRefused)

    def on_entries_accepted(self, message: EntriesAccepted) -> None:
        accepted = message.entries
        if accepted:
            what = describe(accepted[0]) if len(accepted) == 1 else f"{len(accepted)} memories"
            self.memtui.say(f"Accepted {what}. Press u to undo.", title="Inbox")

    def reject_memory(self, entry: Entry) -> None:
        store = self.memtui.store

        def job() -> EntryRejected | None:
            change = actions.reject(store, [entry])
            return None if change is None else EntryRejected(entry, change)

        self.memtui.write(job, "Not rejected")

    def on_entry_rejected(self, message: EntryRejected) -> None:
        entry = message.entry
        self.memtui.say(f"Rejected and deleted {describe(entry)}: {sentence(snippet(entry.text))} Press u to undo.",
                        title="Inbox")

    def on_store_reloaded(self, message: StoreReloaded) -> None:
        counts = message.counts
        shown = ", ".join(f"{counts[layer]['total']} {layer}" for layer in counts)
        problems = len(self.memtui.store.problems)
        extra = f"; {problems} file{'s' if problems != 1 else ''} skipped (see D)" if problems else ""
        self.memtui.say(f"Reloaded: {shown} memories{extra}.", title="Reload", timeout=4)
