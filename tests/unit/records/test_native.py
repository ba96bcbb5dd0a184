"""The native codec core against the pure-Python codec: the same bytes, objects, errors and positions.

Every other records test runs on both paths (conftest.py); these compare the two directly, on sets built
from random pieces and then damaged at random (flipped bytes, cuts, spliced garbage). Without the native core
(ZKAFKA_NO_EXTENSIONS=1) they run on the pure path alone and check what holds on either: a damaged set ends
in a value or the codec's own error, a frame read in pieces reads as at once, built sets read back.
"""

import os
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.codec import PATHS, agreed, codec, outcome
from zkafka.consumer.group.fetcher import _RECORD, _converter, _from_record
from zkafka.consumer.group.subscription import ConsumerRecord
from zkafka.consumer.simple08 import FetchedPartition
from zkafka.consumer.stream07 import decode_chunk
from zkafka.consumer.stream08 import MessageBatch08, decode_batch08, decode_chunk08
from zkafka.errors import KafkaError
from zkafka.records import format07, format08, native, record_batch
from zkafka.records.compression import GZIP, LZ4, NO_COMPRESSION, SNAPPY, ZSTD
from zkafka.records.default_record import Header, Record
from zkafka.records.entries import valid_prefix
from zkafka.records.format07 import FORMAT07
from zkafka.records.format08 import FORMAT08
from zkafka.records.message07 import Message, build_message_set, encode_entries
from zkafka.records.record_batch import _framed, build_batch
from zkafka.zk.paths07 import BrokerPartition

P = BrokerPartition(0, 0)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True, scope="module")
def _both_codec_paths():
    """This module switches between the paths itself (overrides the directory's fixture)."""


def test_the_native_core_is_built_and_in_use_unless_disabled():
    if os.environ.get("ZKAFKA_NO_EXTENSIONS", "") not in ("", "0"):
        assert native.built is None and native.lib is None  # the pure path, as on a machine without a compiler
        return
    assert native.built is not None, "the test install must build zkafka.records._native"
    assert native.lib is native.built


def test_use_switches_paths_and_refuses_what_is_not_built(monkeypatch):
    with codec(False):
        assert native.lib is None
    monkeypatch.setattr(native, "built", None)
    with pytest.raises(ValueError, match="not built"):
        native.use(True)


# -- random sets, damaged ---------------------------------------------------------------------------------

payloads = st.lists(st.binary(max_size=40), max_size=6)
codecs = st.sampled_from([NO_COMPRESSION, NO_COMPRESSION, GZIP, SNAPPY])
codecs08 = st.sampled_from([NO_COMPRESSION, NO_COMPRESSION, GZIP, SNAPPY, LZ4])  # lz4 is 0.8.2's


@st.composite
def set07(draw):
    parts = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["plain", "plain", "magic0", "wrapper", "odd"]))
        if kind == "odd":
            parts.append(odd_entry07(draw))
        elif kind == "magic0":
            parts.append(Message(draw(st.binary(max_size=20)), magic=0).to_entry())
        else:
            parts.append(build_message_set(draw(payloads), draw(codecs) if kind == "wrapper" else 0))
    return damage(draw, b"".join(parts))


@st.composite
def set08(draw):
    parts = []
    offset = draw(st.integers(0, 50))
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 5))
        if kind == 0:
            parts.append(odd_entry08(draw, offset))
            offset += 1
            continue
        if kind == 1:  # a record batch (Fetch v4+ answers hold them beside message sets)
            batch, offset = record_batch08(draw, offset)
            parts.append(batch)
            continue
        pairs = draw(
            st.lists(
                st.tuples(st.none() | st.binary(max_size=8), st.none() | st.binary(max_size=30)), max_size=5
            )
        )
        parts.append(format08.build_message_set(pairs, draw(codecs08), offset))
        offset += len(pairs)
    return damage(draw, b"".join(parts))


