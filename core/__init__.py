"""memtui.core — the memory domain: files, database, settings, injection. Never imports Textual."""
