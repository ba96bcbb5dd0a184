"""MessageBatch08 and decode_batch08 without any broker: the column batch the 0.8 streams hand out, and the
stream's guarantees (ownership, consumed offsets, errors, consumer.timeout.ms) when its chunks are batches."""

from __future__ import annotations

from array import array

import pytest
from gevent.queue import Queue
from hypothesis import given
from hypothesis import strategies as st

from tests.support.consumers08 import entry_each, log_bytes, offline_fetcher08
from zkafka.consumer.partition_state import FetchedChunk, PartitionTopicInfo
from zkafka.consumer.stream import FETCH_PIECE, SHUTDOWN, ConsumerTimeoutError, KafkaStream
from zkafka.consumer.stream08 import MessageAndMetadata08, MessageBatch08, decode_batch08, decode_chunk08
from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError
from zkafka.records import native
from zkafka.records.compression import GZIP, LZ4, SNAPPY, ZSTD
from zkafka.records.default_record import Header, Record
from zkafka.records.record_batch import build_batch

# The codec's decoding runs on the native core and on the pure path.
pytestmark = pytest.mark.usefixtures("codec_path")


def values_set(values, base: int) -> bytes:
    return log_bytes([(None, v) for v in values], base)


def all_batches(data, fetch_offset: int, most: int = -1):
    """decode_batch08 from the start until it has nothing more to read, as the fetcher calls it: the batches,
    then the last call's error and resume and the furthest next_offset of them all."""
    batches, start, furthest = [], 0, fetch_offset
    while True:
        batch, error, resume, next_offset = decode_batch08(data, fetch_offset, "t", 3, start, 1 << 20, most)
        batches.append(batch)
        furthest = max(furthest, next_offset)
        if resume is None or error is not None:
            return batches, (error, resume, furthest)
        start = resume


# -- the batch --------------------------------------------------------------------------------------------


def test_a_batch_reads_as_columns_and_as_messages():
    data = log_bytes([(b"k1", b"v1"), (None, b"v2"), (b"k3", None), (b"", b"")], 40)
    batch, error, resume, next_offset = decode_batch08(memoryview(bytearray(data)), 40, "orders", 2)
    assert (error, resume, next_offset) == (None, None, 44)
    assert (batch.topic, batch.partition) == ("orders", 2)
    assert batch.keys == [b"k1", None, b"k3", b""]
    assert batch.values == [b"v1", b"v2", None, b""]
    assert list(batch.offsets) == [40, 41, 42, 43] and batch.next_offset == 44
    assert list(batch) == [
        MessageAndMetadata08(b"k1", b"v1", "orders", 2, 40),
        MessageAndMetadata08(None, b"v2", "orders", 2, 41),
        MessageAndMetadata08(b"k3", None, "orders", 2, 42),
        MessageAndMetadata08(b"", b"", "orders", 2, 43),
    ]
    assert all(type(m) is MessageAndMetadata08 for m in batch)
    assert (len(batch), batch[1].value, batch[-1].offset, batch[-1].next_offset) == (4, b"v2", 43, 44)
    assert repr(batch) == "MessageBatch08(orders:2, 4 messages, offsets 40..43)"


def test_record_batches_read_as_one_batch_of_columns_from_the_fetch_offset():
    """A Fetch v4+ answer of a v2 log: whole record batches, one compacted (gaps, its last offset past its
    last record), one with headers (read past), a control batch (no messages), a cut one at the end. The
    native core reads the plain batches in one call; both paths give the same messages and next offset."""
    first = build_batch([Record(10 + i, 1000 + i, None if i % 2 else b"k", b"v%d" % i) for i in range(4)])
    compacted = build_batch([Record(14, 5, b"a", None), Record(17, 6, None, b"b")], last_offset=19)
    with_headers = build_batch([Record(20, 7, b"h", b"c", (Header("x", b"1"), Header("y", None)))])
    marker = build_batch([Record(21, 8, b"\x00\x00\x00\x00", b"")], control=True)
    data = first + compacted + with_headers + marker + first[:40]
    batches, (error, resume, next_offset) = all_batches(memoryview(bytearray(data)), 12)
    got = [(m.key, m.value, m.offset) for batch in batches for m in batch]
    assert got == [(b"k", b"v2", 12), (None, b"v3", 13), (b"a", None, 14), (None, b"b", 17), (b"h", b"c", 20)]
    assert (error, resume, next_offset) == (None, None, 22)  # past the control batch, before the cut one
    if native.lib is not None:  # every plain batch in the first call, read from the frame in place
        assert list(batches[0].offsets) == [12, 13, 14, 17, 20]
        assert batches[0].values == [b"v2", b"v3", None, b"b", b"c"]


