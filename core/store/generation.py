"""memtui's change counter over Muse's conversation rows (for the prepared index): triggers
that write only memtui's own table `memtui_state`, never Muse's tables. Kept apart from
`index` so that reading it needs the standard library alone."""


_BUMP = "BEGIN UPDATE memtui_state SET value = value + 1 WHERE key = 'rows_gen'; END"
# memtui's change counter for the prepared index: triggers that write only memtui's table.
GENERATION_TRIGGERS = {
    "memtui_gen_memories_ins": f"CREATE TRIGGER memtui_gen_memories_ins AFTER INSERT ON memories "
                               f"WHEN NEW.type = 'conversation' {_BUMP}",
    "memtui_gen_memories_upd": f"CREATE TRIGGER memtui_gen_memories_upd AFTER UPDATE ON memories "
                               f"WHEN OLD.type = 'conversation' OR NEW.type = 'conversation' {_BUMP}",
    "memtui_gen_memories_del": f"CREATE TRIGGER memtui_gen_memories_del AFTER DELETE ON memories "
                               f"WHEN OLD.type = 'conversation' {_BUMP}",
    "memtui_gen_conversations_ins": f"CREATE TRIGGER memtui_gen_conversations_ins AFTER INSERT ON conversations {_BUMP}",
    "memtui_gen_conversations_upd": f"CREATE TRIGGER memtui_gen_conversations_upd AFTER UPDATE ON conversations {_BUMP}",
    "memtui_gen_conversations_del": f"CREATE TRIGGER memtui_gen_conversations_del AFTER DELETE ON conversations {_BUMP}",
}

