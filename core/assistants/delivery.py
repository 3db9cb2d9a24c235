"""The hook's whole answer for one input: parse it, build the injection for that prompt in
the workspace of `cwd` (SPEC §5), fit it into what the assistant keeps, record it (with
the assistant named) and render it the way that assistant reads it.

`memtui hook TARGET`, `memtui preview --target TARGET` and the TUI's preview for a target
all go through `for_target`, so what they show is what the assistant receives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from . import Target
from .protocol import HookInputError, HookProtocol, fit, parse_hook_input

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from ..injection import InjectionResult
    from .hook_files import HookFiles



class PrivateMode(Exception):
    """Private mode is on (SPEC §18): the hook hands on nothing and says so on stderr."""

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
        from . import codex

        return codex.FILES
    if target is Target.GEMINI:
        from . import gemini

        return gemini.FILES
    from . import claude_code

    return claude_code.FILES


def for_target(result: InjectionResult, target: Target | str | None) -> InjectionResult:
    """`result` as `target` receives it (unchanged for None: Muse itself)."""
    return result if target is None else fit(result, protocol(target))


def injection_json_bytes(workspace: str | Path | None, query: str, home: str | Path | None = None,
                         target: Target | str | None = None, now: float | None = None,
                         files: tuple[str, ...] = ()) -> Iterator[bytes]:
    """`injection_json` as UTF-8 (`InjectionResult.json_bytes`), made as it is written: what
    the prepared index holds is read and checked before this returns (a damaged section
    found then is removed and the answer built again, as `injection_json` does)."""
    import logging

    from ..serve import build_injection
    from ..store.prepared import DamagedPreparedIndex

    try:
        return for_target(build_injection(workspace, query, home=home, now=now, files=files), target).json_bytes()
    except DamagedPreparedIndex as exc:
        logging.getLogger("memtui.injection").warning("%s", exc)
        return for_target(build_injection(workspace, query, home=home, now=now, files=files), target).json_bytes()


RECORD_WAIT_MS = 200  # how long the hook's history record waits for another writer of muse.db


def answer(target: Target | str, raw: bytes, home: str | None = None, cut: bool = False,
           warn: Callable[[str], object] | None = None) -> bytes:
    """The bytes to print for this hook input (`cut`: only the input's first bytes, the rest
    not kept). Raises on any failure (the face prints the target's `nothing` instead and says
    why on stderr). A history record that cannot be written (muse.db locked by another writer,
    read-only, damaged) is dropped after a short wait and said through `warn`: a locked
    database costs the prompt nothing (SPEC §8)."""
    proto = protocol(target)
    prompt, cwd, transcript = parse_hook_input(raw, proto.event, cut)
    from .. import outbound
    from ..history import record
    from ..paths import Paths
    from ..serve import build_injection

    paths = Paths.resolve(home=home, cwd=cwd)
    if paths.home.exists() and not paths.home.is_dir():
        raise HookInputError(f"the Muse home {paths.home} is not a directory")
    if proto.target is not Target.CLAUDE_CODE:
        transcript = None  # only Claude Code's transcript is read (its JSONL format is known)

    def files() -> list[str]:  # SPEC §16: found only when a scoped memory needs them
        from ..context import hook_files

        return hook_files(paths.workspace, prompt, transcript)

    result = build_injection(paths.workspace, prompt, home=paths.home, files=files)
    if result.disabled_reason == "switch_off":
        return proto.nothing
    if result.disabled_reason == "private":  # SPEC §18: nothing, nothing recorded, said (on stderr) as private
        from ..settings import load_settings

        raise PrivateMode(outbound.private_message(load_settings(paths)))
    delivered = fit(result, proto)
    # Recorded before it is printed (the history never misses an injection the assistant saw),
    # waiting briefly for another writer; a record that cannot be made is dropped and said
    outcome = record(paths.db_path, delivered, paths.workspace, target=str(proto.target),
                     busy_timeout_ms=RECORD_WAIT_MS)
    if not outcome.ok and warn is not None:
        warn(f"{paths.db_path}: {outcome.error} (the memories were still injected)")
    text = outbound.injection_text(delivered)  # what leaves passes the outbound gate (SPEC §8)
    return proto.render(text) if text else proto.nothing


def injection_json(workspace: str | Path | None, query: str, home: str | Path | None = None,
                   target: Target | str | None = None, now: float | None = None,
                   files: tuple[str, ...] = ()) -> list[str]:
    """`build_injection(...).to_json()` (what `preview --json` prints) in pieces to write one
    after the other (`InjectionResult.json_pieces`), as the assistant `target` receives it
    when given. A section of the prepared index that turns out damaged while the candidates
    are rendered is removed when it is read; the answer is then built again from the files,
    never a traceback (every piece is made before any is returned)."""
    import logging

    from ..serve import build_injection
    from ..store.prepared import DamagedPreparedIndex

    try:
        return for_target(build_injection(workspace, query, home=home, now=now, files=files), target).json_pieces()
    except DamagedPreparedIndex as exc:
        logging.getLogger("memtui.injection").warning("%s", exc)
        return for_target(build_injection(workspace, query, home=home, now=now, files=files), target).json_pieces()
