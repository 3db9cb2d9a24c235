"""The hook's whole answer for one input: parse it, build the injection for that prompt in
the workspace of `cwd` (SPEC §5), fit it into what the assistant keeps, record it (with
the assistant named) and render it the way that assistant reads it.

`memtui hook TARGET`, `memtui preview --target TARGET` and the TUI's preview for a target
all go through `for_target`, so what they show is what the assistant receives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import Target
from .protocol import HookInputError, HookProtocol, fit, parse_input

if TYPE_CHECKING:  # pragma: no cover
    from ..injection import InjectionResult
    from .hook_files import HookFiles


def protocol(target: Target | str) -> HookProtocol:
    target = Target(target)
    if target is Target.CODEX:
        from .codex import PROTOCOL
    elif target is Target.GEMINI:
        from .gemini import PROTOCOL
    else:
        from .claude_code import PROTOCOL
    return PROTOCOL


def files_of(target: Target | str) -> HookFiles:
    target = Target(target)
    if target is Target.CODEX:
        from .codex import FILES
    elif target is Target.GEMINI:
        from .gemini import FILES
    else:
        from .claude_code import FILES
    return FILES


def for_target(result: InjectionResult, target: Target | str | None) -> InjectionResult:
    """`result` as `target` receives it (unchanged for None: Muse itself)."""
    return result if target is None else fit(result, protocol(target))


def answer(target: Target | str, raw: bytes, home: str | None = None, cut: bool = False) -> bytes:
    """The bytes to print for this hook input (`cut`: only the input's first bytes, the rest
    not kept). Raises on any failure (the face prints the target's `nothing` instead and says
    why on stderr)."""
    proto = protocol(target)
    prompt, cwd = parse_input(raw, proto.event, cut)
    from .. import outbound
    from ..history import record
    from ..injection import build_injection
    from ..paths import Paths

    paths = Paths.resolve(home=home, cwd=cwd)
    if paths.home.exists() and not paths.home.is_dir():
        raise HookInputError(f"the Muse home {paths.home} is not a directory")
    result = build_injection(paths.workspace, prompt, home=paths.home)
    if result.disabled_reason == "switch_off":
        return proto.nothing
    delivered = fit(result, proto)
    # Recorded before it is printed: the history never misses an injection the assistant
    # saw, and a muse.db that cannot be written (locked, damaged) gives nothing rather than
    # a silent gap.
    outcome = record(paths.db_path, delivered, paths.workspace, target=str(proto.target))
    if not outcome.ok:
        raise RuntimeError(f"{paths.db_path}: {outcome.error}")
    text = outbound.injection_text(delivered)  # what leaves passes the outbound gate (SPEC §8)
    return proto.render(text) if text else proto.nothing
