"""The main screen's widgets, one per module."""

from .detail import DetailView
from .entry_pane import EntryPane, entry_prompt
from .preview import PreviewPane

__all__ = ["DetailView", "EntryPane", "PreviewPane", "entry_prompt"]
