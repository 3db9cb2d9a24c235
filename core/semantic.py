"""The semantic half of hybrid retrieval (SPEC §13): static word embeddings that ship inside an
installed package, so nothing is downloaded at run time.

The model is WordLlama's `l2_supercat_256` (MIT): a 32,000 × 256 token-embedding table and its
tokenizer, both inside the `wordllama` wheel (the optional extra `memtui[semantic]`). A text's
vector is the average of its tokens' rows (without the tokenizer's special tokens), exactly
as `WordLlama.embed` computes it; memtui reads the two files itself with `tokenizers` and
`safetensors` instead of importing `wordllama`, whose import pulls in pydantic and requests and
costs more than the hook's whole budget. A test checks the vectors against `WordLlama.embed`.

A message's vector is made without numpy by `core.query_vector` (the hook's path), equal to
this one. `similarities` gives the cosine of unit vectors, clipped to [0, 1] and rounded to 4 decimals, so a
score is the same on every machine: vectors are averaged in float64 from the model's float16
table, kept in float32 (their one canonical form, cached or fresh) and compared in float64.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is only there with the extra; nothing imports it unless hybrid is on
    import numpy as np

MODEL_PACKAGE = "wordllama"
MODEL_CONFIG = "l2_supercat"
MODEL_DIM = 256
_WEIGHTS = f"weights/{MODEL_CONFIG}_{MODEL_DIM}.safetensors"
_TOKENIZER = f"tokenizers/{MODEL_CONFIG}_tokenizer_config.json"
TENSOR = _TENSOR = "embedding.weight"
_BLOCK = 1024  # rows compared at once
EXTRA_HINT = "install the optional extra: pip install -e '.[semantic]' in memtui's clone"


@dataclass(frozen=True)
class ModelInfo:
    """Which model scores, for `preview --json` and `status`."""

    name: str
    version: str

    @property
    def tag(self) -> str:
        """A file-name-safe key for vectors made by this model (a new version makes new vectors)."""
        return f"{self.name}-{self.version}".replace("/", "_").replace(" ", "_")

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version}


class ModelUnavailable(Exception):
    """The optional extra is missing or damaged; `str()` says why, for the user."""


@dataclass(frozen=True)
class ModelFiles:
    info: ModelInfo
    weights: Path
    tokenizer: Path


def locate() -> ModelFiles:
    """Find the model's files inside the installed package without importing it."""
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"the semantic model is not installed ({EXTRA_HINT})")
    for missing in ("numpy", "tokenizers", "safetensors"):
        if importlib.util.find_spec(missing) is None:
            raise ModelUnavailable(f"the semantic model needs {missing}, which is not installed ({EXTRA_HINT})")
    folder = Path(next(iter(spec.submodule_search_locations)))
    weights, tokenizer = folder / _WEIGHTS, folder / _TOKENIZER
    for path in (weights, tokenizer):
        if not path.is_file():
            raise ModelUnavailable(f"the semantic model's file {path} is missing; reinstall it ({EXTRA_HINT})")
    return ModelFiles(ModelInfo(f"{MODEL_PACKAGE}/{MODEL_CONFIG}_{MODEL_DIM}", _version(folder)), weights, tokenizer)


def _version(folder: Path) -> str:
    """The installed package's version: from the `Version:` line of its wheel's METADATA beside
    it (the hook does not pay ≈25 ms to import `importlib.metadata`), else from that module."""
    from .bounded_reader import read_regular

    found = list(folder.parent.glob(f"{MODEL_PACKAGE}-*.dist-info"))
    for dist in found if len(found) == 1 else []:  # two (one left by an upgrade): the installer knows which
        try:
            head = read_regular(dist / "METADATA", 1 << 22).decode("utf-8").split("\n\n", 1)[0]
        except (OSError, UnicodeDecodeError):
            continue
        for line in head.splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    from importlib import metadata

    try:
        return metadata.version(MODEL_PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


def entry_text(text: str, section: str = "", name: str = "", description: str = "", tags: Iterable[str] = ()) -> str:
    """The fields SPEC §5 step 4 takes the terms of (M), as one text to embed."""
    return "\n".join(part for part in (text, section, name, description, *tags) if part)


class Embedder:
    """Vectors for texts: the model loaded once (≈0.1 s), then ≈20 µs a short text."""

    def __init__(self, files: ModelFiles):
        from safetensors import safe_open
        from tokenizers import Tokenizer

        self.info = files.info
        try:
            self._tokenizer = Tokenizer.from_file(str(files.tokenizer))
            self._tokenizer.no_padding()
            self._tokenizer.no_truncation()
            with safe_open(str(files.weights), framework="np") as handle:
                self._table = handle.get_tensor(_TENSOR)
        except Exception as exc:  # a damaged file in someone's site-packages: say so, don't crash
            raise ModelUnavailable(f"the semantic model could not be loaded: {exc} ({EXTRA_HINT})") from exc

    @property
    def dim(self) -> int:
        return int(self._table.shape[1])

    @classmethod
    def load(cls) -> Embedder:
        return cls(locate())

    def token_ids(self, text: str) -> list[int]:
        """The tokenizer's ids for `text`, without special tokens (what `embed` averages)."""
        ids: list[int] = self._tokenizer.encode(text, add_special_tokens=False).ids
        return ids

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one row per text, in the canonical float32 (an empty text: a zero row)."""
        import numpy as np

        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float64)
        if not texts:
            return out
        top = self._table.shape[0] - 1
        for row, encoding in enumerate(self._tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            ids = np.clip(np.asarray(encoding.ids, dtype=np.int64), 0, top)
            if ids.size == 0:
                continue
            mean = self._table[ids].astype(np.float64).mean(axis=0)
            norm = float(np.linalg.norm(mean))
            if norm > 0:
                out[row] = mean / norm
        return out.astype(np.float32)


def similarities(query: np.ndarray, vectors: np.ndarray) -> list[float]:
    """SPEC §13: cosine of the query's vector with each row, clipped to [0, 1], 4 decimals."""
    import numpy as np

    if vectors.shape[0] == 0:
        return []
    q = np.asarray(query, dtype=np.float64)
    products = np.empty(vectors.shape[0], dtype=np.float64)
    for start in range(0, vectors.shape[0], _BLOCK):  # in float64 a block at a time: no copy of the whole matrix
        stop = start + _BLOCK
        products[start:stop] = np.asarray(vectors[start:stop], dtype=np.float64) @ q
    scores: list[float] = np.round(np.clip(products, 0.0, 1.0), 4).tolist()
    return scores
