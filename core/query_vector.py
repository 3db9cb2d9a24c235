"""The message's vector for hybrid retrieval (SPEC §13) and its scores, without numpy and
without parsing the tokenizer's JSON: what the hook pays for the semantic extra.

Importing numpy (≈100 ms of CPU) and parsing the tokenizer's 1.8 MB of JSON (≈55 ms) cost more
than the rest of the hook together, for one short message. So the message is scored here in
plain Python, by every path (the hook, `memtui preview`, the TUI), and they cannot differ:

- **Token ids.** The tokenizer (WordLlama's, a Llama BPE with byte fallback) is kept as a
  prebuilt binary file, `<home>/cache/query-model-<model>.bin`: its single-character tokens,
  byte tokens and merges as sorted arrays that are read, never parsed (`QueryModel`). It is
  built from the tokenizer's own JSON by the first process that needs it (through the write
  gate) and holds only a tokenizer whose rule it knows (`build` refuses any other). `ids` is
  the BPE of that tokenizer: each word (a run of `▁` and what follows, no token of the
  vocabulary spanning two) merged by the lowest-ranked pair, the leftmost first. A message it
  cannot take (a special token's text, a `▁`, or a long one) is tokenized by `tokenizers`,
  which gives the same ids; a test holds the two equal.
- **The vector.** The mean of those ids' rows of the model's float16 table, read from the
  weights file at their offsets (`WeightRows`), summed exactly (`math.fsum`), made a unit
  vector in float64 and kept in float32, as `Embedder.embed` does for a memory.
- **The scores.** `scores` gives the cosine with each memory's vector, clipped to [0, 1] and
  rounded to 4 decimals, exactly (the rounding of the exact sum): simsimd's float64 dot kernel
  sums the products (no numpy), and the rare row whose sum is within that kernel's error bound
  of a rounding boundary is summed again in plain Python. Every path (the hook, `memtui preview`,
  the TUI) scores here, on any machine, so they cannot differ.
"""

from __future__ import annotations

import json
import math
import os
import struct
import sys
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul
from pathlib import Path
from typing import Any

from . import jsondata

MAGIC = b"memtui-query-model 1\n"
MAX_MODEL_BYTES = 64 << 20  # the model file: a few MB; a bigger file is not one
MAX_QUERY_CHARS = 4000  # a longer message is tokenized by `tokenizers` (the same ids, in Rust)
SPACE = "▁"  # the tokenizer's word marker (U+2581)
_NORMALIZER = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": SPACE},
                                                   {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]}


class Unsupported(Exception):
    """This tokenizer, or this message, is not one `QueryModel` takes: `tokenizers` does it."""


def le_array(kind: str, data: bytes) -> array:
    """A little-endian array of `kind` from bytes (the files are little-endian everywhere)."""
    out = array(kind)
    out.frombytes(data)
    if sys.byteorder == "big":
        out.byteswap()
    return out


def _le_bytes(values: array) -> bytes:
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


# ---------------------------------------------------------------------- the tokenizer, prebuilt
def build(tokenizer_json: bytes) -> bytes:
    """The query model's file from the tokenizer's JSON, or Unsupported when its rule is not
    the one `QueryModel.ids` follows (then every message goes through `tokenizers`)."""
    config = json.loads(tokenizer_json)
    model = config.get("model") or {}
    if (model.get("type") != "BPE" or model.get("byte_fallback") is not True or model.get("dropout")
            or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix")
            or model.get("ignore_merges") or config.get("pre_tokenizer") is not None
            or config.get("normalizer") != _NORMALIZER):
        raise Unsupported("not a byte-fallback BPE with the ▁ normalizer and no pre-tokenizer")
    vocab: dict[str, int] = model["vocab"]
    if any(SPACE in token.lstrip(SPACE) for token in vocab):  # a token spanning two words: words are not independent
        raise Unsupported("a token spans two words")
    bytes_ = [vocab.get(f"<0x{b:02X}>", -1) for b in range(256)]
    if min(bytes_) < 0:
        raise Unsupported("a byte has no token")
    byte_ids = array("I", bytes_)
    chars = sorted((token, i) for token, i in vocab.items() if len(token) == 1)
    keyed: dict[int, tuple[int, int]] = {}
    for rank, merge in enumerate(model["merges"]):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        a, b, made = vocab.get(left), vocab.get(right), vocab.get(left + right)
        if a is None or b is None or made is None:
            raise Unsupported(f"merge {rank} names a token outside the vocabulary")
        keyed.setdefault(a << 32 | b, (rank, made))
    keys = sorted(keyed)
    header = {"vocab": len(vocab), "chars": len(chars), "merges": len(keys),
              "added": sorted(t["content"] for t in config.get("added_tokens") or [])}
    return b"".join([MAGIC, json.dumps(header, ensure_ascii=True).encode() + b"\n",
                     _le_bytes(array("I", [ord(c) for c, _ in chars])), _le_bytes(array("I", [i for _, i in chars])),
                     _le_bytes(byte_ids),
                     _le_bytes(array("Q", keys)), _le_bytes(array("I", [keyed[k][0] for k in keys])),
                     _le_bytes(array("I", [keyed[k][1] for k in keys]))])


