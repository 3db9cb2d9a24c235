"""Review findings on the hybrid scores' fast paths (core/query_vector.py `scores`,
core/retrieval.py `_read_aligned`): cases the tests beside them do not reach."""

from __future__ import annotations

import math
import platform
from array import array

import pytest

from memtui.core import query_vector as qv

X86 = platform.machine().lower() in ("x86_64", "amd64")


@pytest.mark.xfail(X86, strict=True, reason="FAST_ERROR (2.5e-7) is a margin measured on random vectors, not a "
                   "bound of simsimd's float32 sums: each x86 kernel is 4.5e-7 to 1.7e-6 off here, so the rounding differs")
def test_a_unit_row_near_a_boundary_gets_the_exact_rounding_whatever_the_fast_sums_error():
    """Two unit vectors of 256 float32 (one large coordinate, the rest small and equal): the
    float32 running sum drops each small product next to the large one, so the kernel's sum
    is 4.5e-7 (AVX-512) to 1.7e-6 (serial) under the exact one, farther than FAST_ERROR, and across the 0.59655 boundary.
    SPEC §13: the cosine is rounded to 4 decimals, so the score is the exact sum's rounding."""
    pytest.importorskip("simsimd")
    row = [0.9999974370002747] + [0.00014142136205919087] * 255
    query = [0.5947361588478088] + [0.050343483686447144] * 255
    assert array("f", row).tolist() == row and array("f", query).tolist() == query  # float32 exactly
    assert abs(math.fsum(x * x for x in row) - 1.0) < 1e-7 and abs(math.fsum(x * x for x in query) - 1.0) < 1e-7
    exact = math.fsum(a * b for a, b in zip(query, row))
    assert round(exact * 10000) / 10000 == 0.5966
    assert qv.scores(query, qv.Rows(array("f", row), 1, 256)) == [0.5966]


@pytest.mark.xfail(strict=True, reason="the mapped vectors are no longer read through zipfile, so their CRC is "
                   "not checked: a changed byte is used as it is (a CRC over 40 MB costs ~25 ms on the hook)")
def test_a_layer_vectors_file_with_a_changed_byte_is_not_used(tmp_path):
    """A saved .npz of a layer's vectors whose vector bytes changed (a finite number still) is
    damaged: its zip CRC says so, and the vectors are computed again (as before they were
    mapped), not scored as they are."""
    np = pytest.importorskip("numpy")
    from memtui.core import retrieval
    from memtui.core.semantic import MODEL_DIM

    rows = np.random.default_rng(5).normal(size=(4, MODEL_DIM)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    path = tmp_path / "home" / "cache" / "layer-vectors-t-x-user.npz"
    retrieval._save_aligned(path, "state:user", rows)
    assert retrieval._read_aligned(path, "state:user", 4) is not None  # as saved: used
    data = bytearray(path.read_bytes())
    at = data.find(rows[2].tobytes())
    assert at > 0
    data[at:at + 4] = np.float32(0.5).tobytes()  # one number of the third row, another finite one
    path.write_bytes(bytes(data))
    assert retrieval._read_aligned(path, "state:user", 4) is None
