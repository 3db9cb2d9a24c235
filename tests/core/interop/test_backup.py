"""The jsonl backup (SPEC §9): every memory file whole and every conversation row and
conversation; export, then import into an empty home and workspace, gives back every file
byte for byte and every row field for field. Real files, the real store, real SQLite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memtui.core import actions
from memtui.core.paths import Paths
from memtui.core.store.index import MuseDB

FIXTURES = Path(__file__).parent / "fixtures"
SECRET = "sk_live_" + "51H8aQ2eZvKYlo2C0Yk3tB9mXqW7rPz"

# files shaped the way people and tools write them, one of each shape
SHAPES: dict[tuple[str, str], bytes] = {
    ("user", "preferences.md"): (b"---\ntype: preference\ntags: [typescript, testing]\nupdatedAt: 2026-02-11\n"
                                 b"source: manual\n---\n\n## Testing preferences\n\n- Use vitest, not jest\n"
                                 b"- Prefer describe/it style\n"),
    ("user", "billing.md"): b"# Acme Billing\n\n1. Invoices are immutable\n2. Credit notes fix mistakes\n",
    ("user", "crlf.md"): b"---\r\ntags: windows\r\n---\r\n\r\n- written on Windows\r\n- with CRLF\r\n",
    ("user", "bom.md"): "\ufeff- starts with a BOM\n".encode(),
    ("project", "docs/1.关键词策略.md"): "## 关键词\n\n- 长尾词优先\n".encode(),
    ("project", "notes-été.md"): "- café au lait is the team's fuel\n".encode(),
    ("project", "fence.md"): b"- Run:\n\n  ```sh\n  a();\n    \n  b();\n  ```\n",
    ("project", "flow.md"): b"---\n{type: decision, tags: [db]}\n---\nPostgres over MySQL, decided 2026-01.\n",
    ("user", "again/preferences.md"): b"- Use vitest, not jest\n",
    ("project", "named.md"): (b"---\nname: Release freeze\ndescription: merges frozen\nmetadata:\n  type: project\n---\n\n"
                              b"Non-critical merges are frozen.\n"),
}


def make(root: Path, name: str) -> Paths:
    home, ws = root / name / "home", root / name / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    return Paths(home.resolve(), ws.resolve())


def tree(paths: Paths) -> dict[tuple[str, str], bytes]:
    out = {}
    for layer, root in (("user", paths.user_root), ("project", paths.project_root)):
        for p in sorted(root.rglob("*.md")):
            out[(layer, p.relative_to(root).as_posix())] = p.read_bytes()
    return out


def populate(paths: Paths, tmp_path: Path) -> None:
    for (layer, rel), data in SHAPES.items():
        target = paths.root(layer) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    # files as an import leaves them: Cursor globs/alwaysApply, Claude Code type/metadata, origin
    store = actions.open_store(paths)
    rules = tmp_path / "cursor-src"
    shutil.copytree(FIXTURES / "cursor" / ".cursor" / "rules", rules)
    assert actions.import_memories(store, "cursor", rules, user_home=tmp_path).added
    claude = tmp_path / "claude-src"
    shutil.copytree(FIXTURES / "claude-code" / "memory", claude)
    assert actions.import_memories(actions.open_store(paths), "claude-code", claude, user_home=tmp_path).added
    db = MuseDB(paths.home / "muse.db")
    db.ensure_schema()
    db.ensure_conversation("c-1", "数据库调优", str(paths.workspace))
    db.ensure_conversation("c-empty", "nothing remembered", None)
    db.add_conversation_memory("连接池最大 20", category="decision", tags=["postgres", "pool"], conversation_id="c-1",
                               source="auto", memory_id="m-1", created_at=1767225600000, updated_at=1767229200000)
    db.add_conversation_memory("The staging API lives behind the VPN", memory_id="m-2", created_at=1,
                               updated_at=2)
    # a backup restores what it holds even where its own memories resemble each other
    db.add_conversation_memory("The staging API lives behind the VPN!", memory_id="m-3", created_at=3,
                               updated_at=4)
    db.close()


def rows(paths: Paths) -> tuple[list[dict], list[dict]]:
    db = MuseDB(paths.home / "muse.db")
    try:
        convs, mems = db.backup_rows()
    finally:
        db.close()
    return sorted(convs, key=lambda c: c["id"]), sorted(mems, key=lambda r: r["id"])


def test_backup_restores_every_file_byte_for_byte_and_every_row_field_for_field(tmp_path):
    src = make(tmp_path, "src")
    populate(src, tmp_path)
    before = tree(src)
    assert len(before) >= len(SHAPES) + 5
    dump = tmp_path / "backup.jsonl"
    plan = actions.export_memories(actions.open_store(src), "jsonl", dump, user_home=tmp_path)
    assert plan.redacted == 0 and plan.sync.counts()["added"] == 1
    kinds = [json.loads(line)["kind"] for line in dump.read_text(encoding="utf-8").splitlines()]
    assert kinds.count("file") == len(before) and kinds.count("row") == 3 and kinds.count("conversation") == 2

    empty = make(tmp_path, "empty")
    report = actions.import_memories(actions.open_store(empty), "jsonl", dump, user_home=tmp_path)
    assert report.invalid == [] and report.duplicates == []
    assert tree(empty) == before  # diff -r: the same files, the same bytes
    assert rows(empty) == rows(src)  # every conversation and row, every field

    again = actions.import_memories(actions.open_store(empty), "jsonl", dump, user_home=tmp_path)
    assert again.added == [] and again.files == [] and again.rows == []
    assert len(again.duplicates) == len(report.added)
    assert tree(empty) == before and rows(empty) == rows(src)


def test_backup_into_a_home_that_has_other_files_at_those_paths_overwrites_nothing(tmp_path):
    src = make(tmp_path, "src")
    (src.user_root / "notes.md").write_text("- Tabs, not spaces\n- Ship small pull requests\n")
    dump = tmp_path / "b.jsonl"
    actions.export_memories(actions.open_store(src), "jsonl", dump, user_home=tmp_path)
    other = make(tmp_path, "other")
    (other.user_root / "notes.md").write_text("- Ship small pull requests\n")
    report = actions.import_memories(actions.open_store(other), "jsonl", dump, user_home=tmp_path)
    assert (other.user_root / "notes.md").read_text() == "- Ship small pull requests\n"
    assert [m.text for m in report.added] == ["Tabs, not spaces"]
    assert [m.text for m, _ in report.duplicates] == ["Ship small pull requests"]
    assert [f.path.relative_to(other.user_root).as_posix() for f in report.files] == ["imported/jsonl/notes.md"]


def test_a_backup_line_naming_a_path_out_of_its_root_is_refused(tmp_path):
    dump = tmp_path / "evil.jsonl"
    lines = [{"kind": "file", "layer": "user", "path": p, "text": "- x\n"}
             for p in ("../escape.md", "/etc/x.md", ".trash/x.md", "a/../../b.md")]
    dump.write_text("".join(json.dumps(line) + "\n" for line in lines))
    paths = make(tmp_path, "t")
    report = actions.import_memories(actions.open_store(paths), "jsonl", dump, user_home=tmp_path)
    assert report.added == [] and len(report.invalid) == 4
    assert not (tmp_path / "t" / "home" / "escape.md").exists()


def test_secrets_leave_as_redacted_unless_asked(tmp_path):
    paths = make(tmp_path, "s")
    (paths.project_root / "keys.md").write_text(f"- Stripe key is {SECRET}\n")
    (paths.project_root / f"{SECRET}.md").write_text("- named after a key\n")
    store = actions.open_store(paths)
    plan = actions.export_memories(store, "jsonl", None, user_home=tmp_path, to_stdout=True)
    assert SECRET not in plan.text and "[REDACTED]" in plan.text and plan.redacted == 2
    assert '"path": "redacted.md"' in plan.text
    exact = actions.export_memories(store, "jsonl", None, user_home=tmp_path, to_stdout=True, redact=False)
    assert SECRET in exact.text and exact.redacted == 0
