"""What scoped memories (SPEC §16) cost the Claude Code hook, a whole process timed from its
spawn, in a workspace of `--files` source files:

    python -m tests.benchmarks.scopes [--files 5000] [--repeats 9]

- no scoped memory (the files in context are never looked for: the baseline);
- a scoped memory and a prompt naming `src/pkg0/mod0.py` (one existence check);
- a scoped memory and a prompt naming a bare `mod0.py` (the bounded workspace listing);
- a scoped memory and a 2 MB transcript (only its last 512 KiB is read).

Medians and p95 of `--repeats` spawns; the machine is shared: read the ratios to the baseline.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from memtui.core.paths import Paths

from .processes import spawn_times


def build(base: Path, n_files: int) -> tuple[Paths, Path]:
    home, ws = base / "home", base / "ws"
    (home / "memory").mkdir(parents=True)
    (ws / ".muse" / "memory").mkdir(parents=True)
    (ws / ".git").mkdir()
    for i in range(n_files):
        folder = ws / "src" / f"pkg{i // 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text("x = 1\n", encoding="utf-8")
    (home / "settings.json").write_text(json.dumps({"memoryEnabled": True}), encoding="utf-8")
    (ws / ".muse" / "memory" / "context.md").write_text(
        "".join(f"- Note {i} about the database pool timeout\n" for i in range(200)), encoding="utf-8")
    transcript = base / "transcript.jsonl"
    line = json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": str(ws / "src/pkg0/mod0.py")}}]}})
    prompt = json.dumps({"type": "user", "message": {"role": "user", "content": "go on"}})
    with transcript.open("w", encoding="utf-8") as fh:
        while fh.tell() < 2_000_000:
            fh.write(prompt + "\n" + line + "\n")
    return Paths(home.resolve(), ws.resolve()), transcript


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths, transcript = build(Path(tmp), args.files)
        hook = [str(Path(sys.executable).parent / "memtui"), "--home", str(paths.home), "hook", "claude-code"]

        def stdin(prompt: str, with_transcript: bool = False) -> bytes:
            data = {"hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": str(paths.workspace),
                    "session_id": "s"}
            if with_transcript:
                data["transcript_path"] = str(transcript)
            return json.dumps(data).encode()

        def timed(data: bytes) -> dict:
            spawn_times(hook, 1, stdin=data)  # the prepared index saved first: warm runs are timed
            return spawn_times(hook, args.repeats, stdin=data)

        rows = [("no scoped memory", timed(stdin("database pool timeout in src/pkg0/mod0.py")))]
        (paths.workspace / ".muse" / "memory" / "api.md").write_text(
            '---\npaths:\n  - "src/pkg0/**"\n---\n\n- The pool of pkg0 times out\n', encoding="utf-8")
        rows += [("scoped, a path in the prompt", timed(stdin("database pool timeout in src/pkg0/mod0.py"))),
                 ("scoped, a bare name in the prompt", timed(stdin("database pool timeout in mod0.py"))),
                 ("scoped, a 2 MB transcript", timed(stdin("database pool timeout", with_transcript=True)))]
        base = rows[0][1]
        print(f"{args.files} files, {args.repeats} warm spawns each: memtui --home HOME hook claude-code")
        for name, f in rows:
            print(f"  {name:<36} median {f['median_s'] * 1000:5.0f} ms (p95 {f['p95_s'] * 1000:4.0f}, "
                  f"cpu {f['cpu_median_s'] * 1000:4.0f})  x{f['median_s'] / base['median_s']:.2f} wall, "
                  f"x{f['cpu_median_s'] / base['cpu_median_s']:.2f} cpu")


if __name__ == "__main__":
    main()
