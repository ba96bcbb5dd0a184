"""The flexible-version (KIP-482) wire types and schemas: varints, compact strings/bytes/arrays, tag buffers.

Golden bytes are written by hand from the encoding rules (7 bits a byte, low group first, top bit = more;
zig-zag ``(n << 1) ^ (n >> 31)``; compact lengths are length + 1, 0 for null; a tag buffer is a count, then
``tag | size | bytes`` per field), never produced by the codec under test. Hostile input raises
InvalidRequestError without allocating what a length announces.
"""

from __future__ import annotations

import tracemalloc

import pytest

from tests.unit.protocol.golden08 import hexbytes
from zkafka.errors import InvalidRequestError
from zkafka.protocol.flexible import (
    CompactArray,
    CompactBytes,
    CompactNullableBytes,
    CompactNullableString,
    CompactString,
    TaggedField,
    UnsignedVarint,
    Varint,
    Varlong,
)
from zkafka.protocol.schema import Schema, decode, encode, flexible_type, struct_class
from zkafka.protocol.types import (
    Array,
    Boolean,
    Bytes,
    Int16,
    Int32,
    Int64,
    MessageSet,
    NullableBytes,
    NullableString,
    String,
)

GOLDEN_VALUES = [
    (UnsignedVarint, 0, "00"),
    (UnsignedVarint, 1, "01"),
    (UnsignedVarint, 127, "7f"),
    (UnsignedVarint, 128, "80 01"),
    (UnsignedVarint, 300, "ac 02"),
    (UnsignedVarint, 16384, "80 80 01"),
    (UnsignedVarint, 2**32 - 1, "ff ff ff ff 0f"),
    (Varint, 0, "00"),
    (Varint, -1, "01"),
    (Varint, 1, "02"),
    (Varint, -2, "03"),
    (Varint, 63, "7e"),
    (Varint, -64, "7f"),
    (Varint, 64, "80 01"),
    (Varint, 2**31 - 1, "fe ff ff ff 0f"),
    (Varint, -(2**31), "ff ff ff ff 0f"),
    (Varlong, -1, "01"),
    (Varlong, 2**63 - 1, "fe ff ff ff ff ff ff ff ff 01"),
    (Varlong, -(2**63), "ff ff ff ff ff ff ff ff ff 01"),
    (CompactString, "", "01"),
    (CompactString, "abc", "04 616263"),
    (CompactNullableString, None, "00"),
    (CompactNullableString, "é", "03 c3a9"),
    (CompactBytes, b"", "01"),
    (CompactBytes, b"\x00\xff", "03 00ff"),
    (CompactNullableBytes, None, "00"),
    (CompactArray(Int32), [1, 2], "03 | 00000001 | 00000002"),
    (CompactArray(Int32), [], "01"),
    (CompactArray(Int32, nullable=True), None, "00"),
    (CompactArray(CompactString), ["a", "bc"], "03 | 02 61 | 03 6263"),
    (Boolean, True, "01"),
    (Boolean, False, "00"),
]


@pytest.mark.parametrize(("kind", "value", "golden"), GOLDEN_VALUES)
def test_golden_values_both_ways(kind, value, golden):
    wire = hexbytes(golden)
    assert encode(kind, value) == wire
    assert kind.size(value) == len(wire)
    assert decode(kind, wire) == value


def test_a_string_of_128_bytes_takes_a_two_byte_length():
    assert encode(CompactString, "x" * 128) == hexbytes("81 01") + b"x" * 128


# -- hostile input -----------------------------------------------------------------------------------------

HOSTILE = [
    (UnsignedVarint, "80 80 80 80 80 01", "longer than 5 bytes"),
    (UnsignedVarint, "80 80 80 80 80", "longer than 5 bytes"),
    (UnsignedVarint, "ff ff ff ff 1f", "overflows 32 bits"),
    (UnsignedVarint, "80 80", "truncated"),
    (UnsignedVarint, "", "truncated"),
    (Varint, "80 80 80 80 80 01", "longer than 5 bytes"),
    (Varlong, "80 80 80 80 80 80 80 80 80 80 01", "longer than 10 bytes"),
    (Varlong, "ff ff ff ff ff ff ff ff ff 03", "overflows 64 bits"),
    (CompactString, "0a 61", "runs past the end"),
    (CompactString, "ff ff ff ff 0f", "runs past the end"),
    (CompactString, "00", "null"),
    (CompactString, "03 c3", "runs past the end"),
    (CompactString, "02 ff", "not UTF-8"),
    (CompactBytes, "00", "null"),
    (CompactArray(Int32), "ff ff ff ff 0f 00000001", "longer than the 4 bytes left"),
    (CompactArray(Int32), "00", "null"),
    (CompactArray(Int32), "03 00000001", "longer than the 4 bytes left"),
]


