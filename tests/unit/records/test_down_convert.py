"""Magic-1 message sets converted to the 0.8 format on produce: golden bytes for a plain message, a
compressed set written by a third-party producer (kafka-python's legacy record builder), damage refused."""

from __future__ import annotations

import pytest

from tests.support.bombs import compressed_zeros
from tests.unit.protocol.golden08 import HELLO_ENTRY, hexbytes
from tests.unit.records.test_inflate import peak_bytes
from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError
from zkafka.records import format08
from zkafka.records.compression import GZIP, LZ4, NO_COMPRESSION, SNAPPY
from zkafka.records.down_convert import is_magic1, to_magic0
from zkafka.records.kafka_lz4 import header_checksum
from zkafka.records.message_v1 import encode_message

# offset 0, N 27, crc, magic 1, attributes 0, timestamp 1700000000000 ms, null key, value "hello"
HELLO_V1 = hexbytes(
    "00000000 00000000 | 0000001b | 8ee30bba | 01 | 00 | 0000018bcfe56800 | ffffffff | 00000005 68656c6c6f"
)


def test_a_magic_1_message_becomes_the_sheets_magic_0_entry():
    assert is_magic1(HELLO_V1)
    assert to_magic0(HELLO_V1) == HELLO_ENTRY


def test_offsets_are_kept_and_a_partial_tail_is_left_for_the_append_to_drop():
    second = bytearray(HELLO_V1)
    second[7] = 1  # offset 1
    converted = to_magic0(HELLO_V1 + bytes(second) + HELLO_V1[:10])
    assert converted[: len(HELLO_ENTRY)] == HELLO_ENTRY
    assert [m.offset for m in format08.iter_messages(converted)] == [0, 1]
    assert converted.endswith(HELLO_V1[:10])


@pytest.mark.parametrize(
    "message_set", [HELLO_ENTRY, b"", HELLO_ENTRY[:10]], ids=["magic-0", "empty", "partial"]
)
def test_anything_that_does_not_start_with_magic_1_is_returned_as_is(message_set):
    assert to_magic0(message_set) is message_set


def test_a_damaged_magic_1_message_is_refused():
    damaged = bytearray(HELLO_V1)
    damaged[-1] ^= 1
    with pytest.raises(InvalidMessageError, match="position 0 fails its CRC check"):
        to_magic0(bytes(damaged))


@pytest.mark.parametrize("codec", [NO_COMPRESSION, GZIP, SNAPPY, LZ4])
def test_a_set_built_by_kafka_python_with_magic_1_reads_back_and_appends(codec):
    records = pytest.importorskip("kafka.record.legacy_records")
    builder = records.LegacyRecordBatchBuilder(magic=1, compression_type=codec, batch_size=1 << 20)
    pairs = [(b"k%d" % i, b"value-%d" % i) for i in range(5)] + [(None, None)]
    for i, (key, value) in enumerate(pairs):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=key, value=value, headers=[])
    converted = to_magic0(bytes(builder.build()))
    assert [(m.key, m.value) for m in format08.iter_messages(converted)] == pairs
    assigned = format08.assign_offsets(converted, 100)
    assert (assigned.first_offset, assigned.last_offset) == (100, 105)
    assert [(m.offset, m.key, m.value) for m in format08.iter_messages(assigned.data)] == [
        (100 + i, key, value) for i, (key, value) in enumerate(pairs)
    ]


def test_a_magic_1_lz4_wrapper_gets_kafkas_0_8_2_header_checksum():
    """KIP-57: magic 1 carries the LZ4 spec's HC; magic 0 needs Kafka's (0x1a for FLG 0x60, BD 0x40)."""
    records = pytest.importorskip("kafka.record.legacy_records")
    builder = records.LegacyRecordBatchBuilder(magic=1, compression_type=LZ4, batch_size=1 << 20)
    builder.append(0, timestamp=1_700_000_000_000, key=None, value=b"hello", headers=[])
    built = bytes(builder.build())
    payload_at = format08.LOG_OVERHEAD + 4 + 2 + 8 + 4 + 4  # crc, magic, attributes, timestamp, key, length
    # kafka-python's frame stores the content size (FLG 0x68), which 0.10's reader skips; HC is the spec's.
    header = built[payload_at : payload_at + 15]
    assert header[:6].hex() == "04224d186840" and header[14] == header_checksum(
        header[:14], spec_checksum=True
    )
    (wrapper,) = format08.iter_messages(to_magic0(built), deep=False)
    assert wrapper.codec == LZ4 and wrapper.value[:7].hex() == "04224d1860401a"


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_a_magic_1_bomb_is_refused_before_it_is_inflated(codec):
    limit = 1_000_000
    bomb = format08.encode_entry(0, encode_message(None, compressed_zeros(codec, b"", 20 * limit), 0, codec))
    peak, error = peak_bytes(lambda: to_magic0(bomb, limit))
    assert isinstance(error, MessageSizeTooLargeError)
    assert peak < 3 * limit
