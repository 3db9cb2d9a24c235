"""Steps 8 and 9 (`core.injection.make_line`, `est`) over many texts at once, for the store
that makes every line of a layer when it builds its index: the whitespace of every text
joined by C loops, only the lines that can hold a secret handed to the redaction. Held equal
to `LineMaker.made` of each text by the tests (tests/core/test_injection.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .candidates import Made
from .outbound import redact_lines

ELLIPSIS = "…"


def made_many(texts: Sequence[str], max_chars: int, redact_secrets: bool, est: Callable[[str], int]) -> list[Made]:
    """`[Made(*make_line(text, max_chars, redact_secrets), est(line)) ...]` of every text."""
    ones = list(map(" ".join, map(str.split, texts)))
    counts = [0] * len(ones)
    if redact_secrets:
        for at, (line, n) in redact_lines(ones).items():
            ones[at], counts[at] = line, n
    clipped = [len(one) > max_chars for one in ones]
    if any(clipped):
        ones = [one[: max_chars - 1] + ELLIPSIS if cut else one for one, cut in zip(ones, clipped)]
    lines = list(map("- ".__add__, ones))
    tokens = [-(-len(line) // 4) if line.isascii() else est(line) for line in lines]  # `est`, inline for ASCII
    return list(map(Made._make, zip(lines, clipped, counts, tokens)))
