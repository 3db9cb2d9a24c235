"""Secret redaction (SPEC §8): well-known secret shapes become `[REDACTED]` before injection."""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

# Whole-match patterns: the matched text is replaced.
_WHOLE = [
    # PEM private-key blocks (also when the text was joined onto one line), or an unterminated one.
    re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)", re.S),
    # AWS access key ids.
    re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
    # Google API keys.
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    # GitHub tokens (classic and fine-grained).
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    # Slack tokens and webhooks.
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
    # OpenAI / Anthropic style keys.
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b"),
]

# Assignments: `password=...`, `api_key: ...`, `"secret": "..."` — the value is replaced.
_ASSIGNMENT = re.compile(
    r"""(?ix)
    (?P<key>\b[\w.-]*(?:password|passwd|pwd|secret|api[_-]?key|apikey|access[_-]?key|auth[_-]?token|access[_-]?token|private[_-]?key|client[_-]?secret)\b["']?)
    (?P<sep>\s*[:=]\s*)
    (?P<value>"[^"]*"|'[^']*'|[^\s,;]+)
    """
)


_ANY_WHOLE = re.compile("|".join(f"(?:{p.pattern})" for p in _WHOLE), re.S)
# Literal text each pattern above cannot match without (case-sensitive, as they are), and the
# words an assignment's key must contain (lower-cased): lines with none of them skip the regexes.
_WHOLE_MARKERS = ("-----BEGIN", "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA",
                  "AIza", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "hooks.slack.com", "sk-")
_KEY_WORDS = ("pass", "pwd", "secret", "key", "token")


def redact(text: str) -> tuple[str, int]:
    """Return the text with secrets replaced, and how many were replaced."""
    count = 0
    if any(marker in text for marker in _WHOLE_MARKERS):
        text, count = _ANY_WHOLE.subn(REDACTED, text)
    lowered = text.lower()
    if not any(word in lowered for word in _KEY_WORDS):  # no assignment can match
        return text, count

    def assignment(m: re.Match) -> str:
        nonlocal count
        if m.group("value").strip("\"'") in ("", REDACTED):
            return m.group(0)
        count += 1
        return f"{m.group('key')}{m.group('sep')}{REDACTED}"

    text = _ASSIGNMENT.sub(assignment, text)
    return text, count
