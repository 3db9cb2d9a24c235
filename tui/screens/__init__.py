"""Modal screens, one per module."""

from .confirm import ConfirmScreen
from .conflict import ConflictScreen
from .edit import EditScreen
from .help import HelpScreen
from .settings import SettingsChoice, SettingsScreen
from .undo_log import UndoLogScreen

__all__ = ["ConfirmScreen", "ConflictScreen", "EditScreen", "HelpScreen", "SettingsChoice", "SettingsScreen",
           "UndoLogScreen"]
