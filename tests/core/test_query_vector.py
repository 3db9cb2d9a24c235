"""The message's vector without numpy or the tokenizer's JSON (core/query_vector.py): the
prebuilt query model gives `tokenizers`' own ids, the weights' rows give `Embedder.embed`'s own
vector bit for bit on these texts (they sum in another order: a last bit may differ elsewhere), the scores are the exact cosines (simsimd's sums made exact), and the hook's path with warm
caches imports neither numpy nor `tokenizers`."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.core import query_vector as qv
from memtui.core import semantic
from tests.helpers import enable, write

np = pytest.importorskip("numpy")
pytestmark = pytest.mark.skipif(importlib.util.find_spec("wordllama") is None, reason="the semantic extra is not installed")

TEXTS = ["Use PostgreSQL 16 + pgbouncer", "why is the dashboard query slow in postgres", "数据库连接池配置过小，高并发时超时",
         "", " ", "  two  spaces ", "x" * 300, "tabs\tand\nnewlines", "émoji 🎉 and ünïcode", "what's the pool size?!",
         "<s> a special token's text", "a ▁ marker", "a\u0301 combining", "\ud800 a lone surrogate"]


@pytest.fixture(scope="module")
def files() -> semantic.ModelFiles:
    return semantic.locate()


@pytest.fixture(scope="module")
def embedder(files: semantic.ModelFiles) -> semantic.Embedder:
    return semantic.Embedder(files)


@pytest.fixture(scope="module")
def model(files: semantic.ModelFiles) -> qv.QueryModel:
    return qv.QueryModel.parse(qv.build(files.tokenizer.read_bytes()))


def ids_or_theirs(model: qv.QueryModel, embedder: semantic.Embedder, text: str) -> list[int]:
    try:
        return model.ids(text)
    except qv.Unsupported:
        return embedder.token_ids(text)


def test_the_query_models_ids_are_the_tokenizers(model, embedder):
    for text in TEXTS:
        if "\ud800" in text:
            continue  # tokenizers takes no lone surrogate; the query model's bytes fall back
        assert ids_or_theirs(model, embedder, text) == embedder.token_ids(text), text
    with pytest.raises(qv.Unsupported):
        model.ids("<s> a special token's text")
    with pytest.raises(qv.Unsupported):
        model.ids("x" * (qv.MAX_QUERY_CHARS + 1))


PIECES = st.sampled_from(list("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 .,;:'\"!?-_()[]{}/\\\t\n数据库连接池éü🎉ß")
                         + ["ing", "tion", " the ", "  ", "'s", "n't", "pgbouncer", "Postgres", "\u200b", "\u0301"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.lists(PIECES, max_size=30).map("".join))
def test_the_query_models_ids_are_the_tokenizers_for_any_text(model, embedder, text):
    assert model.ids(text) == embedder.token_ids(text)


def test_the_vector_is_embed_s_own_bit_for_bit(files, model, embedder):
    rows = qv.WeightRows(files.weights, semantic.TENSOR)
    try:
        for text in TEXTS:
            if "\ud800" in text:
                continue
            ours = np.array(rows.vector(ids_or_theirs(model, embedder, text)), dtype=np.float32)
            assert np.array_equal(ours, embedder.embed([text])[0]), text
    finally:
        rows.close()


def test_a_tokenizer_of_another_rule_is_refused(files):
    config = json.loads(files.tokenizer.read_bytes())
    for change in ({"pre_tokenizer": {"type": "Whitespace"}}, {"normalizer": None},
                   {"model": {**config["model"], "byte_fallback": False}}):
        with pytest.raises(qv.Unsupported):
            qv.build(json.dumps({**config, **change}).encode())


def test_a_damaged_query_model_file_is_refused(files):
    data = qv.build(files.tokenizer.read_bytes())
    for bad in (data[:-1], data + b"\0", b"x" + data[1:], data.replace(b'"vocab": 32000', b'"vocab": 3')):
        with pytest.raises((ValueError, KeyError)):
            qv.QueryModel.parse(bad)


def _exact(query, flat, dim) -> list[float]:
    """The reference: the rounding of each row's exact sum of products, clipped to [0, 1]."""
    rows = [flat[i:i + dim] for i in range(0, len(flat), dim)]
    return [round(min(max(math.fsum(float(a) * float(b) for a, b in zip(query, m)), 0.0), 1.0) * 10000) / 10000
            for m in rows]