def record_batch08(draw, offset: int) -> tuple[bytes, int]:
    """A record batch from ``offset`` (gaps as compaction leaves, headers, nulls, a codec, a control batch at
    times), or one with a good CRC-32C over any records bytes and count; and the offset after it."""
    if draw(st.integers(0, 4)) == 0:
        records = draw(st.binary(max_size=40))
        count, last_delta = draw(st.integers(-1, 4)), draw(st.integers(-1, 4))
        fields = (draw(st.sampled_from([0, 0, 0x20, 1])), last_delta, 0, 0, -1, -1)
        data = _framed(offset, -1, fields, -1, count, records)
        return data, offset + max(last_delta, 0) + 1
    gaps = draw(st.lists(st.integers(1, 3), min_size=1, max_size=5))
    headers = st.lists(st.tuples(st.text(max_size=3), st.none() | st.binary(max_size=4)), max_size=2)
    records, at = [], offset
    for gap in gaps:
        key, value = draw(st.none() | st.binary(max_size=8)), draw(st.none() | st.binary(max_size=30))
        records.append(Record(at, 1000 + at, key, value, tuple(Header(*h) for h in draw(headers))))
        at += gap
    compression = draw(st.sampled_from([NO_COMPRESSION, NO_COMPRESSION, GZIP, SNAPPY, LZ4, ZSTD]))
    return build_batch(records, compression=compression, control=draw(st.integers(0, 7)) == 0), at


def odd_entry08(draw, offset: int) -> bytes:
    """An entry with a good CRC over odd contents: any magic, attributes, key and value length fields."""
    lengths = st.integers(-3, 12) | st.integers(-(2**31), 2**31 - 1)
    body = (
        bytes([draw(st.sampled_from([0, 0, 1])), draw(st.sampled_from([0, 0, 8, 1, 2, 3]))])
        + draw(lengths).to_bytes(4, "big", signed=True)
        + draw(st.binary(max_size=10))
        + draw(lengths).to_bytes(4, "big", signed=True)
        + draw(st.binary(max_size=10))
    )
    message = zlib.crc32(body).to_bytes(4, "big") + body
    return offset.to_bytes(8, "big") + len(message).to_bytes(4, "big") + message


def odd_entry07(draw) -> bytes:
    """An entry with a good CRC and any magic and attributes."""
    payload = draw(st.binary(max_size=12))
    head = bytes([draw(st.sampled_from([0, 1, 1, 2])), draw(st.sampled_from([0, 4, 1, 2, 3]))])
    message = head + zlib.crc32(payload).to_bytes(4, "big") + payload
    return len(message).to_bytes(4, "big") + message


def damage(draw, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(draw(st.integers(0, 2))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "cut", "splice", "size"]))
        if action == "flip":
            data[at] ^= draw(st.integers(1, 255))
        elif action == "cut":
            del data[at:]
        elif action == "splice":
            data[at:at] = draw(st.binary(min_size=1, max_size=12))
        else:
            data[at : at + 4] = draw(st.integers(-(2**31), 2**31 - 1)).to_bytes(4, "big", signed=True)
    return bytes(data)


def drained(iterator_call):
    """Everything an iterator yields before it ends or fails, with how it failed."""

    def call():
        items = []
        try:
            for item in iterator_call():
                items.append((type(item).__name__, item, getattr(item, "message", None)))
        except Exception as err:  # noqa: BLE001 - compared across paths
            return items, (type(err), str(err), getattr(err, "position", None), getattr(err, "resume", None))
        return items, None

    return call


def same(call):
    """The call's outcome, the same on both paths: a value, or the codec's own error naming the damage (a
    KafkaError), never a stray one of Python's."""
    kind, found = agreed(call)
    assert kind == "value" or issubclass(found[0], KafkaError), found
    return kind, found


@SETTINGS
@given(set07(), st.sampled_from([None, 0, 10, 30, 1000]), st.integers(0, 10**6), st.booleans())
def test_0_7_paths_agree(data, max_size, initial, deep):
    same(lambda: FORMAT07.validate(data, max_size))
    same(lambda: valid_prefix(data, FORMAT07))
    same(drained(lambda: format07.iter_messages(data, initial, deep)))
    same(lambda: [(type(m).__name__, m) for m in decode_chunk(data, initial, "t", P, deep)[0]])
    same(lambda: _describe(decode_chunk(data, initial, "t", P, deep)))
    same(lambda: _describe(decode_chunk(data, initial, "t", P, deep, start=min(len(data), initial % 50))))


def _extent(fetched: FetchedPartition) -> tuple[int, int]:
    return fetched.valid_bytes, fetched.next_offset


def _describe(result):
    items, error, resume, end = result
    return (
        [(type(item), tuple(item) if isinstance(item, tuple) else item) for item in items],
        None if error is None else (type(error), str(error)),
        resume,
        end,
    )