def test_a_compressed_or_damaged_record_batch_reads_as_on_the_pure_path():
    plain = build_batch([Record(0, 1, None, b"a"), Record(1, 1, None, b"b")])
    packed = build_batch([Record(2, 1, None, b"c"), Record(3, 1, b"k", b"d")], compression=GZIP)
    damaged = bytearray(build_batch([Record(4, 1, None, b"e")]))
    damaged[-1] ^= 0xFF  # the CRC-32C no longer matches
    batches, (error, resume, next_offset) = all_batches(plain + packed + bytes(damaged) + plain, 0)
    assert [(m.value, m.offset) for b in batches for m in b] == [(b"a", 0), (b"b", 1), (b"c", 2), (b"d", 3)]
    assert isinstance(error, InvalidMessageError) and "CRC-32C" in str(error)
    assert (resume, next_offset) == (len(plain + packed + damaged), 5)  # the next fetch goes on past it
    if native.lib is not None:  # the compressed batch inflated and read in the same call as the plain one
        assert batches[0].values == [b"a", b"b", b"c", b"d"] and batches[0].keys == [None, None, None, b"k"]


@pytest.mark.parametrize("codec_id", [GZIP, SNAPPY, LZ4, ZSTD])
def test_a_compressed_record_batch_inflating_past_the_limit_is_refused_before_it_is_all_inflated(codec_id):
    packed = build_batch([Record(i, 1, None, b"x" * 1000) for i in range(50)], compression=codec_id)
    batch, error, resume, next_offset = decode_batch08(packed + packed, 0, "t", 3, 0, 10_000)
    assert (len(batch), type(error), resume, next_offset) == (0, MessageSizeTooLargeError, len(packed), 50)
    batch = decode_batch08(packed, 0, "t", 3, 0, 60_000)[0]
    assert (len(batch), batch.values[-1], list(batch.offsets)[-1]) == (50, b"x" * 1000, 49)


def test_a_slice_is_a_batch_of_those_messages():
    batch = decode_batch08(values_set([b"a", b"b", b"c", b"d"], 7), 7, "t", 3)[0]
    part = batch[1:3]
    assert isinstance(part, MessageBatch08) and (part.topic, part.partition) == ("t", 3)
    assert (part.values, list(part.offsets), part.next_offset) == ([b"b", b"c"], [8, 9], 10)
    assert [m.offset for m in part] == [8, 9]
    assert [m.value for m in batch[-1:]] == [b"d"] and len(batch[4:]) == 0
    with pytest.raises(IndexError):
        batch[4]


def test_its_iterator_tells_what_is_left_and_goes_on_from_an_index_as_a_lists_does():
    batch = decode_batch08(values_set([b"a", b"b", b"c", b"d"], 0), 0, "t", 3)[0]
    it = iter(batch)
    assert next(it).value == b"a" and it.__length_hint__() == 3
    it.__setstate__(3)
    assert [m.value for m in it] == [b"d"] and it.__length_hint__() == 0
    it.__setstate__(99)  # clamped to the end, as a list iterator clamps
    assert list(it) == []


def test_offsets_are_a_range_when_they_run_on_and_an_array_when_they_do_not():
    # a compacted log: offsets with gaps
    data = values_set([b"a"], 5) + values_set([b"b"], 7) + values_set([b"c", b"d"], 8)
    (batch,), (error, resume, next_offset) = all_batches(memoryview(bytearray(data)), 5)
    assert (error, resume, next_offset) == (None, None, 10)
    assert list(batch.offsets) == [5, 7, 8, 9] and batch.next_offset == 10
    assert [(m.value, m.offset) for m in batch] == [(b"a", 5), (b"b", 7), (b"c", 8), (b"d", 9)]
    assert [m.offset for m in batch[1:]] == [7, 8, 9]
    if native.lib is not None:
        assert type(batch.offsets) is array
        contiguous = decode_batch08(values_set([b"a", b"b"], 5), 5, "t", 3)[0]
        assert contiguous.offsets == range(5, 7)


def test_a_batch_made_of_messages_or_of_columns_reads_the_same():
    items = [MessageAndMetadata08(b"k", b"v", "t", 3, 9), MessageAndMetadata08(None, None, "t", 3, 11)]
    rows = MessageBatch08.of("t", 3, items)
    columns = MessageBatch08("t", 3, [b"k", None], [b"v", None], array("q", [9, 11]))
    for batch in (rows, columns):
        assert list(batch) == items and batch[1] == items[1] and list(batch[1:]) == items[1:]
        assert (batch.keys, batch.values, list(batch.offsets), batch.next_offset) == (
            [b"k", None],
            [b"v", None],
            [9, 11],
            12,
        )
    with pytest.raises(ValueError, match="as many of each"):
        MessageBatch08("t", 3, [None], [b"v", b"w"], range(2))


def test_without_the_extension_a_column_batch_still_iterates(monkeypatch):
    monkeypatch.setattr(native, "built", None)
    batch = MessageBatch08("t", 3, [None, b"k"], [b"a", b"b"], range(4, 6))
    it = iter(batch)
    assert [(m.key, m.value, m.offset) for m in it] == [(None, b"a", 4), (b"k", b"b", 5)]
    assert it.__length_hint__() == 0


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.binary(max_size=8)),
            st.one_of(st.none(), st.binary(max_size=30)),
            st.sampled_from([0, 0, GZIP]),
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 14),
    st.sampled_from([-1, 1, 3]),
)
def test_the_batches_hold_what_decode_chunk08_decodes(messages, skip, most):
    data = entry_each(messages, 1000)
    start = 1000 + min(skip, len(messages) - 1)
    expected, error, _, next_offset = decode_chunk08(data, start, "t", 3)
    assert error is None
    for buf in (data, memoryview(bytearray(data))):
        batches, (error, resume, last_next) = all_batches(buf, start, most)
        got = [m for batch in batches for m in batch]
        assert got == expected and (error, resume, last_next) == (None, None, next_offset)
        columns = [(k, v, o) for b in batches for k, v, o in zip(b.keys, b.values, b.offsets, strict=True)]
        assert columns == [(m.key, m.value, m.offset) for m in expected]


