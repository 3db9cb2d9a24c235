"""Modal screens, one per module, each imported when first asked for (`screens.EditScreen`,
`from .screens import EditScreen`): none is shown before the first preview, and their widgets
(the editor's TextArea, the settings' inputs and selects) would add to the start-up."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memtui.core import lazy_exports

_MODULE = {"ConfirmScreen": "confirm", "ConflictScreen": "conflict", "ContradictionScreen": "contradiction", "DetailScreen": "detail", "EditScreen": "edit",
           "FindingsScreen": "findings", "HelpScreen": "help", "InboxScreen": "inbox", "SettingsChoice": "settings",
           "SettingsScreen": "settings", "UndoLogScreen": "undo_log"}

if TYPE_CHECKING:
    from .confirm import ConfirmScreen
    from .conflict import ConflictScreen
    from .contradiction import ContradictionScreen
    from .detail import DetailScreen
    from .edit import EditScreen
    from .findings import FindingsScreen
    from .help import HelpScreen
    from .inbox import InboxScreen
    from .settings import SettingsChoice, SettingsScreen
    from .undo_log import UndoLogScreen


__getattr__ = lazy_exports(globals(), _MODULE)


__all__ = ["ConfirmScreen", "ConflictScreen", "ContradictionScreen", "DetailScreen", "EditScreen", "FindingsScreen", "HelpScreen",
           "InboxScreen", "SettingsChoice", "SettingsScreen", "UndoLogScreen"]
