"""memtui's change counter over Muse's conversation rows (for the prepared index): triggers
that write only memtui's own tables (`memtui_state`, `memtui_row_log`), never Muse's. Kept
apart from `index` so that reading it needs the standard library alone.

Every change to a conversation memory or a conversation, by any writer, moves the counter by
one and logs which memory or conversation it touched under the counter's new value, so a
prepared index saved at one value can take in just the rows changed since. The log keeps the
last `LOG_KEPT` values; older ones are trimmed by the same trigger (a prepared index older
than that rebuilds its conversation layer whole)."""

LOG_KEPT = 20_000

STATE_TABLES = (
    "CREATE TABLE IF NOT EXISTS memtui_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS memtui_row_log (gen INTEGER NOT NULL, kind TEXT NOT NULL, id TEXT)",
    "CREATE INDEX IF NOT EXISTS memtui_row_log_gen ON memtui_row_log(gen)",
)

_GEN = "(SELECT value FROM memtui_state WHERE key = 'rows_gen')"


def _body(*logged: tuple[str, str]) -> str:
    """Move the counter, log each (kind, id expression) under its new value, trim the log."""
    parts = ["UPDATE memtui_state SET value = value + 1 WHERE key = 'rows_gen';"]
    parts += [f"INSERT INTO memtui_row_log (gen, kind, id) VALUES ({_GEN}, '{kind}', {expr});" for kind, expr in logged]
    parts.append(f"DELETE FROM memtui_row_log WHERE gen <= {_GEN} - {LOG_KEPT};")
    return "BEGIN " + " ".join(parts) + " END"


# memtui's change counter for the prepared index: triggers that write only memtui's tables.
GENERATION_TRIGGERS = {
    "memtui_gen_memories_ins": "CREATE TRIGGER memtui_gen_memories_ins AFTER INSERT ON memories "
                               "WHEN NEW.type = 'conversation' " + _body(("m", "NEW.id")),
    "memtui_gen_memories_upd": "CREATE TRIGGER memtui_gen_memories_upd AFTER UPDATE ON memories "
                               "WHEN OLD.type = 'conversation' OR NEW.type = 'conversation' "
                               + _body(("m", "OLD.id"), ("m", "NEW.id")),
    "memtui_gen_memories_del": "CREATE TRIGGER memtui_gen_memories_del AFTER DELETE ON memories "
                               "WHEN OLD.type = 'conversation' " + _body(("m", "OLD.id")),
    "memtui_gen_conversations_ins": "CREATE TRIGGER memtui_gen_conversations_ins AFTER INSERT ON conversations "
                                    + _body(("c", "NEW.id")),
    "memtui_gen_conversations_upd": "CREATE TRIGGER memtui_gen_conversations_upd AFTER UPDATE ON conversations "
                                    + _body(("c", "OLD.id"), ("c", "NEW.id")),
    "memtui_gen_conversations_del": "CREATE TRIGGER memtui_gen_conversations_del AFTER DELETE ON conversations "
                                    + _body(("c", "OLD.id")),
}