@dataclass(frozen=True)
class QueryModel:
    """The tokenizer as sorted arrays (see `build`): ids for a message without parsing JSON."""

    char_points: array  # code points of the single-character tokens, sorted
    char_ids: array
    byte_ids: array  # the `<0xXX>` token of each byte
    merge_keys: array  # left id << 32 | right id, sorted
    merge_ranks: array
    merge_ids: array  # the token a merge makes
    added: tuple[str, ...]  # special tokens' texts: a message holding one goes through `tokenizers`

    @classmethod
    def parse(cls, data: bytes) -> QueryModel:
        """The model from its file's bytes; ValueError when they are not a whole one."""
        if not data.startswith(MAGIC):
            raise ValueError("not a query model file")
        end = data.index(b"\n", len(MAGIC))
        header = jsondata.loads(data[len(MAGIC):end].decode("utf-8"))  # a JSONDecodeError or UnicodeDecodeError: ValueErrors
        n_chars, n_merges = int(header["chars"]), int(header["merges"])
        sizes = [("I", n_chars), ("I", n_chars), ("I", 256), ("Q", n_merges), ("I", n_merges), ("I", n_merges)]
        parts, at = [], end + 1
        for kind, n in sizes:
            width = array(kind).itemsize * n
            parts.append(le_array(kind, data[at:at + width]))
            at += width
        if at != len(data) or any(len(p) != n for p, (_, n) in zip(parts, sizes)):
            raise ValueError("its size does not match its header")
        vocab = int(header["vocab"])
        if max((max(p, default=0) for p in (parts[1], parts[2], parts[5])), default=0) >= vocab:
            raise ValueError("a token id outside the vocabulary")
        return cls(parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], tuple(str(a) for a in header["added"]))

    def _char(self, ch: str) -> list[int]:
        point = ord(ch)
        at = bisect_left(self.char_points, point)
        if at < len(self.char_points) and self.char_points[at] == point:
            return [self.char_ids[at]]
        return [self.byte_ids[b] for b in ch.encode("utf-8", "surrogatepass")]

    def _merge(self, a: int, b: int) -> tuple[int, int] | None:
        key = a << 32 | b
        at = bisect_left(self.merge_keys, key)
        if at < len(self.merge_keys) and self.merge_keys[at] == key:
            return self.merge_ranks[at], self.merge_ids[at]
        return None

    def ids(self, text: str) -> list[int]:
        """The token ids `tokenizers` gives `text` (without special tokens); Unsupported for a
        message it leaves to `tokenizers` (a special token's text, a `▁`, a long one)."""
        if len(text) > MAX_QUERY_CHARS or SPACE in text or any(a in text for a in self.added):
            raise Unsupported("left to tokenizers")
        if not text:
            return []
        normal = SPACE + text.replace(" ", SPACE)
        out: list[int] = []
        start = 0
        for i in range(1, len(normal) + 1):  # a word: a run of ▁ and what follows up to the next ▁
            if i == len(normal) or (normal[i] == SPACE and normal[i - 1] != SPACE):
                out += self._word(normal[start:i])
                start = i
        return out

    def _word(self, word: str) -> list[int]:
        symbols = [i for ch in word for i in self._char(ch)]
        pairs: dict[tuple[int, int], tuple[int, int]] = {}
        while len(symbols) > 1:
            best: tuple[int, int, int] | None = None  # (rank, position, made)
            for pos in range(len(symbols) - 1):
                key = (symbols[pos], symbols[pos + 1])
                found = pairs.get(key)
                if found is None:
                    found = pairs[key] = self._merge(*key) or (-1, -1)
                if found[0] >= 0 and (best is None or found[0] < best[0]):
                    best = (found[0], pos, found[1])
            if best is None:
                break
            symbols[best[1]:best[1] + 2] = [best[2]]
        return symbols


