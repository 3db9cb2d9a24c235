"""Modal screens, one per module."""

from .confirm import ConfirmScreen
from .conflict import ConflictScreen
from .detail import DetailScreen
from .edit import EditScreen
from .findings import FindingsScreen
from .help import HelpScreen
from .settings import SettingsChoice, SettingsScreen
from .undo_log import UndoLogScreen

__all__ = ["ConfirmScreen", "ConflictScreen", "DetailScreen", "EditScreen", "FindingsScreen", "HelpScreen", "SettingsChoice", "SettingsScreen",
           "UndoLogScreen"]
