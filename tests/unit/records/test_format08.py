"""The 0.8 entry format: golden bytes, the iteration rules, leader offset assignment, follower checks."""

import struct
import zlib

import crcmod.predefined
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError, UnknownMagicByteError
from zkafka.records.compression import GZIP, NO_COMPRESSION, SNAPPY, decompress
from zkafka.records.format08 import (
    FORMAT08,
    MessageAndOffset08,
    OffsetsOutOfOrderError,
    assign_offsets,
    build_message_set,
    build_value_set,
    check_follower_offsets,
    encode_message,
    entries,
    iter_messages,
)

# Sheet §2.1: offset 0, null key, value "hello".
HELLO = bytes.fromhex(
    "0000000000000000" "00000013" "87a77ab2" "00" "00" "ffffffff" "00000005" "68656c6c6f"
)  # fmt: skip
TOMBSTONE = bytes.fromhex("908204f6" "00" "00" "00000001" "6b" "ffffffff")  # key "k", null value  # fmt: skip


def entry(offset: int, message: bytes) -> bytes:
    return struct.pack(">qi", offset, len(message)) + message


def values(buf: bytes, start: int = 0) -> list[tuple[int, bytes | None]]:
    return [(m.offset, m.value) for m in iter_messages(buf, start)]


def test_worked_examples_are_byte_exact():
    assert build_message_set([(None, b"hello")]) == HELLO and len(HELLO) == 31
    assert encode_message(b"k", None) == TOMBSTONE
    crc32 = crcmod.predefined.mkCrcFun("crc-32")
    assert crc32(HELLO[16:]) == 0x87A77AB2
    [m] = iter_messages(HELLO)
    assert m == MessageAndOffset08(0, None, b"hello", NO_COMPRESSION, 0x87A77AB2) and m.next_offset == 1
    [t] = iter_messages(entry(7, TOMBSTONE))
    assert (t.offset, t.key, t.value) == (7, b"k", None)


def test_a_value_batch_is_the_set_of_its_key_with_each_value():
    # Golden: the worked example's entry with offset 3, then the same with the tombstone's key and value.
    data = build_value_set([b"hello", None], b"k", base_offset=3)
    hello_k = encode_message(b"k", b"hello")
    assert (
        data
        == struct.pack(">qi", 3, len(hello_k)) + hello_k + struct.pack(">qi", 4, len(TOMBSTONE)) + TOMBSTONE
    )
    assert build_value_set([b"hello"]) == HELLO
    assert build_value_set([]) == b""
    for key in (None, b"", b"key"):
        batch = [b"a", bytearray(b"bb"), memoryview(b"ccc"), None, b""]
        for codec in (NO_COMPRESSION, GZIP, SNAPPY):
            built = build_value_set(batch, key, codec, 9)
            assert [(m.offset, m.key, m.value) for m in iter_messages(built)] == [
                (9 + i, key, None if v is None else bytes(v)) for i, v in enumerate(batch)
            ]
        assert build_value_set(batch, key, base_offset=9) == build_message_set(
            [(key, v) for v in batch], base_offset=9
        )
    with pytest.raises(TypeError):
        build_value_set([b"a", "text"])


def test_format_object_describes_the_line():
    assert (FORMAT08.name, FORMAT08.log_suffix, FORMAT08.overhead) == ("0.8", ".log", 12)
    data = build_message_set([(b"a", b"1"), (None, b"22")], base_offset=5)
    assert list(FORMAT08.spans(data)) == [(0, 28), (28, 28)]
    assert list(entries(data)) == [(5, 0, 28), (6, 28, 28)]
    assert FORMAT08.validate(data) == (len(data), 2)


def test_partial_entries_stop_silently_even_the_first():
    data = build_message_set([(None, b"x" * 10), (None, b"y" * 10)])
    assert values(data[:-1]) == [(0, b"x" * 10)]
    assert values(data[:20]) == [] and values(data[:11]) == []
    assert FORMAT08.validate(data[:-3]).valid_bytes == len(data) // 2


