"""A seeded corpus generator for the benchmarks: sizes S, M and L, and LARGE (×1, ×2, ×5, ×10).

L is ≈10,000 Markdown entries in ≈500 files (mixed English and Chinese) plus 50,000
conversation memories in ≈1,000 conversations spread over ten workspaces (this one
included) and a few with no workspace, as Muse's shared database holds them.

LARGE has the shape of a real heavy user's store: ≈500 Markdown files with ≈3,100 entries,
and 50,000 conversation memories of which ≈37,000 belong to this workspace (the others to
nine other workspaces, a few to none). `scale` multiplies the Markdown files and the
conversation rows (×10: ≈5,000 files, ≈31,000 entries, 500,000 rows).
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from memtui.core.paths import Paths
from memtui.core.store.database import Database

EN = ("database pool timeout index query cache deploy pipeline docker image test vitest jest react "
      "component state router server client session cookie auth token migration schema postgres "
      "sqlite redis queue worker retry backoff latency throughput memory leak profile build lint "
      "format commit branch review release tag version api endpoint handler error logging metrics "
      "trace alert budget config secret feature flag rollout canary billing invoice stripe webhook").split()
ZH = ("数据库 连接池 超时 索引 查询 缓存 部署 流水线 镜像 测试 组件 状态 路由 服务 客户端 会话 "
      "认证 令牌 迁移 模式 队列 重试 延迟 吞吐 内存 泄漏 构建 格式 提交 分支 评审 发布 版本 接口 "
      "错误 日志 指标 告警 预算 配置 密钥 功能 灰度 账单 支付").split()
FILLER = "the a of to and with for on in when after before because so that but".split()


@dataclass(frozen=True)
class Size:
    name: str
    files: int
    entries_per_file: int
    conversations: int
    memories_per_conversation: int
    here_percent: int = 10  # of the conversations, in this workspace (the rest: nine others)


SIZES = {
    "S": Size("S", 10, 10, 10, 5),
    "M": Size("M", 100, 20, 200, 25),
    "L": Size("L", 500, 20, 1000, 50),
    "XL": Size("XL", 2500, 20, 5000, 50),  # 5× L
    "LARGE": Size("LARGE", 500, 6, 1000, 50, here_percent=73),
}


def sentence(rnd: random.Random) -> str:
    if rnd.random() < 0.3:
        return "".join(rnd.choice(ZH) for _ in range(rnd.randint(3, 10))) + "，" + "".join(
            rnd.choice(ZH) for _ in range(rnd.randint(2, 6)))
    words = []
    for _ in range(rnd.randint(6, 30)):
        words.append(rnd.choice(EN) if rnd.random() < 0.6 else rnd.choice(FILLER))
    if rnd.random() < 0.2:
        words.insert(rnd.randint(0, len(words)), rnd.choice(ZH))
    return " ".join(words).capitalize()


def markdown_file(rnd: random.Random, n: int) -> str:
    fm = {"type": rnd.choice(["preference", "knowledge", "decision", "pattern"]),
          "tags": rnd.sample(EN, 2), "updatedAt": f"2026-{rnd.randint(1, 12):02d}-{rnd.randint(1, 28):02d}"}
    if rnd.random() < 0.1:
        fm["importance"] = rnd.choice(["high", "low"])
    if rnd.random() < 0.03:
        fm["status"] = "archived"
    lines = ["---", f"type: {fm['type']}", f"tags: [{', '.join(fm['tags'])}]", f"updatedAt: {fm['updatedAt']}"]
    lines += [f"{k}: {v}" for k, v in fm.items() if k in ("importance", "status")]
    lines += ["---", ""]
    written = 0
    while written < n:
        lines += [f"## {rnd.choice(EN).capitalize()} {rnd.choice(ZH)}", ""]
        for _ in range(min(n - written, rnd.randint(3, 8))):
            lines.append(f"- {sentence(rnd)}")
            written += 1
        lines.append("")
    return "\n".join(lines)


def generate(base: Path, size: str = "S", seed: int = 1, scale: int = 1) -> Paths:
    """Write the corpus under `base` (home/ and workspace/) and return its paths; `scale`
    multiplies the Markdown files and the conversations."""
    spec = SIZES[size]
    rnd = random.Random(seed)
    paths = Paths(base.resolve() / "home", base.resolve() / "workspace")
    for i in range(spec.files * scale):
        root = paths.user_root if i % 2 == 0 else paths.project_root
        sub = f"topic-{i % 7}/" if i % 3 == 0 else ""
        path = root / f"{sub}notes-{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown_file(rnd, spec.entries_per_file), encoding="utf-8")
    (paths.home / "settings.json").write_text(json.dumps({"memoryEnabled": True}))
    Database(paths.db_path).ensure_schema()
    conn = sqlite3.connect(paths.db_path)
    workspaces = [str(paths.workspace)] + [f"/srv/other-{k}" for k in range(9)]
    convs, mems = [], []
    n = 0
    for c in range(spec.conversations * scale):
        if c % 50 == 0:
            where = None
        elif spec.here_percent != 10:
            where = workspaces[0] if c % 100 < spec.here_percent else workspaces[1 + c % 9]
        else:
            where = workspaces[c % len(workspaces)]
        cid = f"conv-{c:05d}"
        convs.append((cid, f"{rnd.choice(EN)} {rnd.choice(ZH)} #{c}", where, 1, 1))
        for _ in range(spec.memories_per_conversation):
            n += 1
            mems.append((f"mem-{n:07d}", "conversation", "knowledge", sentence(rnd),
                         json.dumps(rnd.sample(EN, 1)), "auto", cid, None, n, 1_760_000_000_000 + n))
    conn.executemany("INSERT INTO conversations VALUES (?,?,?,?,?)", convs)
    conn.executemany("INSERT INTO memories (id, type, category, content, tags, source, conversation_id, file_path, "
                     "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)", mems)
    conn.commit()
    conn.close()
    return paths


def queries(seed: int = 2, n: int = 200) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            out.append(" ".join(rnd.sample(EN, rnd.randint(1, 4))))
        elif kind == 1:
            out.append("".join(rnd.sample(ZH, rnd.randint(1, 3))))
        elif kind == 2:
            out.append(f"how do I fix the {rnd.choice(EN)} {rnd.choice(EN)} in {rnd.choice(ZH)}?")
        else:
            out.append(sentence(rnd))
    return out
