"""Modal screens, one per module, each imported when first asked for (`screens.EditScreen`,
`from .screens import EditScreen`): none is shown before the first preview, and their widgets
(the editor's TextArea, the settings' inputs and selects) would add to the start-up."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_MODULE = {"ConfirmScreen": "confirm", "ConflictScreen": "conflict", "DetailScreen": "detail", "EditScreen": "edit",
           "FindingsScreen": "findings", "HelpScreen": "help", "InboxScreen": "inbox", "SettingsChoice": "settings",
           "SettingsScreen": "settings", "UndoLogScreen": "undo_log"}

if TYPE_CHECKING:
    from .confirm import ConfirmScreen
    from .conflict import ConflictScreen
    from .detail import DetailScreen
    from .edit import EditScreen
    from .findings import FindingsScreen
    from .help import HelpScreen
    from .inbox import InboxScreen
    from .settings import SettingsChoice, SettingsScreen
    from .undo_log import UndoLogScreen


def __getattr__(name: str) -> Any:
    module = _MODULE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = ["ConfirmScreen", "ConflictScreen", "DetailScreen", "EditScreen", "FindingsScreen", "HelpScreen",
           "InboxScreen", "SettingsChoice", "SettingsScreen", "UndoLogScreen"]
