"""The bundled sample set behind `memtui --demo`: English and Chinese memories in all three
layers, several conversations, one archived file, and enough text that the default budget
truncates. Written into a fresh temporary home and workspace, with memory on."""

from __future__ import annotations

import json
import os
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from . import gate
from .paths import Paths
from .store.conversations import Conversations

FIXED_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z, so every run of the demo orders the same

USER_FILES = {
    "preferences.md": """---
type: preference
tags: [typescript, testing]
updatedAt: 2026-02-11
source: manual
importance: high
---

## Testing

- Use vitest, not jest
- Prefer describe/it style, one behaviour per test, and name tests after what the user sees
- Snapshot tests only for rendered output; assert on values everywhere else

## Code style

- TypeScript strict mode everywhere; no `any` without a comment saying why
- Prefer small pure functions and early returns over nested conditionals
- Use named exports; default exports only where a framework demands them
""",
    "tools.md": """---
type: preference
tags: tools, shell
updatedAt: 2026-03-02
source: auto
---

## Tools

- Package manager: pnpm, never npm or yarn in these repositories; lockfiles are committed and reviewed like code
- Editor is Neovim with LSP; do not suggest VS Code specific settings, extensions or workspace files
- Shell is fish; give commands that also work in bash when they are meant to be pasted into scripts or CI
- Prefer ripgrep and fd over grep and find in examples, but keep POSIX fallbacks for servers without them
- Git: small commits with imperative messages; rebase feature branches instead of merging main into them
- Run the formatter and the linter before proposing a diff; never reformat unrelated code in the same change
- When a command is destructive (rm -rf, force push, DROP TABLE), say so plainly and ask before running it
""",
    "workflow.md": """---
type: pattern
tags: [workflow]
updatedAt: 2026-05-30
---

## How I like to work

- Before writing code, restate the task in one sentence and list the files you expect to touch, so I can stop a wrong plan early
- For bugs: reproduce first with a failing test, then fix, then show the test passing; do not fix what you cannot reproduce
- Keep pull requests under about 400 changed lines; split refactors from behaviour changes so each can be reviewed on its own
- When you are unsure which of two designs is better, show both in a few lines each and say which you would pick and why
- Performance claims need numbers: a benchmark command, the machine, the median of several runs and the ratio to the baseline; a single timing proves nothing, and neither does a profile of a debug build, so always measure the release build with realistic data before and after the change
- Documentation changes ship in the same pull request as the code they describe; a README that lies is a bug
- Prefer deleting code to adding flags; every option is a promise to keep two behaviours working forever
- Error messages name the file, the line and what to do next; never just "invalid input"
""",
    "中文偏好.md": """---
type: preference
tags: [语言, 沟通]
updatedAt: 2026-04-18
---

## 沟通

- 回答请用中文，代码注释和提交信息保持英文
- 解释数据库问题时先给结论，再给原因和可以直接运行的命令
- 遇到不确定的地方直接说明不确定，不要编造接口或参数
""",
    "old-decisions.md": """---
type: decision
status: archived
updatedAt: 2025-06-30
---

- Use Jest with ts-jest for all unit tests
- Deploy with Heroku pipelines
""",
    "people.md": """---
type: knowledge
name: Team
description: Who to ask about what
updatedAt: 2026-01-20
---

# Team

Mara owns the billing service and the Stripe integration. Kenji maintains the
PostgreSQL cluster and pgbouncer; ask him before changing pool sizes or timeouts.
""",
}

