"""Decoding fetched message sets into rows: offsets of wrapped messages, and the stop at a range end."""

from __future__ import annotations

import pytest

from zkafka.errors import InvalidMessageError, InvalidMessageSizeError
from zkafka.records.compression import GZIP, SNAPPY, compress
from zkafka.records.format07 import ByteBufferMessageSet
from zkafka.records.message07 import Message, build_message_set
from zkafka.spark.rows import decode_entries

pytestmark = pytest.mark.spark


def rows(cols):
    return list(zip(cols.values, cols.offsets, cols.next_offsets, strict=True))


def test_plain_messages_carry_their_own_offset_and_the_next_one():
    data = build_message_set([b"a", b"bb", b"ccc"])  # entries of 11, 12, 13 bytes
    cols, pos = decode_entries(data, 500, 10_000)
    assert rows(cols) == [(b"a", 500, 511), (b"bb", 511, 523), (b"ccc", 523, 536)]
    assert pos == 536


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_wrapped_messages_carry_the_wrapper_offset_and_only_the_last_moves_on(codec):
    head = build_message_set([b"h"])
    wrapper = build_message_set([b"w1", b"w2", b"w3"], codec)
    tail = build_message_set([b"t"])
    base = 1000
    wrap_start, wrap_end = base + len(head), base + len(head) + len(wrapper)
    cols, pos = decode_entries(head + wrapper + tail, base, 10**9)
    assert rows(cols) == [
        (b"h", base, wrap_start),
        (b"w1", wrap_start, wrap_start),
        (b"w2", wrap_start, wrap_start),
        (b"w3", wrap_start, wrap_end),
        (b"t", wrap_end, wrap_end + len(tail)),
    ]
    assert pos == wrap_end + len(tail)
    # nextOffset is exactly what 0.7's deep iteration reports
    deep = [(m.payload, o) for m, o in ByteBufferMessageSet(head + wrapper + tail, base)]
    assert deep == [(v, n) for v, _, n in rows(cols)]


def test_a_range_end_stops_before_the_first_entry_starting_there():
    plain = build_message_set([b"a", b"b"])  # 11 + 11
    wrapper = build_message_set([b"x", b"y"], GZIP)
    data = plain + wrapper
    cols, pos = decode_entries(data, 0, 22)
    assert cols.values == [b"a", b"b"] and pos == 22
    cols, pos = decode_entries(data, 0, 11)
    assert cols.values == [b"a"] and pos == 11
    cols, pos = decode_entries(data, 0, 23)  # an end inside the wrapper takes the whole wrapper
    assert cols.values == [b"a", b"b", b"x", b"y"] and pos == len(data)


def test_a_partial_trailing_entry_is_left_for_the_next_fetch():
    data = build_message_set([b"a" * 10, b"b" * 10])
    cols, pos = decode_entries(data[:-3], 0, 10**9)
    assert cols.values == [b"a" * 10] and pos == 20
    with pytest.raises(InvalidMessageSizeError):
        decode_entries(data[:15], 0, 10**9)


def test_an_empty_wrapper_is_skipped_and_the_offsets_after_it_stay_right():
    empty = Message(compress(GZIP, b""), codec=GZIP).to_entry()
    after = build_message_set([b"z"])
    cols, pos = decode_entries(empty + after, 40, 10**9)
    assert rows(cols) == [(b"z", 40 + len(empty), 40 + len(empty) + len(after))]
    assert pos == 40 + len(empty) + len(after)


def test_a_corrupt_message_raises():
    data = bytearray(build_message_set([b"hello"]))
    data[-1] ^= 0xFF
    with pytest.raises(InvalidMessageError):
        decode_entries(bytes(data), 0, 10**9)
