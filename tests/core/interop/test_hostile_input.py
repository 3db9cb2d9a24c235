"""Broken or hostile files are problems with a path and a reason; every other file still imports."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core import interop

LAUGHS = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9 if i else ['"lol"'] * 9) + "]\n"
    for i in range(9)
)

# name -> (bytes, expected reason fragment); the frontmatter shapes each format reads
HOSTILE = {
    "bad-yaml": (b"---\nname: [unclosed\ndescription: x\n---\n\nbody\n", "invalid YAML frontmatter"),
    "not-utf8": (b"---\nname: x\ndescription: d\ntype: user\n---\n\ncaf\xe9\n", "not UTF-8 (invalid byte at offset"),
    "too-big": (b"---\nname: x\ndescription: d\ntype: user\n---\n\n" + b"x" * (1024 * 1024), "over the 1 MiB limit"),
    "laughs": (("---\n" + LAUGHS + "name: x\n---\n\nbody\n").encode(), "anchors or aliases"),
    "python-tag": (b"---\nname: !!python/object/apply:os.system ['true']\n---\n\nbody\n", "invalid YAML frontmatter"),
    "bad-date": (b"---\nname: x\nupdatedAt: 2026-13-45\n---\n\nbody\n", "invalid YAML frontmatter"),
    "a-list": (b"---\n- a\n- b\n---\n\nbody\n", "frontmatter is a list, not a mapping"),
    # a deep nest crashes libyaml's C composer outright: refused before it is built
    "deep-nest": (("---\nname: " + "[" * 100_000 + "]" * 100_000 + "\n---\n\nbody\n").encode(), "nested more than 100"),
}

GOOD = {
    "claude-code": ("good.md", "---\nname: good\ndescription: fine\ntype: user\n---\n\nStill imported.\n"),
    "cursor": ("good.mdc", "---\ndescription: fine\nglobs: *.py\nalwaysApply: false\n---\nStill imported.\n"),
    "cline": ("progress.md", "# Progress\n\n- Still imported.\n"),
}
SUFFIX = {"claude-code": ".md", "cursor": ".mdc", "cline": ".md"}


def _folder(fmt: str, tmp_path: Path) -> Path:
    folder = tmp_path / "src" / fmt
    folder.mkdir(parents=True)
    name, text = GOOD[fmt]
    (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("fmt", ["claude-code", "cursor", "cline"])
def test_hostile_files_in_a_folder(fmt, tmp_path):
    folder = _folder(fmt, tmp_path)
    suffix = SUFFIX[fmt]
    expected: dict[str, str] = {}
    for name, (data, reason) in HOSTILE.items():
        (folder / f"{name}{suffix}").write_bytes(data)
        expected[f"{name}{suffix}"] = reason
    os.mkfifo(folder / f"pipe{suffix}")
    expected[f"pipe{suffix}"] = "a FIFO (named pipe), not a regular file"
    (folder / f"dir{suffix}").mkdir()
    expected[f"dir{suffix}"] = "a directory, not a regular file"
    secret = tmp_path / "secret.txt"
    secret.write_text("---\nname: key\ndescription: d\ntype: user\n---\n\nPRIVATE KEY\n")
    (folder / f"link{suffix}").symlink_to(secret)
    expected[f"link{suffix}"] = "symlink leads outside the folder being imported"
    (folder / "linked-dir").symlink_to(tmp_path, target_is_directory=True)
    expected["linked-dir"] = "symlink leads outside the folder being imported"

    result = interop.read(fmt, folder, tmp_path, tmp_path)

    assert [m.text for m in result.memories] == ["Still imported."]
    reasons = {Path(p.path).name: p.reason for p in result.problems}
    assert set(reasons) == set(expected)
    for name, fragment in expected.items():
        assert fragment in reasons[name], (name, reasons[name])
    assert all(Path(p.path).parent == folder for p in result.problems)
    assert not any("PRIVATE" in p.reason or "lol" in p.reason for p in result.problems)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_instructions_file(name, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    data, reason = HOSTILE[name]
    (ws / "AGENTS.md").write_bytes(data)
    (ws / "GEMINI.md").write_text("- Still imported.\n")
    result = interop.read("agents-md", None, ws, tmp_path)
    assert [m.text for m in result.memories] == ["Still imported."]
    assert len(result.problems) == 1
    assert result.problems[0].path == str(ws / "AGENTS.md") and reason in result.problems[0].reason


def test_instructions_file_that_is_a_fifo_or_a_link_out(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "AGENTS.md")
    (tmp_path / "id_rsa").write_text("secret\n")
    (ws / "CLAUDE.md").symlink_to(tmp_path / "id_rsa")
    result = interop.read("agents-md", None, ws, tmp_path)
    assert result.memories == []
    assert sorted((Path(p.path).name, p.reason) for p in result.problems) == [
        ("AGENTS.md", "a FIFO (named pipe), not a regular file; skipped"),
        ("CLAUDE.md", "symlink leads outside the folder being imported; not followed"),
    ]


def test_hostile_jsonl(tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_text('{"text": "' + "x" * (1024 * 1024 + 10) + '"}\n{"text": "small"}\n')
    result = interop.read("jsonl", big, tmp_path, tmp_path)
    assert [m.text for m in result.memories] == ["small"]
    assert result.problems == [interop.ImportProblem(f"{big}:1", "line is over 1 MiB; skipped")]
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b'{"text": "\xff"}\n')
    result = interop.read("jsonl", binary, tmp_path, tmp_path)
    assert result.memories == [] and "not UTF-8" in result.problems[0].reason
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    result = interop.read("jsonl", fifo, tmp_path, tmp_path)
    assert result.problems == [interop.ImportProblem(str(fifo), "a FIFO (named pipe), not a regular file; skipped")]


def test_a_folder_link_on_the_way_out_is_not_followed(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "CLAUDE.md").write_text("- secret\n")
    (ws / ".claude").symlink_to(outside, target_is_directory=True)
    result = interop.read("agents-md", None, ws, tmp_path)
    assert result.memories == []
    assert [(p.path, p.reason) for p in result.problems] == [
        (str(ws / ".claude" / "CLAUDE.md"), "symlink leads outside the folder being imported; not followed")]


def test_a_failed_export_leaves_nothing_behind(tmp_path, monkeypatch):
    from memtui.core.interop import _files

    real = _files.write_new
    calls = []

    def fail_second(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise interop.WriteRefused(f"cannot write {path}: No space left on device", [path])
        real(path, data)

    monkeypatch.setattr(_files, "write_new", fail_second)
    memories = [interop.Memory(text="one"), interop.Memory(text="two")]
    with pytest.raises(interop.WriteRefused, match="No space left"):
        interop.write("cursor", memories, tmp_path / "rules")
    assert list((tmp_path / "rules").iterdir()) == []