PROJECT_FILES = {
    "context.md": """---
type: knowledge
tags: [database, performance]
updatedAt: 2026-05-09
---

## Database

- 数据库连接池配置过小，高并发时超时；生产环境 pool size 设为 40
- Use PostgreSQL 16 + pgbouncer in transaction mode; prepared statements are off
- Migrations live in `db/migrations` and run with `pnpm db:migrate`; never edit an applied migration

## Frontend

- The app is Next.js 15 with the app router; server components by default
- 前端状态管理用 Zustand，不要引入 Redux
""",
    "decisions/2026-03-api.md": """---
type: decision
tags: api
updatedAt: 2026-03-14
importance: high
---

## API versioning

- Public API is versioned in the URL (`/v2/...`); breaking changes need a new version and a deprecation notice of 90 days

Internal endpoints are not versioned; they may change with any release.
""",
    "patterns.md": """---
type: pattern
updatedAt: 2026-02-27
importance: low
---

- Repository pattern for data access: one module per aggregate under `src/db/`
- Errors crossing the API boundary are mapped to problem+json responses

```ts
// the shape every handler returns on failure
type Problem = { type: string; title: string; status: number; detail?: string }
```
""",
}

CONVERSATIONS = [
    ("conv-perf", "Slow dashboard queries", [
        ("The dashboard query scans orders without an index on (tenant_id, created_at); adding it cut p95 from 2.1 s to 80 ms", ["database", "performance"]),
        ("EXPLAIN ANALYZE showed a nested loop on 1.2M rows; rewrite as a lateral join", ["database"]),
        ("查询慢的根本原因是缺少复合索引，已在迁移 0042 中添加", ["数据库"]),
    ]),
    ("conv-auth", "Login redirect loop", [
        ("The redirect loop came from the session cookie being set with SameSite=Strict on the OAuth callback", ["auth"]),
        ("Fix: SameSite=Lax for the session cookie; keep Strict for the CSRF cookie", ["auth", "security"]),
    ]),
    ("conv-deploy", "部署流水线", [
        ("部署流水线在构建镜像时缓存失效，原因是 pnpm store 路径每次都变", ["ci"]),
        ("Pin the pnpm store path in CI to /cache/pnpm so Docker layer caching works", ["ci"]),
        ("Staging deploys run on every merge to main; production needs a tagged release", ["ci", "release"]),
    ]),
    ("conv-tests", "Flaky tests", [
        ("The flaky checkout test waited on a fixed sleep; wait for the network idle event instead", ["testing"]),
        ("Vitest fake timers do not advance timers scheduled inside promises unless you await vi.runAllTimersAsync()", ["testing", "vitest"]),
        ("Test data factories live in tests/factories; never share mutable fixtures between tests", ["testing"]),
    ]),
]

# Memories the assistant wrote that the person has not judged yet (the inbox shows them); every
# other `source: auto` memory of the demo counts as accepted.
AWAITING_REVIEW = (
    "When a command is destructive (rm -rf, force push, DROP TABLE), say so plainly and ask before running it",
    "Vitest fake timers do not advance timers scheduled inside promises unless you await vi.runAllTimersAsync()",
    "部署流水线在构建镜像时缓存失效，原因是 pnpm store 路径每次都变",
)

UNFILED = [("Kenji prefers questions about the database in the #db channel, not in DMs", ["people"])]
OTHER_WORKSPACE: tuple[str, str, list[tuple[str, list[str]]]] = ("conv-other", "Another project", [("This memory belongs to another workspace and is never shown here", [])])


# The demo repository's own files: an AGENTS.md the assistant loads anyway (one project memory
# repeats a line of it: the doctor's `already_loaded`) and the folders its memories name
# (`src/db/` was moved away since a memory named it: a `stale_reference`).
WORKSPACE_FILES = {
    "AGENTS.md": """# shop-app

- Migrations live in `db/migrations` and run with `pnpm db:migrate`; never edit an applied migration
- Run `pnpm test` before every push
""",
    "db/migrations/0001_init.sql": "CREATE TABLE orders (id bigint PRIMARY KEY);\n",
    "src/app/page.tsx": "export default function Page() { return null }\n",
}