@SETTINGS
@given(set08(), st.sampled_from([None, 20, 60, 1000]), st.integers(0, 60), st.booleans())
def test_0_8_paths_agree(data, max_size, start_offset, deep):
    same(lambda: FORMAT08.validate(data, max_size))
    same(lambda: valid_prefix(data, FORMAT08))
    same(drained(lambda: format08.iter_messages(data, start_offset, deep)))
    same(lambda: format08.assign_offsets(data, 1000 + start_offset, max_size))
    same(lambda: _describe(decode_chunk08(data, start_offset, "t", 3)))
    same(lambda: _describe(decode_chunk08(data, start_offset, "t", 3, start=min(len(data), start_offset))))
    # what the broker's fetch and the consumer's fetch ahead read from the lengths and offsets alone
    same(lambda: format08.find_offset(data, start_offset))
    same(lambda: format08.find_offset(data, 2 * start_offset, min(len(data), start_offset), len(data) - 3))
    same(lambda: _extent(FetchedPartition("t", 3, start_offset, 0, 100, memoryview(data))))
    for path in PATHS:  # the 0.9 consumer's records: messages() made once each, on either path
        with codec(path == "native"):
            assert outcome(lambda: _records(data, start_offset)) == outcome(
                lambda: _via_messages(data, start_offset)
            )


def _records(data: bytes, fetch_offset: int):
    fetched = FetchedPartition("t", 3, fetch_offset, 0, 100, memoryview(data), 1000)
    records = fetched.records(_RECORD, _converter("t", 3), ("t", 3, -1, ()), 2, _from_record("t", 3))
    return records, fetched.next_offset


def _via_messages(data: bytes, fetch_offset: int):
    fetched = FetchedPartition("t", 3, fetch_offset, 0, 100, memoryview(data), 1000)
    records = [
        ConsumerRecord("t", 3, m.offset, m.key, m.value, m.timestamp, m.timestamp_type, m.headers)
        for m in fetched.messages()
    ]
    return records, fetched.next_offset


@SETTINGS
@given(st.lists(st.binary(max_size=300), max_size=20), codecs, st.integers(0, 2**40))
def test_built_sets_are_the_same_bytes(values, codec_id, base):
    _, built = same(lambda: build_message_set(values, codec_id))
    assert same(lambda: build_message_set(iter(values), codec_id)) == ("value", built)
    assert [m.message.payload for m in format07.iter_messages(built, 0, True)] == values
    pairs = [(v[:3] or None, v if len(v) % 5 else None) for v in values]
    _, built = same(lambda: format08.build_message_set(pairs, codec_id, base))
    assert same(lambda: format08.build_message_set(iter(pairs), codec_id, base)) == ("value", built)
    assert _read08(built, base) == [(base + i, k, v) for i, (k, v) in enumerate(pairs)]
    for key in (None, values[0] if values else b"k"):
        _, built = same(lambda key=key: format08.build_value_set(values, key, codec_id, base))
        assert _read08(built, base) == [(base + i, key, v) for i, v in enumerate(values)]


def _read08(data: bytes, base: int) -> list:
    return [(m.offset, m.key, m.value) for m in format08.iter_messages(data, base, True)]


def test_sets_of_other_things_than_bytes_behave_as_on_the_pure_path():
    """Bytes-like values are built as their bytes; anything else is the pure path's TypeError (ValueError for
    a pair that is not one), on the native core too."""
    message = Message(b"wrapped already")
    built = [
        (lambda: encode_entries([b"a", message, bytearray(b"b"), memoryview(b"c")]),
         encode_entries([b"a", message, b"b", b"c"])),
        (lambda: format08.build_message_set([[b"k", b"v"], (None, bytearray(b"w"))]),
         format08.build_message_set([(b"k", b"v"), (None, b"w")])),
        (lambda: format08.build_value_set([b"v", bytearray(b"w"), None, memoryview(b"x")], bytearray(b"k")),
         format08.build_value_set([b"v", b"w", None, b"x"], b"k")),
    ]  # fmt: skip
    for call, expected in built:
        assert agreed(call) == ("value", expected)
    refused = [
        (lambda: encode_entries([b"a", "text"]), TypeError),
        (lambda: encode_entries([b"a", 5]), TypeError),
        (lambda: format08.build_message_set([(b"k", "text")]), TypeError),
        (lambda: format08.build_message_set([(b"k", b"v", b"extra")]), ValueError),
        (lambda: format08.build_value_set([b"v", "text"]), TypeError),
        (lambda: format08.build_value_set([b"v"], "key"), TypeError),
        (lambda: format08.build_value_set([b"v", 5]), TypeError),
    ]
    for call, error in refused:
        kind, found = agreed(call)
        assert kind == "error" and found[0] is error, found


