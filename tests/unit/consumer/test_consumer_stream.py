"""KafkaStream and decode_chunk without any broker: the 0.7 iteration rules and the ownership rule."""

from __future__ import annotations

import struct

import gevent
import gevent.event
import pytest
from gevent.queue import Queue
from hypothesis import given, settings
from hypothesis import strategies as st

from zkafka.consumer.fetcher07 import Fetcher
from zkafka.consumer.partition_state import PartitionTopicInfo
from zkafka.consumer.stream import FETCH_PIECE, SHUTDOWN, ConsumerTimeoutError, FetchedChunk, KafkaStream
from zkafka.consumer.stream07 import MessageAndMetadata, decode_chunk
from zkafka.errors import InvalidMessageError, InvalidMessageSizeError, KafkaError, OffsetOutOfRangeError
from zkafka.records import native
from zkafka.records.compression import GZIP, SNAPPY
from zkafka.records.format07 import iter_messages
from zkafka.records.message07 import build_message_set, encode_message
from zkafka.zk.paths07 import Broker, BrokerPartition

# The codec's decoding, checks and offset assignment run on the native core and on the pure path.
pytestmark = pytest.mark.usefixtures("codec_path")

P = BrokerPartition(0, 1)


def entries(*payloads: bytes) -> bytes:
    return build_message_set(payloads)


def magic0_entry(payload: bytes) -> bytes:
    body = encode_message(payload, magic=0)
    return struct.pack(">i", len(body)) + body


def corrupt_crc(entry: bytes) -> bytes:
    return entry[:-1] + bytes([entry[-1] ^ 0xFF])


def reference(buf: bytes, initial: int, deep: bool):
    """What message.iter_messages yields, and the error it stops with."""
    out = []
    try:
        for m, o in iter_messages(buf, initial, deep):
            out.append((m, o))
    except KafkaError as e:
        return out, type(e)
    return out, None


def decoded(buf: bytes, initial: int, deep: bool):
    items, error, _, _ = decode_chunk(buf, initial, "t", P, deep)
    return [(i.message, i.offset) for i in items], (type(error) if error else None)


# -- decode_chunk against iter_messages -----------------------------------------------------------------------

