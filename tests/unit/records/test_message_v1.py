"""Message format v1 (magic 1): golden bytes assembled by hand from the field layout, sets written and read
by an independent implementation (kafka-python's legacy records), KIP-31 offsets and LogAppendTime, and the
damage a reader refuses."""

from __future__ import annotations

import crcmod.predefined
import pytest

from tests.support.bombs import compressed_zeros
from tests.unit.protocol.golden08 import hexbytes
from tests.unit.records.test_down_convert import HELLO_V1
from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError, UnknownMagicByteError
from zkafka.records.compression import GZIP, LZ4, NO_COMPRESSION, SNAPPY, compress
from zkafka.records.format08 import encode_entry
from zkafka.records.message_v1 import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    MessageV1,
    build_message_set,
    decode_message,
    encode_message,
    iter_messages,
)

CRC32 = crcmod.predefined.mkCrcFun("crc-32")
TS = 1_700_000_000_000  # 0x0000018bcfe56800
# offset 3, N 25, crc, magic 1, attributes 0x08 (LogAppendTime), timestamp, key "k", value "v1"
BODY = hexbytes("01 | 08 | 0000018bcfe56800 | 00000001 6b | 00000002 7631")
KEYED_V1 = hexbytes("00000000 00000003 | 00000019 | a3a8c0c6") + BODY


def test_the_golden_entries_read_and_write_field_by_field():
    assert CRC32(BODY) == 0xA3A8C0C6  # the CRC of the field table, by an independent CRC-32
    assert decode_message(KEYED_V1, 0, len(KEYED_V1)) == MessageV1(b"k", b"v1", 0x08, TS, 0xA3A8C0C6)
    assert encode_entry(3, encode_message(b"k", b"v1", TS, 0x08)) == KEYED_V1
    hello = decode_message(HELLO_V1, 0, len(HELLO_V1))
    assert (hello.key, hello.value, hello.timestamp, hello.timestamp_type) == (None, b"hello", TS, CREATE_TIME)
    assert build_message_set([(None, b"hello", TS)]) == HELLO_V1
    assert build_message_set([(b"k", b"v1", 0)], base_offset=3, log_append_time=TS) == KEYED_V1
    assert [(offset, m.timestamp_type) for offset, m in iter_messages(KEYED_V1)] == [(3, LOG_APPEND_TIME)]


CODECS = pytest.mark.parametrize("codec", [NO_COMPRESSION, GZIP, SNAPPY, LZ4])


@CODECS
def test_sets_written_by_kafka_python_read_with_their_offsets_and_timestamps(codec):
    records = pytest.importorskip("kafka.record.legacy_records")
    builder = records.LegacyRecordBatchBuilder(magic=1, compression_type=codec, batch_size=1 << 20)
    pairs = [(b"k%d" % i, b"value-%d" % i) for i in range(4)] + [(None, None)]
    for i, (key, value) in enumerate(pairs):
        builder.append(i, timestamp=TS + i, key=key, value=value, headers=[])
    read = [(offset, m.key, m.value, m.timestamp) for offset, m in iter_messages(bytes(builder.build()))]
    # kafka-python's wrapper has offset 0, as some librdkafka versions': the inner offsets are taken as they are
    assert read == [(i, key, value, TS + i) for i, (key, value) in enumerate(pairs)]


@CODECS
def test_sets_written_here_read_by_kafka_python_with_absolute_offsets(codec):
    memory_records = pytest.importorskip("kafka.record.memory_records")
    messages = [(b"k%d" % i, b"v" * i, TS + 10 - i) for i in range(5)]
    data = build_message_set(messages, codec, base_offset=100)
    batches = memory_records.MemoryRecords(data)
    read = []
    while (batch := batches.next_batch()) is not None:
        read += [(r.offset, r.key, r.value, r.timestamp) for r in batch]
    assert read == [
        (100 + i, key, value, ts) for i, (key, value, ts) in enumerate(messages)
    ]
    assert [(offset, m.key, m.value, m.timestamp) for offset, m in iter_messages(data)] == [
        (100 + i, key, value, ts) for i, (key, value, ts) in enumerate(messages)
    ]


def wrapper(inner: bytes, offset: int, codec: int = GZIP, attributes: int = 0, timestamp: int = TS) -> bytes:
    return encode_entry(offset, encode_message(None, compress(codec, inner, magic=1), timestamp, codec | attributes))


def test_a_log_append_time_wrapper_gives_its_timestamp_to_every_message():
    inner = build_message_set([(None, b"a", 1), (None, b"b", 2)])
    read = list(iter_messages(wrapper(inner, 41, attributes=0x08)))
    assert [(offset, m.value, m.timestamp, m.timestamp_type) for offset, m in read] == [
        (40, b"a", TS, LOG_APPEND_TIME),
        (41, b"b", TS, LOG_APPEND_TIME),
    ]


@pytest.mark.parametrize(
    "data, error, match",
    [
        (wrapper(build_message_set([(None, b"a", 1)] * 3), 1), InvalidMessageError, "below its last relative"),
        (wrapper(build_message_set([(None, b"a", 1)], GZIP), 5), InvalidMessageError, "compressed message"),
        (wrapper(b"", 5), InvalidMessageError, "holds no messages"),
        (wrapper(build_message_set([(None, b"a", 1)])[:-1], 5), InvalidMessageError, "truncated message"),
        (encode_entry(0, encode_message(None, None, TS, GZIP)), InvalidMessageError, "has no value"),
        (KEYED_V1[:-1] + b"\x00", InvalidMessageError, "fails its CRC check"),
        (KEYED_V1[:16] + b"\x02" + KEYED_V1[17:], UnknownMagicByteError, "magic byte 2"),
        (hexbytes("0000000000000000 | 00000014") + bytes(20), InvalidMessageError, "truncated"),
        (KEYED_V1[:11] + b"\x1b" + KEYED_V1[12:] + b"\x00\x00", InvalidMessageError, "CRC"),
    ],
    ids=["wrapper-offset", "nested", "empty", "partial-inner", "null-value", "crc", "magic", "short", "length"],
)
def test_damage_is_refused(data, error, match):
    with pytest.raises(error, match=match):
        list(iter_messages(data))


def test_a_length_past_the_message_is_refused():
    body = hexbytes("01 | 00 | 0000018bcfe56800 | 00000001 6b | 00000009 7631")  # value length 9, 2 bytes
    entry = hexbytes("00000000 00000000 | 00000019") + CRC32(body).to_bytes(4, "big") + body
    with pytest.raises(InvalidMessageError, match="a length of 9 runs past its end"):
        decode_message(entry, 0, len(entry))


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_a_bomb_is_refused_before_it_is_inflated(codec):
    bomb = encode_entry(0, encode_message(None, compressed_zeros(codec, b"", 2_000_000), TS, codec))
    assert len(bomb) < 100_000  # snappy inflates at most ~21x
    with pytest.raises(MessageSizeTooLargeError):
        list(iter_messages(bomb, max_inflated=100_000))