# -- decoding a received frame in place, in pieces (what the high-level consumer's fetchers do) -----------


def in_pieces07(data: bytes, initial: int, deep: bool, limit: int):
    """decode_chunk over a frame (not bytes) ``limit`` messages at a time, as a fetcher calls it."""
    frame, items, start = memoryview(bytearray(data)), [], 0
    while True:
        got, error, resume, end = decode_chunk(frame, initial, "t", P, deep, start, limit)
        items += got
        if error is not None or resume is None:
            return items, error, resume, end
        assert got and len(got) <= limit
        start = resume


def in_pieces08(data: bytes, fetch_offset: int, limit: int):
    """decode_chunk08 likewise; the fetch offset moves to the furthest ``next_offset`` of the pieces."""
    frame, items, start, furthest = memoryview(bytearray(data)), [], 0, fetch_offset
    while True:
        got, error, resume, next_offset = decode_chunk08(frame, fetch_offset, "t", 3, start, max_items=limit)
        items += got
        furthest = max(furthest, next_offset)
        if error is not None or resume is None:
            return items, error, resume, furthest
        assert got and len(got) <= limit
        start = resume


def batches08(data: bytes, fetch_offset: int, limit: int):
    """decode_batch08 over a frame as the 0.8 fetcher calls it, the batches' messages together; each batch's
    columns are checked against its messages."""
    frame, items, start, furthest = memoryview(bytearray(data)), [], 0, fetch_offset
    while True:
        batch, error, resume, next_offset = decode_batch08(
            frame, fetch_offset, "t", 3, start, max_items=limit
        )
        assert type(batch) is MessageBatch08 and (batch.topic, batch.partition) == ("t", 3)
        columns = list(zip(batch.keys, batch.values, batch.offsets, strict=True))
        assert columns == [(m.key, m.value, m.offset) for m in batch]
        items += batch
        furthest = max(furthest, next_offset)
        if error is not None or resume is None:
            return items, error, resume, furthest
        assert batch  # a record batch is taken whole: it may carry a piece past the limit
        start = resume


@SETTINGS
@given(set08(), st.integers(0, 60), st.sampled_from([1, 2, 5, -1]))
def test_0_8_batches_hold_what_decode_chunk08_decodes_at_once(data, start_offset, limit):
    for path in PATHS:
        with codec(path == "native"):
            whole = _describe(decode_chunk08(data, start_offset, "t", 3))
            assert _describe(batches08(data, start_offset, limit)) == whole


@SETTINGS
@given(set07(), st.integers(0, 10**6), st.booleans(), st.sampled_from([1, 2, 5, -1]))
def test_0_7_frames_in_pieces_decode_as_the_bytes_at_once(data, initial, deep, limit):
    for path in PATHS:
        with codec(path == "native"):
            whole = _describe(decode_chunk(data, initial, "t", P, deep))
            assert _describe(in_pieces07(data, initial, deep, limit)) == whole


@SETTINGS
@given(set08(), st.integers(0, 60), st.sampled_from([1, 2, 5, -1]))
def test_0_8_frames_in_pieces_decode_as_the_bytes_at_once(data, start_offset, limit):
    for path in PATHS:
        with codec(path == "native"):
            whole = _describe(decode_chunk08(data, start_offset, "t", 3))
            assert _describe(in_pieces08(data, start_offset, limit)) == whole


@SETTINGS
@given(set08(), st.integers(0, 60), st.binary(max_size=80), st.integers(-1, 9))
def test_a_followers_offset_and_epoch_checks_agree(data, log_end, noise, epoch):
    """check_follower_offsets on a validated prefix (what a follower appends), stamped_epochs on anything."""
    valid = FORMAT08.valid_prefix(data)
    same(lambda: format08.check_follower_offsets(memoryview(data)[:valid], log_end))
    batch = build_batch([Record(log_end, 0, None, b"v")], partition_leader_epoch=epoch)
    for blob in (data, noise, batch + data + batch, batch + noise):
        same(lambda blob=blob: list(record_batch.stamped_epochs(blob)))