@pytest.mark.parametrize(("kind", "wire", "message"), HOSTILE)
def test_hostile_input_is_an_invalid_request(kind, wire, message):
    with pytest.raises(InvalidRequestError, match=message):
        decode(kind, hexbytes(wire))


Tagged = struct_class(
    "Tagged",
    ("a", Int16),
    flexible=True,
    tagged=(TaggedField(0, "t", Int32, 0), TaggedField(2, "names", Array(String), ())),
)


def test_a_tag_buffer_with_a_huge_count_is_refused_before_reading_on():
    with pytest.raises(InvalidRequestError, match="tagged fields at byte 2 cannot fit"):
        Tagged.decode(hexbytes("0005 | ff ff ff ff 0f | 00 01 00"))


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ("0005 | 02 | 05 00 | 01 00", "tag 1 at byte 5 does not follow tag 5"),
        ("0005 | 02 | 05 00 | 05 00", "tag 5 at byte 5 does not follow tag 5"),
        ("0005 | 01 | 00 05 00000007 00", "unexpected bytes"),  # tag 0 is an int32: 4 bytes, not 5
        ("0005 | 01 | 00 03 000007", "truncated"),
        ("0005 | 01 | 07 ff ff ff ff 0f", "runs past the end"),
        ("0005", "truncated"),
    ],
)
def test_a_malformed_tag_buffer_is_an_invalid_request(wire, message):
    with pytest.raises(InvalidRequestError, match=message):
        Tagged.decode(hexbytes(wire))


@pytest.mark.parametrize(
    "wire",
    [
        "ff ff ff ff 0f",  # a compact string of 4 GiB
        "0005 | ff ff ff ff 0f",  # four thousand million tagged fields
        "0005 | 01 | 07 fe ff ff ff 0f",  # an unknown tagged field of 4 GiB
    ],
)
def test_what_a_length_announces_is_never_allocated(wire):
    kind = CompactString if wire.startswith("ff") else Tagged.SCHEMA
    tracemalloc.start()
    try:
        with pytest.raises(InvalidRequestError):
            decode(kind, hexbytes(wire))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


# -- flexible schemas --------------------------------------------------------------------------------------


def test_a_flexible_struct_ends_with_an_empty_tag_buffer_when_every_tagged_field_is_its_default():
    assert Tagged(5).encode() == hexbytes("0005 | 00")
    assert Tagged.decode(hexbytes("0005 | 00")) == Tagged(5, 0, (), ())


def test_tagged_fields_are_written_when_not_their_default_in_tag_order():
    value = Tagged(5, t=7, names=["x"])
    wire = hexbytes("0005 | 02 | 00 04 00000007 | 02 03 02 02 78")
    assert value.encode() == wire
    assert Tagged.SCHEMA.size(value) == len(wire)
    assert Tagged.decode(wire) == value


def test_unknown_tags_are_skipped_kept_and_written_back_in_order():
    wire = hexbytes("0005 | 03 | 00 04 00000007 | 01 02 abcd | 09 00")
    value = Tagged.decode(wire)
    assert (value.a, value.t, value.names) == (5, 7, ())
    assert value.unknown_tagged_fields == ((1, b"\xab\xcd"), (9, b""))
    assert value.encode() == wire


Inner = struct_class("Inner", ("name", String), ("level", Int16))
Outer = struct_class(
    "Outer",
    ("client", NullableString),
    ("data", Bytes),
    ("maybe", NullableBytes),
    ("items", Array(Inner.SCHEMA)),
    ("count", Int64),
    flexible=True,
)


def test_a_flexible_declaration_reads_strings_bytes_arrays_and_nested_structs_the_compact_way():
    item = Outer.SCHEMA.fields[3][1].item.record
    value = Outer(None, b"\x01", None, [item("a", 1)], 9)
    wire = hexbytes(
        "00 | 02 01 | 00 | 02 | 02 61 0001 00 | 0000000000000009 | 00"  # the nested struct has its own tag buffer
    )
    assert value.encode() == wire
    decoded = Outer.decode(wire)
    assert decoded == value
    assert type(decoded.items[0]) is item and item.__name__ == "Inner" and item is not Inner
    assert Inner.SCHEMA.flexible_version() is Outer.SCHEMA.fields[3][1].item  # made once
    assert Inner(name="a", level=1).encode() == hexbytes("0001 61 0001")  # the classic declaration is unchanged


def test_what_has_no_flexible_form_is_refused_at_declaration():
    assert flexible_type(Int32) is Int32
    assert flexible_type(String) is CompactString and flexible_type(NullableString) is CompactNullableString
    with pytest.raises(TypeError, match="no flexible form"):
        flexible_type(MessageSet)
    with pytest.raises(TypeError, match="need a flexible version"):
        Schema("Classic", ("a", Int16), tagged=(TaggedField(0, "t", Int32, 0),))
