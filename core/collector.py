"""The cycle collector paused for a batch of work that makes millions of objects and next to
no cycles (the doctor over a large store, a merge of three parsed versions): its full passes
over them cost a third of such a run, and what they would free is freed when it runs again."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection inside the block; on again after it if it was on before."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
