"""decode_chunk08 and MessageAndMetadata08 without any broker: the 0.8 fetch-answer rules."""

from __future__ import annotations

import pytest
from gevent.queue import Queue
from hypothesis import given
from hypothesis import strategies as st

from tests.support.consumers08 import entry_each, log_bytes, offline_fetcher08
from zkafka.consumer.partition_state import FetchedChunk, PartitionTopicInfo
from zkafka.consumer.stream import FETCH_PIECE, KafkaStream
from zkafka.consumer.stream08 import MessageAndMetadata08, decode_chunk08
from zkafka.errors import InvalidMessageError
from zkafka.records import native
from zkafka.records.compression import GZIP, SNAPPY
from zkafka.records.format08 import iter_messages

# The codec's decoding runs on the native core and on the pure path.
pytestmark = pytest.mark.usefixtures("codec_path")


def decoded(data: bytes, fetch_offset: int, start: int = 0):
    items, error, resume, next_offset = decode_chunk08(data, fetch_offset, "t", 3, start)
    return [(i.offset, i.key, i.message) for i in items], error, resume, next_offset


def test_plain_messages_with_keys_and_nulls():
    data = log_bytes([(b"k1", b"v1"), (None, b"v2"), (b"k3", None), (b"", b"")], 40)
    items, error, resume, next_offset = decoded(data, 40)
    assert items == [(40, b"k1", b"v1"), (41, None, b"v2"), (42, b"k3", None), (43, b"", b"")]
    assert (error, resume, next_offset) == (None, None, 44)


def test_items_are_message_and_metadata():
    data = log_bytes([(b"k", b"v")], 7)
    items, _, _, _ = decode_chunk08(data, 7, "orders", 2)
    assert items == [MessageAndMetadata08(b"k", b"v", "orders", 2, 7)]
    (item,) = items
    assert (item.value, item.next_offset) == (b"v", 8)
    key, message, topic, partition, offset = item
    assert (key, message, topic, partition, offset) == (b"k", b"v", "orders", 2, 7)


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_a_fetch_inside_a_wrapper_skips_the_earlier_messages(codec):
    data = log_bytes([(None, b"a"), (b"k", b"b"), (None, b"c")], 100, codec) + log_bytes([(None, b"d")], 103)
    items, error, _, next_offset = decoded(data, 102)
    assert items == [(102, None, b"c"), (103, None, b"d")]
    assert (error, next_offset) == (None, 104)


def test_a_partial_trailing_entry_is_left_for_the_next_fetch():
    whole = log_bytes([(None, b"one"), (None, b"two")], 5)
    data = whole + log_bytes([(None, b"three")], 7)[:-3]
    items, error, resume, next_offset = decoded(data, 5)
    assert [i[2] for i in items] == [b"one", b"two"]
    assert (error, resume, next_offset) == (None, None, 7)
    # nothing whole at all: no items, and the offset does not move (the fetcher reports a too-large message)
    assert decoded(data[len(whole) :], 7) == ([], None, None, 7)


def test_a_corrupt_message_is_skipped_after_the_good_ones():
    first = log_bytes([(None, b"good")], 0)
    bad = bytearray(log_bytes([(None, b"bad")], 1))
    bad[-1] ^= 0xFF
    data = first + bytes(bad) + log_bytes([(None, b"after")], 2)
    items, error, resume, next_offset = decoded(data, 0)
    assert items == [(0, None, b"good")]
    assert isinstance(error, InvalidMessageError) and "t:3" in str(error)
    assert (resume, next_offset) == (len(first) + len(bad), 2)  # past the bad entry
    assert decoded(data, 0, resume) == ([(2, None, b"after")], None, None, 3)


def test_a_too_short_entry_cannot_be_skipped():
    first = log_bytes([(None, b"good")], 0)
    data = first + (9).to_bytes(8, "big") + (3).to_bytes(4, "big") + b"xyz"
    items, error, resume, next_offset = decoded(data, 0)
    assert items == [(0, None, b"good")]
    assert isinstance(error, InvalidMessageError)
    assert (resume, next_offset) == (None, 1)


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.binary(max_size=8)),
            st.one_of(st.none(), st.binary(max_size=30)),
            st.sampled_from([0, GZIP]),
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 14),
)
def test_same_messages_as_the_records_iterator(messages, skip):
    data = entry_each(messages, 1000)
    offset = 1000 + len(messages)
    start = 1000 + min(skip, len(messages) - 1)
    items, error, _, next_offset = decoded(data, start)
    assert error is None and next_offset == offset
    assert items == [(m.offset, m.key, m.value) for m in iter_messages(data, start)]


def test_a_stream_resumes_after_the_last_message_handed_out():
    queue: Queue = Queue()
    info = PartitionTopicInfo("t", 3, None, queue, "g_c-0", 10)
    items, _, _, _ = decode_chunk08(log_bytes([(None, b"a"), (None, b"b")], 10), 10, "t", 3)
    queue.put(FetchedChunk(info, items))
    stream = KafkaStream(queue)
    assert info.consumed_offset == 10
    assert next(stream).message == b"a"
    assert info.consumed_offset == 11  # the next offset to consume, as 0.8 commits it
    assert next(stream).message == b"b"
    assert info.consumed_offset == 12


def test_a_fetcher_queues_a_fetch_in_pieces_and_moves_its_offset_past_all_of_them():
    queue: Queue = Queue()
    info = PartitionTopicInfo("t", 3, None, queue, "g_c-0", 10)
    fetcher = offline_fetcher08()
    values = [b"%05d" % i for i in range(FETCH_PIECE + 5)]
    data = log_bytes([(None, v) for v in values], 10)
    assert fetcher._enqueue(info, memoryview(bytearray(data + data[:30]))) == len(values)
    assert info.fetch_offset == 10 + len(values)
    pieces = [FETCH_PIECE, 5] if native.lib is not None else [len(values)]
    assert [len(c.items) for c in list(queue.queue)] == pieces
    stream = KafkaStream(queue)
    assert [m.message for m in stream.next_batch()] == values[: pieces[0]]
    assert info.consumed_offset == 10 + pieces[0]
