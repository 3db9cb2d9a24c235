"""The semantic model of SPEC §13: vectors equal the model's own, scores are exact to 4 decimals,
the vector cache keeps the canonical form, and a missing model is a reason, not a crash."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from memtui.core import semantic

np = pytest.importorskip("numpy")
pytestmark = pytest.mark.skipif(importlib.util.find_spec("wordllama") is None, reason="the semantic extra is not installed")


@pytest.fixture(scope="module")
def embedder() -> semantic.Embedder:
    return semantic.Embedder.load()


TEXTS = ["Use PostgreSQL 16 + pgbouncer", "why is the dashboard query slow in postgres", "数据库连接池配置过小，高并发时超时",
         "", "x" * 3000, "tabs\tand\nnewlines", "émoji 🎉 and ünïcode"]


def test_vectors_are_the_models_own(embedder):
    import wordllama
    from wordllama import WordLlama
    model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    ours = embedder.embed(TEXTS)
    with np.errstate(invalid="ignore", divide="ignore"):
        theirs = model.embed(TEXTS, norm=True)
    for i, text in enumerate(TEXTS):
        if not text:
            assert not ours[i].any()
            continue
        assert np.abs(ours[i] - theirs[i]).max() < 1e-6, text


def test_scores_are_clipped_rounded_and_rank_the_paraphrase_first(embedder):
    memories = ["Use PostgreSQL 16 + pgbouncer", "Kenji maintains the PostgreSQL cluster", "TypeScript strict mode, saying why"]
    query = embedder.embed(["why is the dashboard query slow in postgres"])[0]
    scores = semantic.similarities(query, embedder.embed(memories))
    assert all(0.0 <= s <= 1.0 and round(s, 4) == s for s in scores)
    assert scores[0] > scores[2] and scores[1] > scores[2]
    assert semantic.similarities(query, embedder.embed([""])) == [0.0]
    opposite = -query
    assert semantic.similarities(query, opposite[None, :]) == [0.0]  # negative cosine clips to 0


def test_model_info_names_package_and_version(embedder):
    from importlib import metadata
    assert embedder.info.name == "wordllama/l2_supercat_256"
    assert embedder.info.version == metadata.version("wordllama")


def test_vector_cache_gives_the_same_vectors_cold_and_warm(tmp_path, embedder):
    from memtui.core.store.vectors import VectorCache

    cold = VectorCache(tmp_path, embedder)
    first = cold.vectors(TEXTS[:3])
    assert cold.path.is_file()
    warm = VectorCache(tmp_path, embedder)
    again = warm.vectors(list(reversed(TEXTS[:3])))
    assert np.array_equal(first, again[::-1])
    both = warm.vectors([TEXTS[0], "a new text"])  # one known, one new: the file grows
    assert np.array_equal(both[0], first[0])
    assert len(np.load(warm.path, mmap_mode="r")) == 4


def test_a_damaged_vector_cache_is_rebuilt(tmp_path, embedder):
    from memtui.core.store.vectors import VectorCache

    cache = VectorCache(tmp_path, embedder)
    good = cache.vectors(["alpha"])
    cache.path.write_bytes(b"\x93NUMPY garbage")
    assert np.array_equal(VectorCache(tmp_path, embedder).vectors(["alpha"]), good)


def test_a_missing_model_is_a_reason(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wordllama" else real(name, *a))
    with pytest.raises(semantic.ModelUnavailable, match=r"pip install -e '\.\[semantic\]'"):
        semantic.locate()


def test_a_text_whose_key_ends_in_a_zero_byte_is_found_again(tmp_path, embedder):
    """NumPy's fixed-width bytes read back without trailing NUL bytes; the cache pads them."""
    from memtui.core.store.vectors import VectorCache, text_key

    text = next(t for t in (f"memory {i}" for i in range(100_000)) if text_key(t).endswith(b"\0"))
    cache = VectorCache(tmp_path, embedder)
    first = cache.vectors([text, "another"])
    assert np.array_equal(cache.vectors([text]), first[:1])  # the cache's rows, read back
    assert np.array_equal(VectorCache(tmp_path, embedder).vectors([text]), first[:1])
