"""Step 2's held-back candidates (`injection.held_back`): an expired entry (SPEC §18) and the
entries of a file whose scope matches no file in context (§16) are left out with their own
status in both injection modes, and the counts the TUI's left-out list reads (`status_counts`,
made from the scores alone in §5 mode) agree with the candidates themselves."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from memtui.core.serve import build_injection
from tests.helpers import enable, write

SCOPED = '---\npaths:\n  - "src/api/**"\n---\n\n- API errors are typed\n- API uses pagination tokens\n'
EXPIRED = "---\nexpires: 2020-01-01\n---\n\n- the old API server listens on port 8080\n"
PLAIN = "- API clients retry twice\n- a note about lunch\n"


@pytest.mark.parametrize("mode", ["muse", "focused"])
@pytest.mark.parametrize("files", [(), ("src/api/a.py",)])
def test_held_back_candidates_keep_their_status_and_their_counts(paths, mode, files):
    write(paths.project_root / "api.md", SCOPED)
    write(paths.project_root / "old.md", EXPIRED)
    write(paths.project_root / "context.md", PLAIN)
    write(paths.workspace / "src" / "api" / "a.py", "x\n")
    enable(paths, {"memory": {"injection": mode}})
    result = build_injection(paths.workspace, "API errors", home=paths.home, files=files)
    statuses = {c.source: c.status for c in result.iter_candidates()}
    assert statuses["old.md:5"] == "expired"
    scoped = {statuses["api.md:6"], statuses["api.md:7"]}
    assert scoped == {"out_of_scope"} if not files else "out_of_scope" not in scoped
    assert result.status_counts() == dict(Counter(c.status for c in result.iter_candidates()))
    assert json.loads(result.to_json())["count"] == result.count