def test_scores_are_the_exact_cosines_and_numpys_agree(embedder):
    memories = embedder.embed(TEXTS[:10] + ["Kenji maintains the PostgreSQL cluster", "TypeScript strict mode"])
    query = embedder.embed(["why is the dashboard query slow in postgres"])[0]
    rows = qv.Rows(array("f", memories.astype(np.float32).tobytes()), len(memories), memories.shape[1])
    got = qv.scores(query.tolist(), rows)
    assert got == _exact(query.tolist(), array("f", memories.astype(np.float32).tobytes()).tolist(), memories.shape[1])
    assert all(0.0 <= s <= 1.0 for s in got)
    assert got == semantic.similarities(query, memories)


def _unit_rows(n: int, dim: int, seed: int) -> tuple[list[float], array]:
    """A seeded query and `n` unit rows near it (cosines spread over (0, 1)), in float32."""
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=dim)
    rows = centre * rng.uniform(0.0, 3.0, size=(n, 1)) + rng.normal(size=(n, dim))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    query = centre + rng.normal(scale=0.5, size=dim)
    query /= np.linalg.norm(query)
    return query.astype(np.float32).tolist(), array("f", rows.astype(np.float32).tobytes())


def test_the_fast_sums_are_the_exact_ones_with_every_kernel():
    """simsimd's float64 dot, with each of its kernels on this machine, gives the exact scores
    (a row within its error bound of a 4-decimal boundary is summed again exactly)."""
    simsimd = pytest.importorskip("simsimd")
    dim, n = semantic.MODEL_DIM, 20_000
    query, flat = _unit_rows(n, dim, seed=7)
    exact = _exact(query, flat.tolist(), dim)
    kernels = [k for k, on in simsimd.get_capabilities().items() if on and k != "serial"]
    try:
        for kernel in [None, *kernels]:  # None: the best the machine has; then each alone (serial under them)
            for other in kernels:
                (simsimd.enable_capability if kernel in (None, other) else simsimd.disable_capability)(other)
            assert qv.scores(query, qv.Rows(flat, n, dim)) == exact, kernel
    finally:
        for other in kernels:
            simsimd.enable_capability(other)


def test_a_row_within_the_error_bound_of_a_boundary_is_summed_again_exactly(monkeypatch):
    """The re-sum near a boundary, with a fast sum made worse on purpose: every sum 0.9 of the
    (widened) bound off. Rows that the error carries across a boundary get the exact rounding
    back; with no margin they would not, so the check can fail."""
    pytest.importorskip("simsimd")
    dim, n = semantic.MODEL_DIM, 20_000
    query, flat = _unit_rows(n, dim, seed=9)
    exact = _exact(query, flat.tolist(), dim)
    fast = qv._fast_dots
    monkeypatch.setattr(qv, "FAST_ERROR", 1e-5)
    monkeypatch.setattr(qv, "_fast_dots", lambda *a: [x + 0.9e-5 for x in fast(*a)])
    assert qv.scores(query, qv.Rows(flat, n, dim)) == exact
    monkeypatch.setattr(qv, "FAST_ERROR", 0.0)
    assert qv.scores(query, qv.Rows(flat, n, dim)) != exact


def test_a_unit_row_whose_float32_sum_crosses_a_boundary_gets_the_exact_rounding():
    """Two unit vectors of 256 float32 (one large coordinate, the rest small and equal): a
    float32 running sum drops each small product next to the large one (simsimd's float32
    kernels were 4.5e-7 to 1.7e-6 under the exact sum, across the 0.59655 boundary); the
    float64 sums are not.
    SPEC §13: the cosine is rounded to 4 decimals, so the score is the exact sum's rounding."""
    pytest.importorskip("simsimd")
    row = [0.9999974370002747] + [0.00014142136205919087] * 255
    query = [0.5947361588478088] + [0.050343483686447144] * 255
    assert array("f", row).tolist() == row and array("f", query).tolist() == query  # float32 exactly
    assert abs(math.fsum(x * x for x in row) - 1.0) < 1e-7 and abs(math.fsum(x * x for x in query) - 1.0) < 1e-7
    exact = math.fsum(a * b for a, b in zip(query, row))
    assert round(exact * 10000) / 10000 == 0.5966
    assert qv.scores(query, qv.Rows(array("f", row), 1, 256)) == [0.5966]


def test_without_simsimd_every_row_is_summed_exactly(monkeypatch):
    monkeypatch.setitem(sys.modules, "simsimd", None)  # an import of it fails
    dim = semantic.MODEL_DIM
    query, flat = _unit_rows(300, dim, seed=8)
    assert qv.scores(query, qv.Rows(flat, 300, dim)) == _exact(query, flat.tolist(), dim)
    query64 = [x + 1e-12 for x in query]  # not float32: exact sums too (simsimd takes float32 only)
    assert qv.scores(query64, qv.Rows(flat, 300, dim)) == _exact(query64, flat.tolist(), dim)


