"""Zig-zag varints and varlongs against values worked by hand from the Protocol Buffers encoding, and the
hostile ones: too long, cut short, bits past the width."""

import pytest

from zkafka.errors import InvalidMessageError
from zkafka.records.varint import read_varint, read_varlong, write_varint, write_varlong

# value -> zig-zag -> 7-bit groups, least significant first, top bit on all but the last byte
VARINTS = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),  # zig-zag 128: 0000000 then 0000001
    (300, "d804"),  # zig-zag 600 = 0b100_1011000
    (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]
VARLONGS = [(0, "00"), (-1, "01"), (2**63 - 1, "feffffffffffffffff01"), (-(2**63), "ffffffffffffffffff01")]


@pytest.mark.parametrize("value, hexed", VARINTS)
def test_varints_read_and_write_as_worked_by_hand(value, hexed):
    data = bytes.fromhex(hexed)
    assert write_varint(value) == data
    assert read_varint(b"\xaa" + data + b"\xbb", 1, len(data) + 2) == (value, len(data) + 1)


@pytest.mark.parametrize("value, hexed", VARINTS[:-2] + VARLONGS)
def test_varlongs_read_and_write_as_worked_by_hand(value, hexed):
    data = bytes.fromhex(hexed)
    assert write_varlong(value) == data
    assert read_varlong(data, 0, len(data)) == (value, len(data))


def test_a_varint_of_more_than_5_bytes_or_a_varlong_of_more_than_10_is_refused():
    with pytest.raises(InvalidMessageError, match="longer than 5 bytes"):
        read_varint(bytes.fromhex("ffffffff8f00"), 0, 6)
    with pytest.raises(InvalidMessageError, match="longer than 10 bytes"):
        read_varlong(bytes.fromhex("ff" * 10 + "01"), 0, 11)
    assert read_varlong(bytes.fromhex("ffffffff0f"), 0, 5)[0] == -(2**31)  # 5 bytes are a varlong too


def test_a_varint_cut_short_is_refused_without_reading_past_the_end():
    with pytest.raises(InvalidMessageError, match="runs past the end"):
        read_varint(bytes.fromhex("ff ff 01"), 0, 2)  # the end is before the last byte
    with pytest.raises(InvalidMessageError, match="runs past the end"):
        read_varint(b"", 0, 0)


def test_bits_past_32_in_the_fifth_byte_are_dropped_as_javas_int_shift_does():
    # 0x7f in the fifth byte: bits 28-34; Java keeps 28-31 (zig-zag 0xffffffff = -2**31)
    assert read_varint(bytes.fromhex("ffffffff7f"), 0, 5) == (-(2**31), 5)


def test_values_out_of_range_are_not_written():
    with pytest.raises(ValueError):
        write_varint(2**31)
    with pytest.raises(ValueError):
        write_varlong(-(2**63) - 1)
