"""memtui.tui — the Textual face of memtui. Widgets call the core store; they never read files."""
