"""FetchedPartition: what a 0.8 fetch answer yields, without sockets (sheet §2.2, §2.3)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkafka.consumer.simple08 import FetchedPartition
from zkafka.errors import MessageSizeTooLargeError, OffsetOutOfRangeError
from zkafka.records import native
from zkafka.records.compression import GZIP, SNAPPY
from zkafka.records.default_record import Record
from zkafka.records.fetched import has_batches
from zkafka.records.format08 import assign_offsets, build_message_set, entries
from zkafka.records.record_batch import build_batch

# The codec's decoding, checks and offset assignment run on the native core and on the pure path.
pytestmark = pytest.mark.usefixtures("codec_path")


def fetched(data, offset=0, error=0):
    return FetchedPartition("t", 0, offset, error, 100, memoryview(data))


def test_plain_messages_with_keys_and_next_offset():
    data = build_message_set([(b"k1", b"v1"), (None, b"v2"), (b"k3", None)], base_offset=5)
    part = fetched(data, 5)
    got = [(m.offset, m.key, m.value, m.next_offset) for m in part]
    assert got == [(5, b"k1", b"v1", 6), (6, None, b"v2", 7), (7, b"k3", None, 8)]
    assert part.next_offset == 8
    assert part.valid_bytes == len(data)


def test_partial_trailing_entry_is_not_a_message():
    data = build_message_set([(b"k", b"a" * 10), (b"k", b"b" * 10)], base_offset=0)
    part = fetched(data[:-5], 0)
    assert [m.offset for m in part] == [0]
    assert part.next_offset == 1  # the next fetch asks again for the cut message
    assert part.valid_bytes == len(data) // 2


def test_entry_larger_than_the_fetch_size_says_so():
    data = build_message_set([(None, b"x" * 100)])
    with pytest.raises(MessageSizeTooLargeError, match="larger than the fetch size of 50 bytes"):
        list(fetched(data[:50]))


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_fetch_into_a_wrapper_skips_earlier_inner_messages(codec):
    data = build_message_set([(b"k%d" % i, b"v%d" % i) for i in range(5)], codec, base_offset=10)
    part = fetched(data, 12)
    assert [(m.offset, m.key, m.value) for m in part] == [
        (12, b"k2", b"v2"),
        (13, b"k3", b"v3"),
        (14, b"k4", b"v4"),
    ]
    assert part.next_offset == 15  # wrapper offset (the last inner one) + 1


def test_empty_answer_keeps_the_offset():
    part = fetched(b"", 42)
    assert list(part) == []
    assert part.next_offset == 42


def test_error_code_raises_when_iterated():
    part = fetched(b"", 3, error=1)
    with pytest.raises(OffsetOutOfRangeError, match="fetch of t-0 at offset 3: OFFSET_OUT_OF_RANGE"):
        list(part)


@pytest.mark.parametrize("codec", [0, GZIP])
def test_next_offset_whichever_way_the_messages_were_read(codec):
    data = build_message_set([(None, b"v%d" % i) for i in range(6)], codec, base_offset=20)
    data += build_message_set([(None, b"tail")], base_offset=26)[:-3]  # cut short
    assert fetched(data, 20).next_offset == 26  # nothing read: from the entries
    part = fetched(data, 20)
    assert [m.offset for m in part.messages()] == list(range(20, 26))
    assert part.next_offset == 26
    part = fetched(data, 22)
    for message in part:
        if message.offset == 23:
            break  # a partial read says nothing about the end
    assert part.next_offset == 26
    part = fetched(data, 22)
    assert [m.offset for m in part] == [22, 23, 24, 25] and part.next_offset == 26


@given(
    st.lists(st.tuples(st.integers(0, 2**40), st.binary(max_size=20), st.booleans()), max_size=6),
    st.integers(0, 200),
    st.binary(max_size=16),
)
def test_the_native_extent_reads_lengths_as_the_entry_walker_does(entries_, cut, junk):
    """What a fetch asks for next before decoding (``next_offset``, ``valid_bytes``, ``has_batches``): the
    same on both paths, for messages, record batches (their last offset), a cut entry and garbage alike."""
    data = b"".join(_entry(offset, v, batch) for offset, v, batch in entries_)
    data = data[: max(0, len(data) - cut)] + junk
    last, valid = None, 0
    for offset, position, size in entries(data):
        last, valid = offset, position + size
    if native.built is not None:
        assert native.built.extent08(data) == (last, valid, has_batches(data))
    part = fetched(data, 7)
    assert part.valid_bytes == valid
    assert part.next_offset == (7 if last is None else max(last + 1, 7))
    assert part.has_batches == has_batches(data)


def _entry(offset: int, value: bytes, batch: bool) -> bytes:
    """A message at ``offset``, or a batch of ``value``'s bytes as records ending at ``offset``."""
    if not batch:
        return assign_offsets(build_message_set([(None, value)]), offset).data
    records = [Record(offset - len(value) + i, 0, None, bytes([b])) for i, b in enumerate(value or b"x")]
    return build_batch(records)
