"""Property tests (the project's hypothesis profile decides how many examples and the seed)."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from memtui.core import interop
from memtui.core.interop import Memory

_text = st.text(min_size=1).filter(lambda s: s.strip())
_times = st.one_of(st.none(), st.integers(min_value=0, max_value=4_102_444_800_000_000).map(lambda us: us / 1_000_000))

memories = st.builds(
    Memory, text=_text, layer=st.sampled_from(interop.LAYERS), category=st.text(), tags=st.lists(
        st.text().map(str.strip).filter(bool).filter(lambda t: "," not in t), max_size=4).map(tuple),
    importance=st.sampled_from(["high", "normal", "low"]), status=st.sampled_from(["active", "archived"]),
    section=st.text(), name=st.text(), description=st.text(), updated_at=_times, origin=_text,
    extra=st.dictionaries(st.text(), st.one_of(st.text(), st.booleans(), st.integers(-10**9, 10**9))),
    conversation_id=st.one_of(st.none(), st.text()), conversation_title=st.text(), id=st.text(), source=st.text(),
    path=st.text(),
)


@given(st.lists(memories, max_size=5))
@example([Memory(text="one\u2028two\x85three\r\nfour", origin="o", extra={"k": "\u2029"})])
def test_jsonl_round_trip_is_lossless(tmp_path_factory, batch):
    dest = tmp_path_factory.mktemp("jsonl")
    [path] = interop.write("jsonl", batch, dest)
    back = interop.read("jsonl", path, dest, dest)
    assert back.problems == []
    assert back.memories == batch
