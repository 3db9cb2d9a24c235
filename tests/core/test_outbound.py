"""The outbound gate (SPEC §8): the API the faces and the export code call."""

from __future__ import annotations

import pytest

from memtui.core import outbound
from memtui.core.serve import build_injection
from memtui.core.settings import Settings
from tests.helpers import enable, write

from .secrets_corpus import LOOK_ALIKES, PEM_BODY, SECRETS

ON = Settings(enabled=True, redact_secrets=True)
OFF = Settings(enabled=True, redact_secrets=False)
GH = "ghp_" + "Fa1KeT0kEn" * 3 + "AbCdEf"


def test_redact_text_keeps_newlines_and_catches_what_spans_them():
    text = f"Deploy notes:\n\n  DB_PASSWORD=hunter2\n  token {GH}\nask ops."
    assert outbound.redact_text(text, ON) == "Deploy notes:\n\n  DB_PASSWORD=[REDACTED]\n  token [REDACTED]\nask ops."
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY[:32]}\n{PEM_BODY[32:]}\n-----END RSA PRIVATE KEY-----\nkeep this"
    assert outbound.redact_text(pem, ON) == "[REDACTED]\nkeep this"
    assert outbound.redact_text("the password:\n  hunter2-fake", ON) == "the password:\n  [REDACTED]"
    # a secret found only once the text is one line (as the injection makes it) comes back as
    # that one line, redacted
    aws_secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY001"
    assert outbound.redact_text(f"aws deploy user\n{aws_secret}", ON) == "aws deploy user [REDACTED]"


def test_redact_text_agrees_with_the_injection_on_the_whole_corpus():
    for marked in SECRETS.values():
        line = marked.replace("⟦", "").replace("⟧", "")
        assert outbound.redact_text(line, ON) == outbound.redact_line(line)[0]
    for line in LOOK_ALIKES.values():
        assert outbound.redact_text(line, ON) == line


def test_redaction_off_in_the_settings_is_off_everywhere():
    assert outbound.redact_text(f"token {GH}", OFF) == f"token {GH}"
    assert outbound.redact_name(f"notes-{GH}.md", OFF) == f"notes-{GH}.md"
    assert outbound.Outbound().result({"t": GH}, OFF) == {"t": GH}


def test_redact_name_gives_a_file_name_without_brackets():
    assert outbound.redact_name(f"notes-{GH}.md", ON) == "notes-redacted.md"
    assert outbound.redact_name("plain-name.md", ON) == "plain-name.md"


def test_outbound_result_redacts_every_string_keys_included():
    gate = outbound.Outbound()
    value = {"memories": [{"text": f"use {GH}", "tags": [GH], "score": 0.5, GH: None}], "count": 1}
    assert gate.result(value, ON) == {"memories": [{"text": "use [REDACTED]", "tags": ["[REDACTED]"],
                                                    "score": 0.5, "[REDACTED]": None}], "count": 1}


def test_outbound_check_refuses_while_memory_is_off():
    with pytest.raises(outbound.MemoryOff, match="^memory is off$"):
        outbound.Outbound.check(Settings(enabled=False))
    assert outbound.Outbound.check(ON) is ON


def test_injection_text_is_empty_while_memory_is_off(paths):
    write(paths.user_root / "a.md", "- deploy with password=hunter2\n")
    assert outbound.injection_text(build_injection(paths.workspace, "deploy", home=paths.home)) == ""
    enable(paths)
    result = build_injection(paths.workspace, "deploy", home=paths.home)
    assert outbound.injection_text(result) == result.text == "## Memory\n\n### User Preferences\n- deploy with password=[REDACTED]"


@pytest.mark.parametrize("line", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_a_look_alike_is_left_alone_by_every_surface(line):
    """One rule for every surface (issue 32: `export jsonl` redacted an ARN at the start of a
    line of a memory file that the injection leaves alone): a whole file's text, where the line
    follows a newline, is redacted exactly as the line alone."""
    from memtui.core.outbound import redact_text

    for text in (f"- {line}", f"---\ntype: knowledge\n---\n\n## Notes\n\n- first\n{line}\n", f"- db\n  {line}\n"):
        assert redact_text(text, True) == text