@pytest.mark.parametrize("fast", [True, False])
def test_rows_that_are_not_numbers_are_refused_by_either_path(monkeypatch, fast):
    if not fast:
        monkeypatch.setitem(sys.modules, "simsimd", None)
    good = array("f", [0.5, -0.25, 0.0, 1.0])
    assert qv.scores([1.0, 0.0], qv.Rows(good, 2, 2)) == [0.5, 0.0]
    for bad in (float("nan"), float("inf"), float("-inf")):
        for at in range(4):
            values = array("f", [0.5, -0.25, 0.0, 1.0])
            values[at] = bad
            with pytest.raises(qv.NotNumbers):
                qv.scores([1.0, 0.0], qv.Rows(values, 2, 2))
    both = array("f", [float("inf"), float("-inf"), 0.0, 1.0])  # an infinity of each sign in one row
    with pytest.raises(qv.NotNumbers):
        qv.scores([1.0, 1.0], qv.Rows(both, 2, 2))
    assert qv.scores([1.0, 0.0], qv.Rows(array("f"), 0, 2)) == []


def test_the_hooks_path_with_warm_caches_imports_neither_numpy_nor_tokenizers(paths):
    """Hybrid retrieval in focused mode, a second message after the first warmed the caches:
    the message's vector and every score come without numpy and without parsing the tokenizer,
    and the answer is the preview's."""
    enable(paths, {"memory": {"injection": "focused", "retrieval": "hybrid"}})
    write(paths.project_root / "db.md", "- The database is PostgreSQL 16\n- Use pnpm for packages\n- Deploys go out on Tuesdays\n")
    script = (
        "import sys, json\n"
        "from memtui.core.serve import build_injection\n"
        f"r = build_injection({str(paths.workspace)!r}, sys.argv[1], home={str(paths.home)!r})\n"
        "print(json.dumps({'text': r.text, 'numpy': 'numpy' in sys.modules, 'tokenizers': 'tokenizers' in sys.modules}))\n"
    )

    def run(message: str) -> dict:
        out = subprocess.run([sys.executable, "-c", script, message], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    cold = run("which database do we run")
    assert cold["numpy"]  # the first one embeds the memories and builds the query model
    run("which database do we run")  # the next one also saves the vectors beside the prepared index it finds
    warm = run("which sql server do we use")
    assert (warm["numpy"], warm["tokenizers"]) == (False, False)
    from memtui.core.serve import build_injection

    assert warm["text"] == build_injection(paths.workspace, "which sql server do we use", home=paths.home).text
    assert list((paths.home / "cache").glob("query-model-*.bin"))


def test_a_lone_surrogate_in_a_message_is_read_as_a_replacement_character(tmp_path):
    """A prompt can carry a `\\ud800` escape, which is not text: `tokenizers` refuses it, so the
    message is read with U+FFFD in its place, by both paths (short: the query model's; long or
    holding a special token's text: `tokenizers`')."""
    from memtui.core.retrieval import SemanticSession

    session = SemanticSession(tmp_path)
    for tail in (" pool size", " pool " * 1000, " <s> pool"):
        assert session.query_vector("\ud800" + tail) == session.query_vector("\ufffd" + tail)


def test_a_query_model_file_with_a_deep_header_or_weights_without_one_are_refused(tmp_path, files):
    with pytest.raises(ValueError):
        qv.QueryModel.parse(qv.MAGIC + b"[" * 100_000 + b"\n")
    short = tmp_path / "weights.safetensors"
    short.write_bytes(b"\x01\x02")
    with pytest.raises(ValueError):
        qv.WeightRows(short, semantic.TENSOR)


_BOUNDARY = st.integers(-10, 10_010).map(lambda k: (k + 0.5) / 10000.0)  # a 4-decimal rounding boundary


@given(values=st.lists(st.one_of(st.floats(-2.0, 2.0), st.floats(-1e300, 1e300),
                                 _BOUNDARY, st.tuples(_BOUNDARY, st.floats(-2e-12, 2e-12)).map(sum),
                                 st.sampled_from([0.0, -0.0, 1.0, 1.00004, 1.00005, -0.00005, 5e-324])),
                       max_size=40),
       slack=st.sampled_from([0.0, 1e-8, 1e-3]))
def test_the_fast_rounding_is_the_plain_one_away_from_a_boundary(values, slack):
    """`_rounded_fast`: each value's `_rounded`, except those it names as near a boundary,
    which are every value within `slack` of one (the caller sums them again exactly)."""
    out, near = qv._rounded_fast(values, slack)
    assert len(out) == len(values) and near == sorted(set(near))
    for i, x in enumerate(values):
        y = x * 10000.0
        if abs(y - math.floor(y) - 0.5) < slack:
            assert i in near, x
        if i not in near:
            assert out[i] == qv._rounded(x) and math.copysign(1.0, out[i]) == 1.0, x