def test_a_size_below_the_minimum_is_corrupt():
    bad = struct.pack(">qi", 0, 13) + b"\x00" * 13
    with pytest.raises(InvalidMessageError, match="corrupt size 13"):
        list(iter_messages(bad))
    with pytest.raises(InvalidMessageError):
        FORMAT08.validate(HELLO + struct.pack(">qi", 1, -1))
    assert FORMAT08.valid_prefix(HELLO + bad) == len(HELLO)


def test_crc_and_magic_are_checked():
    corrupt = HELLO[:-1] + b"O"
    with pytest.raises(InvalidMessageError, match="CRC"):
        list(iter_messages(corrupt))
    with pytest.raises(InvalidMessageError):
        FORMAT08.validate(HELLO + corrupt)
    magic1 = bytearray(HELLO)
    magic1[16] = 1
    magic1[12:16] = struct.pack(">I", zlib.crc32(bytes(magic1[16:])))
    with pytest.raises(UnknownMagicByteError):
        list(iter_messages(bytes(magic1)))
    assert FORMAT08.valid_prefix(HELLO + corrupt) == len(HELLO)
    assert FORMAT08.valid_prefix(HELLO + bytes(magic1)) == len(HELLO)


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_producer_wrapper_has_relative_inner_offsets_and_the_last_as_its_own(codec):
    data = build_message_set([(b"k1", b"a"), (None, b"b"), (b"k3", b"c")], codec)
    [(offset, _, _)] = list(entries(data))
    assert offset == 2
    [wrapper] = iter_messages(data, deep=False)
    assert wrapper.codec == codec and wrapper.key is None
    assert [
        (m.offset, m.key, m.value) for m in iter_messages(decompress(codec, wrapper.value), deep=False)
    ] == [
        (0, b"k1", b"a"),
        (1, None, b"b"),
        (2, b"k3", b"c"),
    ]
    assert [(m.offset, m.key, m.value, m.codec) for m in iter_messages(data)] == [
        (0, b"k1", b"a", 0),
        (1, None, b"b", 0),
        (2, b"k3", b"c", 0),
    ]


def test_deep_iteration_skips_inner_offsets_before_the_start():
    data = build_message_set([(None, b"a"), (None, b"b"), (None, b"c")], GZIP, base_offset=10)
    assert values(data, 11) == [(11, b"b"), (12, b"c")]
    assert values(data, 13) == []


def test_leader_assigns_offsets_in_place_when_nothing_is_compressed():
    data = build_message_set([(b"k", b"one"), (None, b"two")], base_offset=900)
    assigned = assign_offsets(data + data[:5], 42, 1000)
    assert (assigned.first_offset, assigned.last_offset, assigned.count) == (42, 43, 2)
    assert assigned.data == build_message_set([(b"k", b"one"), (None, b"two")], base_offset=42)
    empty = assign_offsets(b"", 42)
    assert empty.data == b"" and (empty.first_offset, empty.last_offset, empty.count) == (42, 41, 0)
    # A request's set arrives as a view of the receive buffer: the assigned set is a copy of its own.
    view = memoryview(bytearray(data))
    assigned = assign_offsets(view, 7, 1000)
    view[:] = bytes(len(view))
    assert type(assigned.data) is bytes and assigned.data == build_message_set(
        [(b"k", b"one"), (None, b"two")], base_offset=7
    )


