"""The jsonl backup (SPEC §9): every memory file whole and every conversation row and
conversation; export, then import into an empty home and workspace, gives back every file
byte for byte and every row field for field. Real files, the real store, real SQLite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memtui.core import actions
from memtui.core.paths import Paths
from memtui.core.store.conversations import Conversations

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
    db = Conversations(paths.home / "muse.db")
    db.ensure_conversation("c-1", "数据库调优", str(paths.workspace))
    db.ensure_conversation("c-empty", "nothing remembered", None)
    db.add("连接池最大 20", category="decision", tags=["postgres", "pool"], conversation_id="c-1",
           source="auto", memory_id="m-1", created_at=1767225600000, updated_at=1767229200000)
    db.add("The staging API lives behind the VPN", memory_id="m-2", created_at=1,
           updated_at=2)
    # a backup restores what it holds even where its own memories resemble each other
    db.add("The staging API lives behind the VPN!", memory_id="m-3", created_at=3,
           updated_at=4)
    db.close()


def rows(paths: Paths) -> tuple[list[dict], list[dict]]:
    db = Conversations(paths.home / "muse.db")
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


AUTO_FILE = "---\nsource: auto\n---\n\n- deploy with blue green switches\n- deploy on fridays never\n"


def test_the_review_state_travels_with_the_backup(tmp_path):
    """SPEC §12: what the person accepted comes back accepted; the rest still awaits review."""

    src = make(tmp_path, "src")
    (src.user_root / "auto.md").write_text(AUTO_FILE)
    (src.project_root / "keys.md").write_text(f"---\nsource: auto\n---\n\n- Stripe key is {SECRET}\n")
    db = Conversations(src.home / "muse.db")
    db.ensure_conversation("c-1", "Deploys", None)
    for n in range(3):
        db.add(f"deploy fact number {n}", conversation_id="c-1", source="auto",
               memory_id=f"row-{n}", created_at=n + 1, updated_at=n + 1)
    db.close()
    store = actions.open_store(src)
    accepted = [e for e in store.entries() if e.text in ("deploy with blue green switches", "deploy fact number 1")
                or SECRET in e.text]
    assert len(actions.accept(store, accepted)) == 3
    waiting = sorted(e.text for e in actions.unreviewed(store))
    assert waiting == ["deploy fact number 0", "deploy fact number 2", "deploy on fridays never"]

    dump = tmp_path / "backup.jsonl"
    actions.export_memories(store, "jsonl", dump, user_home=tmp_path)
    reviewed = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()
                if json.loads(line)["kind"] == "reviewed"]
    assert len(reviewed) == 2  # the memory holding a secret leaves redacted: no longer what was accepted

    empty = make(tmp_path, "empty")
    target = actions.open_store(empty)
    report = actions.import_memories(target, "jsonl", dump, user_home=tmp_path)
    assert report.invalid == [] and report.reviewed_restored == 2
    assert sorted(e.text for e in actions.unreviewed(target)) == sorted([*waiting, "Stripe key is [REDACTED]"])

    exact = make(tmp_path, "exact")  # written without redaction, the secret's entry comes back accepted too
    dump2 = tmp_path / "exact.jsonl"
    actions.export_memories(actions.open_store(src), "jsonl", dump2, user_home=tmp_path, redact=False)
    again = actions.import_memories(actions.open_store(exact), "jsonl", dump2, user_home=tmp_path)
    assert again.reviewed_restored == 3
    assert sorted(e.text for e in actions.unreviewed(actions.open_store(exact))) == waiting


def test_a_review_line_must_name_a_place_and_a_text_hash(tmp_path):
    digest = "a" * 64
    lines = [{"kind": "reviewed", "layer": "user", "path": "n.md", "occurrence": 0, "sha256": "not-a-hash"},
             {"kind": "reviewed", "layer": "user", "path": "../n.md", "occurrence": 0, "sha256": digest},
             {"kind": "reviewed", "layer": "user", "path": "n.md", "occurrence": -1, "sha256": digest},
             {"kind": "reviewed", "layer": "conversation", "id": "", "sha256": digest},
             {"kind": "reviewed", "layer": "conversation", "id": "r", "sha256": digest, "text": "x"},
             {"kind": "reviewed", "layer": "user", "path": "n.md", "occurrence": 0, "sha256": digest},
             {"kind": "file", "layer": "user", "path": "n.md", "text": "---\nsource: auto\n---\n- a note\n"}]
    dump = tmp_path / "b.jsonl"
    dump.write_text("".join(json.dumps(line) + "\n" for line in lines))
    paths = make(tmp_path, "t")
    report = actions.import_memories(actions.open_store(paths), "jsonl", dump, user_home=tmp_path)
    assert [m.text for m in report.added] == ["a note"]
    assert [p.rsplit(":", 1)[1] for p, _ in report.invalid] == ["1", "2", "3", "4", "5"]
    assert report.reviewed_restored == 0  # a well-formed line whose hash is not the text's matches nothing


def test_a_backup_that_came_with_the_repository_is_not_restored_as_it_was(tmp_path):
    """SPEC §8: a jsonl file inside the workspace is the repository's, not the person's backup:
    no file comes back whole, no user memory, no conversation row, no review state; its project
    memories come in one by one as `source: import`, awaiting review."""

    src = make(tmp_path, "src")
    (src.user_root / "mine.md").write_text("---\nsource: auto\n---\n\n- my own preference\n")
    (src.project_root / "team.md").write_text("---\nsource: manual\n---\n\n- the team uses trunk-based development\n")
    db = Conversations(src.home / "muse.db")
    db.ensure_conversation("c-1", "Deploys", None)
    db.add("a conversation fact", conversation_id="c-1", source="auto", memory_id="row-1",
           created_at=1, updated_at=1)
    db.close()
    store = actions.open_store(src)
    actions.accept(store, store.entries())
    cloned = make(tmp_path, "cloned")
    actions.export_memories(store, "jsonl", cloned.workspace / "memories.jsonl", user_home=tmp_path, redact=False)

    target = actions.open_store(cloned)
    report = actions.import_memories(target, "jsonl", None, user_home=tmp_path)
    assert [m.text for m in report.added] == ["the team uses trunk-based development"]
    assert report.rows == [] and report.conversations == [] and report.reviewed_restored == 0
    assert len(report.invalid) == 2  # the user memory and the conversation row, each named
    [f] = report.files
    assert f.layer == "project" and f.backup is None and b"source: import" in f.data
    assert b"source: manual" not in f.data and list(cloned.user_root.rglob("*.md")) == []
    [entry] = actions.open_store(cloned).entries()
    assert entry.source == "import" and entry in actions.unreviewed(actions.open_store(cloned))


def test_a_backup_row_like_a_stored_row_but_other_text_is_restored(tmp_path):
    """Rows are skipped only for their id or the same text: a near-duplicate is other text,
    and a restore never drops text the backup holds."""
    src = make(tmp_path, "src")
    db = Conversations(src.home / "muse.db")
    db.ensure_conversation("c-1", "journal", str(src.workspace))
    db.add("Always run the linters before pushing", conversation_id="c-1", memory_id="m-1")
    db.add("Deploys   happen on Tuesdays", conversation_id="c-1", memory_id="m-2")
    db.close()
    dump = tmp_path / "b.jsonl"
    actions.export_memories(actions.open_store(src), "jsonl", dump, user_home=tmp_path)
    other = make(tmp_path, "other")
    db = Conversations(other.home / "muse.db")
    db.ensure_conversation("c-9", "journal", str(other.workspace))
    db.add("Always run the linter before pushing", conversation_id="c-9", memory_id="m-9")
    db.add("Deploys happen on Tuesdays", conversation_id="c-9", memory_id="m-8")
    db.close()
    report = actions.import_memories(actions.open_store(other), "jsonl", dump, user_home=tmp_path)
    assert [m.text for m in report.added] == ["Always run the linters before pushing"]
    assert [m.text for m, _ in report.duplicates] == ["Deploys   happen on Tuesdays"]
    texts = sorted(r["content"] for r in rows(other)[1])
    assert texts == ["Always run the linter before pushing", "Always run the linters before pushing",
                     "Deploys happen on Tuesdays"]