piece = st.one_of(
    st.lists(st.binary(max_size=40), min_size=1, max_size=4).map(lambda ps: build_message_set(ps)),
    st.lists(st.binary(max_size=40), min_size=1, max_size=4).map(lambda ps: build_message_set(ps, GZIP)),
    st.lists(st.binary(max_size=40), min_size=1, max_size=3).map(lambda ps: build_message_set(ps, SNAPPY)),
    st.binary(max_size=30).map(magic0_entry),
    st.binary(min_size=1, max_size=30).map(lambda p: corrupt_crc(build_message_set([p]))),
    st.sampled_from([b"\x00\x00\x00\x03\x01\x00\x00", b"\xff\xff\xff\xf0", b"\x00\x00\x00\x07\x05abcdef"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(piece, max_size=6), st.integers(0, 200), st.integers(0, 1 << 40), st.booleans())
def test_decode_chunk_matches_iter_messages(pieces, cut, initial, deep):
    buf = b"".join(pieces)
    buf = buf[: max(0, len(buf) - cut)] if cut < 100 else buf
    assert decoded(buf, initial, deep) == reference(buf, initial, deep)


def test_decode_resumes_after_a_bad_entry():
    good, bad = entries(b"one"), corrupt_crc(entries(b"two"))
    buf = good + bad + entries(b"three")
    items, error, resume, end = decode_chunk(buf, 100, "t", P)
    assert [i.message.payload for i in items] == [b"one"] and isinstance(error, InvalidMessageError)
    assert resume == end == len(good) + len(bad)
    items, error, resume, end = decode_chunk(buf, 100, "t", P, start=resume)
    assert [(i.message.payload, i.offset) for i in items] == [(b"three", 100 + len(buf))]
    assert error is None and resume is None and end == len(buf)


def test_decode_first_entry_rules_and_how_far_it_got():
    _, error, resume, end = decode_chunk(entries(b"x" * 50)[:30], 0, "t", P)
    assert isinstance(error, InvalidMessageSizeError) and "fetch size" in str(error) and resume is None
    assert end == 0
    # a partial entry that is not the first is dropped silently, also when decoding resumes after an error
    buf = corrupt_crc(entries(b"a")) + entries(b"b" * 50)[:20]
    items, error, resume, end = decode_chunk(buf, 0, "t", P)
    assert isinstance(error, InvalidMessageError)
    assert decode_chunk(buf, 0, "t", P, start=resume) == ([], None, None, resume)
    # a negative length after good entries: they are decoded, and decoding stops at it
    buf = entries(b"a", b"bb") + b"\xff\xff\xff\xff" + entries(b"c")
    items, error, resume, end = decode_chunk(buf, 0, "t", P)
    assert len(items) == 2 and isinstance(error, InvalidMessageSizeError) and resume is None
    assert end == len(entries(b"a", b"bb"))


def test_message_and_metadata_is_its_message_and_unpacks_like_the_tuple():
    (item,), _, _, _ = decode_chunk(entries(b"hello"), 1000, "t", P)
    assert isinstance(item, MessageAndMetadata) and item.message is item
    message, topic, partition, offset = item
    assert (message.payload, topic, partition, offset) == (b"hello", "t", P, 1015)
    assert item == encode_message_object(b"hello")  # equal to the plain Message it holds
    (other,), _, _, _ = decode_chunk(entries(b"hello"), 0, "t", P)
    assert item != other and len({item, other}) == 2  # different offsets
    assert "offset=1015" in repr(item)
    assert MessageAndMetadata(encode_message_object(b"hello"), "t", P, 1015) == item


def encode_message_object(payload: bytes):
    from zkafka.records.message07 import Message

    return Message(payload)


# -- KafkaStream ----------------------------------------------------------------------------------------------


def info(queue: Queue, offset: int = 0) -> PartitionTopicInfo:
    return PartitionTopicInfo("t", P, Broker(0, "h", 1), queue, "g_c-0", offset)


def chunk(pti: PartitionTopicInfo, *payloads: bytes) -> FetchedChunk:
    buf = entries(*payloads)
    items, _, _, end = decode_chunk(buf, pti.fetch_offset, pti.topic, pti.partition)
    pti.fetch_offset += end
    return FetchedChunk(pti, items)


def fetcher(deep: bool = True) -> Fetcher:
    return Fetcher(
        fetch_size=1000,
        backoff_ms=10,
        deep=deep,
        socket_timeout_ms=1000,
        socket_buffersize=1024,
        autooffset_reset="smallest",
    )


def test_stream_hands_out_messages_and_tracks_the_consumed_offset():
    q = Queue(10)
    pti = info(q, 1000)
    q.put(chunk(pti, b"a", b"b"))
    q.put(chunk(pti, b"c"))
    stream = KafkaStream(q, consumer_timeout_ms=50)
    got = []
    with pytest.raises(ConsumerTimeoutError):
        for item in stream:
            got.append(item)
            assert pti.consumed_offset == item.offset
    assert [(m.message.payload, m.topic, m.partition, m.offset) for m in got] == [
        (b"a", "t", P, 1011),
        (b"b", "t", P, 1022),
        (b"c", "t", P, 1033),
    ]


def test_stream_drops_every_chunk_of_a_revoked_partition_even_mid_chunk():
    q = Queue(10)
    old, new = info(q), info(q, 5000)
    q.put(chunk(old, b"1", b"2", b"3"))
    q.put(chunk(old, b"4"))
    q.put(chunk(new, b"fresh"))
    stream = KafkaStream(q, consumer_timeout_ms=50)
    assert next(stream).message.payload == b"1"
    old.revoke()
    assert next(stream).message.payload == b"fresh"
    assert old.consumed_offset == 11  # nothing of the revoked partition was handed out after "1"


def test_stream_waits_while_paused_and_continues_when_resumed():
    q = Queue(10)
    pti = info(q)
    q.put(chunk(pti, b"1", b"2"))
    resumed = gevent.event.Event()
    resumed.set()
    stream = KafkaStream(q, consumer_timeout_ms=2000, resumed=resumed)
    assert next(stream).message.payload == b"1"
    pti.active = False
    resumed.clear()

    calls = []

    def resume():
        calls.append("resumed")
        pti.active = True
        resumed.set()

    gevent.spawn_later(0.1, resume)
    assert next(stream).message.payload == b"2"
    calls.append("handed out")
    # the order, not a wall-clock bound: gevent's timers count from the loop's cached time, so under load
    # the 0.1 s can look shorter on time.monotonic()
    assert calls == ["resumed", "handed out"]


def test_paused_past_the_consumer_timeout_raises_timeout():
    q = Queue(10)
    pti = info(q)
    q.put(chunk(pti, b"1"))
    resumed = gevent.event.Event()
    stream = KafkaStream(q, consumer_timeout_ms=100, resumed=resumed)
    pti.active = False
    with pytest.raises(ConsumerTimeoutError):
        next(stream)
    pti.active = True
    resumed.set()
    assert next(stream).message.payload == b"1"


def test_a_bad_message_is_raised_once_then_iteration_goes_on_past_it():
    q = Queue(10)
    pti = info(q)
    buf = entries(b"ok") + corrupt_crc(entries(b"bad")) + entries(b"after") + entries(b"partial")[:-2]
    assert fetcher()._enqueue(pti, memoryview(buf)) == len(buf) - len(entries(b"partial")) + 2
    assert pti.fetch_offset == len(buf) - len(entries(b"partial")) + 2
    stream = KafkaStream(q, consumer_timeout_ms=50)
    assert next(stream).message.payload == b"ok"
    with pytest.raises(InvalidMessageError):
        next(stream)
    assert pti.consumed_offset == len(entries(b"ok")) + len(entries(b"bad"))
    assert next(stream).message.payload == b"after"
    with pytest.raises(ConsumerTimeoutError):
        next(stream)


def test_a_first_message_larger_than_the_fetch_size_stops_that_partition():
    q = Queue(10)
    pti = info(q)
    assert fetcher()._enqueue(pti, entries(b"x" * 2000)[:1000]) == 0
    assert not pti.fetching and pti.fetch_offset == 0
    with pytest.raises(InvalidMessageSizeError, match="fetch.size=1000"):
        next(KafkaStream(q, consumer_timeout_ms=50))


def test_fetcher_errors_surface_in_the_iterator_and_shutdown_ends_it():
    q = Queue(10)
    pti = info(q)
    q.put(FetchedChunk(pti, error=OffsetOutOfRangeError("gone")))
    q.put(chunk(pti, b"x"))
    q.put(SHUTDOWN)
    stream = KafkaStream(q)
    with pytest.raises(OffsetOutOfRangeError):
        next(stream)
    assert [m.message.payload for m in stream] == [b"x"]
    with pytest.raises(StopIteration):
        next(stream)


def test_shallow_fetcher_yields_wrappers():
    q = Queue(10)
    buf = build_message_set([b"a", b"b"], GZIP)
    fetcher(deep=False)._enqueue(info(q), buf)
    q.put(SHUTDOWN)
    items = list(KafkaStream(q))
    assert len(items) == 1 and items[0].message.codec == GZIP and items[0].offset == len(buf)
    fetcher(deep=True)._enqueue(info(q), buf)
    q.put(SHUTDOWN)
    assert [(m.message.payload, m.offset) for m in KafkaStream(q)] == [(b"a", 0), (b"b", len(buf))]


def test_clear_drops_queued_chunks():
    q = Queue(10)
    pti = info(q)
    q.put(chunk(pti, b"a"))
    stream = KafkaStream(q, consumer_timeout_ms=20)
    stream.clear()
    with pytest.raises(ConsumerTimeoutError):
        next(stream)


# -- batches ------------------------------------------------------------------------------------------------


def test_next_batch_hands_out_the_rest_of_a_chunk_and_moves_the_consumed_offset_past_it():
    q = Queue(10)
    pti = info(q, 1000)
    q.put(chunk(pti, b"a", b"b", b"c", b"d"))
    q.put(chunk(pti, b"e"))
    stream = KafkaStream(q, consumer_timeout_ms=50)
    assert next(stream).payload == b"a"
    assert [m.payload for m in stream.next_batch(2)] == [b"b", b"c"]
    assert pti.consumed_offset == 1033
    batch = stream.next_batch()
    assert [m.payload for m in batch] == [b"d"] and pti.consumed_offset == 1044
    batch.clear()  # the caller's own list: emptying it changes nothing the stream knows
    assert pti.consumed_offset == 1044
    assert [(m.payload, m.offset) for m in stream.next_batch()] == [(b"e", 1055)]
    assert pti.consumed_offset == 1055
    with pytest.raises(ConsumerTimeoutError):
        stream.next_batch()
    assert pti.consumed_offset == 1055  # the used-up chunk, dropped, leaves the offset past its last message
    with pytest.raises(ValueError, match="at least 1"):
        stream.next_batch(0)


def test_next_batch_never_holds_a_revoked_partition_and_raises_a_chunks_error_after_its_messages():
    q = Queue(10)
    old, new = info(q), info(q, 5000)
    q.put(chunk(old, b"1", b"2", b"3"))
    q.put(chunk(new, b"fresh"))
    stream = KafkaStream(q, consumer_timeout_ms=50)
    assert [m.payload for m in stream.next_batch(1)] == [b"1"]
    old.revoke()
    assert [m.payload for m in stream.next_batch()] == [b"fresh"]
    assert old.consumed_offset == 11
    pti = info(q)
    buf = entries(b"ok", b"ok2") + corrupt_crc(entries(b"bad")) + entries(b"after")
    fetcher()._enqueue(pti, memoryview(buf))
    assert [m.payload for m in stream.next_batch()] == [b"ok", b"ok2"]
    with pytest.raises(InvalidMessageError):
        stream.next_batch()
    assert pti.consumed_offset == len(entries(b"ok", b"ok2")) + len(entries(b"bad"))
    assert [m.payload for m in stream.next_batch()] == [b"after"]


def test_batches_end_with_the_stream_and_a_timeout_ends_only_the_iterator():
    q = Queue(10)
    pti = info(q)
    q.put(chunk(pti, b"a", b"b"))
    stream = KafkaStream(q, consumer_timeout_ms=50)
    batches = stream.batches()
    assert [m.payload for m in next(batches)] == [b"a", b"b"]
    with pytest.raises(ConsumerTimeoutError):
        next(batches)
    q.put(chunk(pti, b"c", b"d", b"e"))
    q.put(SHUTDOWN)
    assert [[m.payload for m in batch] for batch in stream.batches(2)] == [[b"c", b"d"], [b"e"]]


def test_a_fetch_is_queued_in_pieces_that_together_are_the_whole_fetch():
    q = Queue(100)
    pti = info(q, 7)
    payloads = [b"%05d" % i for i in range(FETCH_PIECE * 2 + 10)]
    buf = entries(*payloads)
    assert fetcher()._enqueue(pti, memoryview(buf + entries(b"partial")[:-1])) == len(buf)
    assert pti.fetch_offset == 7 + len(buf)
    # the native path queues FETCH_PIECE messages at a time, the pure path the whole fetch
    pieces = [FETCH_PIECE, FETCH_PIECE, 10] if native.lib is not None else [len(payloads)]
    assert [len(c.items) for c in list(q.queue)] == pieces
    q.put(SHUTDOWN)
    got = [m for batch in KafkaStream(q).batches() for m in batch]
    assert [m.payload for m in got] == payloads and got[-1].offset == 7 + len(buf)