def test_a_corrupt_message_ends_the_batch_and_is_skipped_as_decode_chunk08_skips_it():
    first = values_set([b"good"], 0)
    bad = bytearray(values_set([b"bad"], 1))
    bad[-1] ^= 0xFF
    data = memoryview(bytearray(first + bytes(bad) + values_set([b"after"], 2)))
    batches, (error, resume, next_offset) = all_batches(data, 0)
    assert [m.value for b in batches for m in b] == [b"good"]
    assert isinstance(error, InvalidMessageError) and "t:3" in str(error)
    assert (resume, next_offset) == (len(first) + len(bad), 2)
    batch, error, resume, next_offset = decode_batch08(data, 0, "t", 3, resume)
    assert [m.value for m in batch] == [b"after"] and (error, resume, next_offset) == (None, None, 3)


# -- the stream's guarantees, chunk by chunk of batches -----------------------------------------------------


def queued_fetch(values, base: int = 10, tail: bytes = b""):
    queue: Queue = Queue()
    info = PartitionTopicInfo("t", 3, None, queue, "g_c-0", base)
    offline_fetcher08()._enqueue(info, memoryview(bytearray(values_set(values, base) + tail)))
    return queue, info


def test_next_batch_on_the_0_8_line_is_a_message_batch_and_moves_the_consumed_offset_past_it():
    values = [b"%05d" % i for i in range(FETCH_PIECE + 5)]
    queue, info = queued_fetch(values)
    stream = KafkaStream(queue, consumer_timeout_ms=30)
    assert next(stream).message == values[0] and info.consumed_offset == 11
    batch = stream.next_batch(3)
    assert isinstance(batch, MessageBatch08) and batch.values == values[1:4]
    assert info.consumed_offset == 14 == batch.next_offset
    rest = []
    with pytest.raises(ConsumerTimeoutError):  # after consumer.timeout.ms with nothing more
        for b in stream.batches():
            rest += b
    assert [m.value for m in rest] == values[4:] and rest[-1].offset == 10 + len(values) - 1
    assert info.consumed_offset == 10 + len(values)
    with pytest.raises(ConsumerTimeoutError):
        next(stream)


def test_a_message_at_a_time_from_batches_resumes_after_the_last_one_handed_out():
    values = [b"a", b"b", b"c"]
    queue, info = queued_fetch(values)
    queue.put(SHUTDOWN)
    stream = KafkaStream(queue)
    got = []
    for m in stream:
        got.append(m)
        assert info.consumed_offset == m.next_offset
    assert [(m.value, m.topic, m.partition, m.offset) for m in got] == [
        (b"a", "t", 3, 10),
        (b"b", "t", 3, 11),
        (b"c", "t", 3, 12),
    ]


def test_a_batch_of_a_revoked_partition_is_never_handed_out_not_even_its_rest():
    values = [b"%05d" % i for i in range(FETCH_PIECE + 5)]
    queue, old = queued_fetch(values)
    fresh = PartitionTopicInfo("t", 4, None, queue, "g_c-0", 0)
    batch = decode_batch08(values_set([b"fresh"], 0), 0, "t", 4)[0]
    queue.put(FetchedChunk(fresh, batch))
    stream = KafkaStream(queue, consumer_timeout_ms=30)
    assert [m.value for m in stream.next_batch(2)] == values[:2]
    old.revoke()
    assert [(m.value, m.partition) for m in stream.next_batch()] == [(b"fresh", 4)]
    assert old.consumed_offset == 12  # what was handed out, and no more
    with pytest.raises(ConsumerTimeoutError):
        stream.next_batch()


def test_a_chunks_error_comes_after_its_batch_and_the_offset_moves_past_the_bad_entry():
    good = values_set([b"ok", b"ok2"], 10)
    bad = bytearray(values_set([b"bad"], 12))
    bad[-1] ^= 0xFF
    queue: Queue = Queue()
    info = PartitionTopicInfo("t", 3, None, queue, "g_c-0", 10)
    offline_fetcher08()._enqueue(info, memoryview(bytearray(good + bytes(bad) + values_set([b"after"], 13))))
    stream = KafkaStream(queue, consumer_timeout_ms=30)
    assert stream.next_batch().values == [b"ok", b"ok2"]
    with pytest.raises(InvalidMessageError):
        stream.next_batch()
    assert info.consumed_offset == 13
    assert [(m.value, m.offset) for m in stream.next_batch()] == [(b"after", 13)]
    assert info.fetch_offset == info.consumed_offset == 14