def write_demo(home: Path, workspace: Path) -> Paths:
    """Write the sample set into `home` and `workspace` (both created) and turn memory on."""
    for rel, text in WORKSPACE_FILES.items():
        path = workspace / rel
        gate.make_dir(path.parent, root=workspace)
        gate.write(path, text.encode("utf-8"), root=workspace, kind=gate.Kind.TEXT)
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    for owner, root, files in ((home, home / "memory", USER_FILES), (workspace, workspace / ".muse" / "memory", PROJECT_FILES)):
        for rel, text in files.items():
            path = root / rel
            gate.make_dir(path.parent, root=owner)
            gate.write(path, text.encode("utf-8"), root=owner, kind=gate.Kind.MEMORY)
            os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    gate.write(home / "settings.json", (json.dumps(
        {"memoryEnabled": True, "theme": "muse-classic", "memtui": {"theme": "memtui-dark"}}, indent=2) + "\n"
    ).encode("utf-8"), root=home, kind=gate.Kind.SETTINGS)
    gate.write(workspace / ".muse" / "settings.json", (json.dumps({"memoryEnabled": True}, indent=2) + "\n").encode("utf-8"),
               root=workspace, kind=gate.Kind.SETTINGS)
    db = Conversations(home / "muse.db")
    base = FIXED_MTIME * 1000
    n = 0
    for cid, title, memories in [*CONVERSATIONS, OTHER_WORKSPACE]:
        where = str(workspace) if cid != "conv-other" else str(workspace.parent / "another-project")
        db.ensure_conversation(cid, title, where)
        for text, tags in memories:
            n += 1
            db.add(text, category="knowledge", tags=tags, conversation_id=cid, source="auto",
                   memory_id=f"{cid}-{n:02d}", created_at=base + n * 60_000, updated_at=base + n * 60_000)
    for text, tags in UNFILED:
        n += 1
        db.add(text, tags=tags, source="manual", memory_id=f"unfiled-{n:02d}",
               created_at=base + n * 60_000, updated_at=base + n * 60_000)
    db.close()
    paths = Paths(home.resolve(), workspace.resolve())
    _accept_reviewed(paths)
    return paths


def _accept_reviewed(paths: Paths) -> None:
    """Record the demo's auto memories as accepted, but for AWAITING_REVIEW; the load also
    indexes the memory files, so the demo starts with its search index in step."""
    from . import review
    from .store.memory import MemoryStore

    store = MemoryStore(paths)
    try:
        store.load()
        accepted = [e for e in store.entries() if review.needs_review(e) and e.text not in AWAITING_REVIEW]
        # the demo's own setting up, not a change of the person's: kept out of the undo log
        store.review_state.add([(review.review_key(e), e.id) for e in accepted])
    finally:
        store.close()


def make_demo(parent: Path | None = None) -> Paths:
    """A fresh temporary home + workspace holding the sample set."""
    base = Path(tempfile.mkdtemp(prefix="memtui-demo-", dir=parent))
    home = base / "home"
    workspace = base / "shop-app"
    for folder in (home, workspace, workspace / ".git"):
        gate.make_dir(folder, root=base)
    return write_demo(home, workspace)


def remove_demo(paths: Paths) -> None:
    """Remove the temporary folder `make_demo` made (the parent of its home)."""
    base = paths.home.parent
    gate.remove_tree(base, root=base.parent)


@contextmanager
def temporary_demo() -> Iterator[Paths]:
    """`make_demo`, removed on the way out: on return, on an exception, and on SIGHUP or
    SIGTERM (the terminal closed, `kill`), which would otherwise end the process without
    running any cleanup. On such a signal the folder is removed, then the process ends by
    that signal as it would have."""
    paths = make_demo()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        for _ in range(20):  # the app's threads may still be writing there (its index, a settle)
            try:
                remove_demo(paths)
            except OSError:
                pass
            if not paths.home.parent.exists():
                break
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGHUP, signal.SIGTERM)}
    try:
        yield paths
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        remove_demo(paths)