def test_leader_rewraps_any_compressed_set_in_one_wrapper_with_absolute_offsets():
    plain = build_message_set([(b"p", b"0")])
    gz = build_message_set([(None, b"1"), (None, b"2")], GZIP)
    sn = build_message_set([(b"s", b"3")], SNAPPY)
    assigned = assign_offsets(plain + sn + gz, 100, 10_000)
    assert (assigned.first_offset, assigned.last_offset, assigned.count) == (100, 103, 4)
    [(offset, _, size)] = list(entries(assigned.data))
    assert offset == 103 and size == len(assigned.data)
    [wrapper] = iter_messages(assigned.data, deep=False)
    assert wrapper.codec == GZIP  # the codec of the last compressed entry
    assert [(m.offset, m.key, m.value) for m in iter_messages(assigned.data)] == [
        (100, b"p", b"0"),
        (101, b"s", b"3"),
        (102, None, b"1"),
        (103, None, b"2"),
    ]


def test_entry_size_limit_and_crc_are_checked_entry_by_entry():
    big = build_message_set([(None, b"x" * 100)])  # a 126-byte entry
    assert assign_offsets(big, 0, 126).count == 1
    with pytest.raises(MessageSizeTooLargeError, match="126 bytes"):
        assign_offsets(big, 0, 125)
    corrupt = HELLO[:-1] + b"O"
    with pytest.raises(MessageSizeTooLargeError):
        FORMAT08.validate(big + corrupt, 125)
    with pytest.raises(InvalidMessageError):  # the earlier corrupt entry is found first
        FORMAT08.validate(corrupt + big, 125)
    # recompressed, the single wrapper may still be too large
    incompressible = [(None, bytes(range(256)) * 2) for _ in range(3)]
    wrapped = build_message_set(incompressible[:1], GZIP) + build_message_set(incompressible[1:], GZIP)
    limit = max(size for _, _, size in entries(wrapped))
    with pytest.raises(MessageSizeTooLargeError):
        assign_offsets(wrapped, 0, limit)


def test_follower_offsets_must_increase_from_the_log_end():
    data = build_message_set([(None, b"a"), (None, b"b")], base_offset=5)
    assert check_follower_offsets(data, 5) == (5, 6)
    assert check_follower_offsets(b"", 5) == (5, 4)
    with pytest.raises(OffsetsOutOfOrderError, match="below the log end"):
        check_follower_offsets(data, 6)
    with pytest.raises(OffsetsOutOfOrderError, match="does not follow"):
        check_follower_offsets(data + data, 0)
    wrapper = build_message_set([(None, b"a"), (None, b"b")], GZIP, base_offset=5)
    assert check_follower_offsets(wrapper, 5) == (6, 6)


pairs = st.lists(
    st.tuples(st.none() | st.binary(max_size=20), st.none() | st.binary(max_size=40)), max_size=8
)


@settings(max_examples=150, deadline=None)
@given(pairs, st.sampled_from([NO_COMPRESSION, GZIP, SNAPPY]), st.integers(0, 1 << 40))
def test_round_trip_and_assignment_keep_keys_and_values(messages, codec, leo):
    data = build_message_set(messages, codec)
    assert [(m.key, m.value) for m in iter_messages(data)] == messages
    assert FORMAT08.validate(data) == (len(data), len(messages)) and FORMAT08.valid_prefix(data) == len(data)
    assigned = assign_offsets(data, leo)
    assert [(m.offset, m.key, m.value) for m in iter_messages(assigned.data)] == [
        (leo + i, k, v) for i, (k, v) in enumerate(messages)
    ]
    assert assigned.count == len(messages)
    if messages:
        assert (
            check_follower_offsets(assigned.data, leo)[1] == assigned.last_offset == leo + len(messages) - 1
        )


@settings(max_examples=200, deadline=None)
@given(pairs, st.integers(0, 400))
def test_a_cut_set_yields_a_prefix_and_recovery_keeps_whole_entries(messages, cut):
    data = build_message_set(messages)
    cut_data = data[: max(0, len(data) - cut)]
    got = [(m.key, m.value) for m in iter_messages(cut_data)]
    assert got == messages[: len(got)]
    assert FORMAT08.valid_prefix(cut_data) == sum(size for _, _, size in entries(cut_data))