# ---------------------------------------------------------------------- the table's rows
class WeightRows:
    """Rows of the model's float16 table, read at their offsets in the safetensors file (its
    small JSON header parsed, the 16 MB table never loaded). Through the bounded opener: a FIFO
    or device in the file's place is refused, never waited on."""

    def __init__(self, weights: Path, tensor: str):
        from .bounded_reader import open_regular

        self._fd = open_regular(weights, 1 << 32)
        try:
            size = os.fstat(self._fd).st_size
            head = os.pread(self._fd, 8, 0)
            if len(head) != 8:
                raise ValueError("shorter than its header")
            (length,) = struct.unpack("<Q", head)
            if length > min(size, 1 << 24):
                raise ValueError("a header longer than the file")
            info = jsondata.loads(os.pread(self._fd, length, 8).decode("utf-8"))[tensor]
            if info["dtype"] != "F16" or len(info["shape"]) != 2:
                raise ValueError(f"a {info['dtype']} table of shape {info['shape']}, not float16 rows")
            self.rows, self.dim = (int(n) for n in info["shape"])
            begin, end = (int(n) for n in info["data_offsets"])
            self._start = 8 + length + begin
            if end - begin != self.rows * self.dim * 2 or 8 + length + end > size:
                raise ValueError("the table's size does not match its shape")
            self._row = struct.Struct(f"<{self.dim}e")
        except Exception:
            os.close(self._fd)
            raise

    def close(self) -> None:
        os.close(self._fd)

    def vector(self, ids: Sequence[int]) -> list[float]:
        """The unit vector of the ids' mean row (ids clipped to the table, as `Embedder.embed`
        does), in float32; a zero vector for no ids."""
        if not ids:
            return [0.0] * self.dim
        top = self.rows - 1
        rows = [self._row.unpack(os.pread(self._fd, self._row.size, self._start + min(max(i, 0), top) * self._row.size))
                for i in ids]
        n = len(rows)
        mean = [math.fsum(column) / n for column in zip(*rows)]
        norm = math.sqrt(math.fsum(x * x for x in mean))
        if not norm > 0 or not math.isfinite(norm):
            return [0.0] * self.dim
        return array("f", [x / norm for x in mean]).tolist()


# ---------------------------------------------------------------------- the scores
# The bound of a float64 dot product's error on unit vectors of 256: at most 256 roundings of a
# sum whose terms add up to at most 1 in size (Cauchy-Schwarz), 256 x 2^-53 < 3e-14, whatever the
# kernel's order of summation; with room to spare.
FAST_ERROR = 1e-12


class NotNumbers(ValueError):
    """A memory vector holds NaN or an infinity: its file is damaged (computed again)."""


@dataclass(frozen=True)
class Rows:
    """A layer's memory vectors in position order: `n` rows of `dim` numbers, flat, float64
    (an array("d"), a numpy float64 array, or a little-endian memoryview of a mapped file);
    their values are float32 ones (`Embedder.embed`'s), so each product with the query's
    float32 values is exact in float64. An array("f") is widened to float64 when scored."""

    flat: Any
    n: int
    dim: int


def _rounded(x: float) -> float:
    """Clipped to [0, 1], then numpy's rounding to 4 decimals (`rint(x * 10⁴) / 10⁴`)."""
    return round(min(max(x, 0.0), 1.0) * 10000.0) / 10000.0


def scores(query: Sequence[float], rows: Rows) -> list[float]:
    """SPEC §13: each row's cosine with the query's unit vector, clipped to [0, 1] and rounded
    to 4 decimals, exactly: the rounding of the exact sum of the products (a float32 times a
    float32 is exact in float64, and `fsum` rounds their sum once), on every machine.

    The products are summed by simsimd's float64 dot kernel (a few ms for 40,000 rows, no numpy:
    the hook's path) when it is installed; its sum is within `FAST_ERROR` of the exact one, so
    only a row that close to a rounding boundary is summed again exactly. Without it, every row
    is summed exactly in plain Python. NotNumbers when a row holds NaN or an infinity (its
    product with the query is then not finite)."""
    if rows.n == 0:
        return []
    given: memoryview[Any] = memoryview(rows.flat)
    view: memoryview[Any] = (memoryview(array("d", given.cast("B").cast("f"))) if given.format == "f"
                             else given.cast("B").cast("d"))
    fast = _fast_dots(query, view, rows.n, rows.dim)
    if fast is None:
        dim = rows.dim
        values = [_exact_dot(query, view[i * dim:(i + 1) * dim]) for i in range(rows.n)]
    else:
        values = fast
    if not math.isfinite(sum(values)):
        raise NotNumbers("vectors that are not numbers")
    if fast is None:
        return list(map(_rounded, values))
    out, near = _rounded_fast(values, FAST_ERROR * 10000.0)
    dim = rows.dim
    for i in near:
        out[i] = _rounded(_exact_dot(query, view[i * dim:(i + 1) * dim]))
    return out


_RINT = 6755399441055744.0  # 1.5 x 2^52: y + _RINT - _RINT is y rounded to an integer, half to even, for |y| < 2^51


def _rounded_fast(values: Sequence[float], slack: float) -> tuple[list[float], list[int]]:
    """`_rounded` of each finite value, in a few passes of plain arithmetic (no call per value:
    ~3 ms for 40,000 where `round` and `min`/`max` take ~15), and the indexes of the values
    within `slack` (or a little more) of a 4-decimal rounding boundary, whose rounding the
    caller takes again from the exact sum. A value scaled by 10⁴ is rounded by adding and
    taking away `_RINT` (the float unit's own rounding, half to even, as `round`'s), twice:
    `slack` over and under it; the two differ exactly when a boundary lies between, and
    elsewhere both are the rounding of the value itself. Clipped after rounding: rounding is
    monotone and 0 and 10⁴ are whole, so the order does not change the result."""
    top, twice = _RINT + 10000.0, 2.0 * slack
    over = [x * 10000.0 + twice + _RINT for x in values]
    under = [x * 10000.0 - twice + _RINT for x in values]
    near = [] if over == under else [i for i, (a, b) in enumerate(zip(over, under)) if a != b]
    out = [(r - _RINT) / 10000.0 if _RINT <= r <= top else (0.0 if r < _RINT else 1.0) for r in over]
    return out, near


def _exact_dot(query: Sequence[float], row: memoryview[Any]) -> float:
    """The correctly rounded sum of the products (`fsum`); NaN when they are not numbers (fsum
    refuses an infinity of each sign instead of giving NaN)."""
    try:
        return math.fsum(map(mul, query, row))
    except ValueError:
        return math.nan


def _fast_dots(query: Sequence[float], view: memoryview[Any], n: int, dim: int) -> list[float] | None:
    """Each row's dot product with `query` by simsimd's float64 kernel, or None (not installed,
    a big-endian machine: the exact sums then)."""
    try:
        import simsimd
    except ImportError:
        return None
    if sys.byteorder == "big":
        return None
    q = array("d", query)
    matrix: Any = view.cast("B").cast("d", [n, dim])
    one: Any = memoryview(q).cast("B").cast("d", [1, dim])
    dots: Any = simsimd.cdist(one, matrix, metric="dot")
    values: list[float] = memoryview(dots).cast("B").cast("d").tolist()  # type: ignore[assignment]  # format "d": floats
    return values
