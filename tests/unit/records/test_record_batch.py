"""Record batches (magic 2): a batch assembled byte by byte from the field table (its CRC-32C by crcmod, an
implementation independent of the codec's), batches written and read by kafka-python's DefaultRecordBatch for
every codec, the attribute bits, and the partial tail a fetch may end in."""

from __future__ import annotations

import struct

import crcmod.predefined
import pytest

from tests.unit.protocol.golden08 import hexbytes
from zkafka.records.compression import GZIP, LZ4, NO_COMPRESSION, SNAPPY, ZSTD
from zkafka.records.default_record import Header, Record
from zkafka.records.message_v1 import CREATE_TIME, LOG_APPEND_TIME
from zkafka.records.record_batch import (
    BatchHeader,
    batch_spans,
    build_batch,
    read_batch,
    read_batch_header,
    read_batches,
)

CRC32C = crcmod.predefined.mkCrcFun("crc-32c")
TS = 1_700_000_000_000  # 0x0000018bcfe56800

# Two records: offset delta 0, key "k", value "v1", header ("h", "x"); offset delta 1, timestamp delta 5,
# null key, value "v2". A varint is zig-zag: 0 -> 00, 1 -> 02, 5 -> 0a, -1 -> 01, 13 -> 1a, 8 -> 10.
RECORDS = hexbytes("""
    1a | 00 | 00 | 00 | 02 6b | 04 7631 | 02 | 02 68 02 78   # length 13, attributes, ts delta, offset delta,
                                                              # key, value, 1 header: key "h", value "x"
    10 | 00 | 0a | 02 | 01 | 04 7632 | 00                     # length 8, ..., null key, value, no headers
""")
AFTER_CRC = hexbytes("""
    0000               # attributes: no codec, CreateTime, not transactional, not control
    00000001           # lastOffsetDelta
    0000018bcfe56800   # baseTimestamp
    0000018bcfe56805   # maxTimestamp
    00000000000003e8   # producerId 1000
    0003               # producerEpoch
    0000002a           # baseSequence 42
    00000002           # records count
""") + RECORDS
GOLDEN = hexbytes("""
    0000000000000005   # baseOffset
    00000048           # batchLength: 49 + 23 bytes of records
    00000007           # partitionLeaderEpoch
    02                 # magic
    c6ab159d           # crc: CRC-32C from the attributes to the end
""") + AFTER_CRC
GOLDEN_RECORDS = [
    Record(5, TS, b"k", b"v1", (Header("h", b"x"),)),
    Record(6, TS + 5, None, b"v2"),
]
GOLDEN_ARGS = {"producer_id": 1000, "producer_epoch": 3, "base_sequence": 42, "partition_leader_epoch": 7}


def test_the_golden_batch_reads_field_by_field():
    assert CRC32C(AFTER_CRC) == 0xC6AB159D
    batch = read_batch(GOLDEN)
    assert batch.header == BatchHeader(5, 72, 7, 2, 0xC6AB159D, 0, 1, TS, TS + 5, 1000, 3, 42, 2)
    assert batch.records == GOLDEN_RECORDS
    header = batch.header
    assert (header.size, header.last_offset, header.next_offset, header.last_sequence) == (84, 6, 7, 43)
    assert (header.compression, header.timestamp_type, header.is_transactional, header.is_control) == (
        NO_COMPRESSION,
        CREATE_TIME,
        False,
        False,
    )


def test_the_golden_batch_is_what_the_writer_writes():
    assert build_batch(GOLDEN_RECORDS, **GOLDEN_ARGS) == GOLDEN


def test_the_golden_batch_is_what_kafka_python_writes():
    default_records = pytest.importorskip("kafka.record.default_records")
    builder = default_records.DefaultRecordBatchBuilder(
        2, 0, False, producer_id=1000, producer_epoch=3, base_sequence=42, batch_size=1 << 20
    )
    builder.append(0, timestamp=TS, key=b"k", value=b"v1", headers=[("h", b"x")])
    builder.append(1, timestamp=TS + 5, key=None, value=b"v2", headers=[])
    built = bytearray(builder.build())
    # kafka-python numbers from 0 and writes partitionLeaderEpoch 0; neither field is under the CRC
    built[0:8] = struct.pack(">q", 5)
    built[12:16] = struct.pack(">i", 7)
    assert bytes(built) == GOLDEN


CODECS = pytest.mark.parametrize(
    "codec", [NO_COMPRESSION, GZIP, SNAPPY, LZ4, ZSTD], ids=["none", "gzip", "snappy", "lz4", "zstd"]
)


def kafka_python_batch(codec: int, transactional: bool = False) -> tuple[bytes, list[Record]]:
    default_records = pytest.importorskip("kafka.record.default_records")
    builder = default_records.DefaultRecordBatchBuilder(
        2, codec, transactional, producer_id=77, producer_epoch=1, base_sequence=2**31 - 2, batch_size=1 << 22
    )
    expected = []
    for i in range(50):
        key = None if i % 3 == 0 else b"key-%d" % i
        value = None if i == 7 else b"value-%d " % i * (i % 11)
        headers = [(f"h{j}", None if j == 1 else b"x" * j) for j in range(i % 4)]
        builder.append(i, timestamp=TS + 3 * i, key=key, value=value, headers=headers)
        expected.append(Record(i, TS + 3 * i, key, value, tuple(Header(k, v) for k, v in headers)))
    return bytes(builder.build()), expected


@CODECS
def test_batches_kafka_python_writes_read_back(codec):
    data, expected = kafka_python_batch(codec, transactional=True)
    batch = read_batch(data)
    assert batch.records == expected
    header = batch.header
    assert (header.compression, header.is_transactional, header.producer_id, header.producer_epoch) == (
        codec,
        True,
        77,
        1,
    )
    assert (header.count, header.last_offset_delta, header.max_timestamp) == (50, 49, TS + 147)
    assert header.last_sequence == 47  # the sequence wraps past int32's maximum to 0


@CODECS
def test_batches_written_here_read_in_kafka_python(codec):
    default_records = pytest.importorskip("kafka.record.default_records")
    _, records = kafka_python_batch(NO_COMPRESSION)
    records = [r._replace(offset=r.offset + 1000) for r in records]
    data = build_batch(records, compression=codec, producer_id=9, producer_epoch=2, base_sequence=5)
    theirs = default_records.DefaultRecordBatch(data)
    assert theirs.validate_crc()
    assert (theirs.base_offset, theirs.compression_type, theirs.producer_id, theirs.base_sequence) == (
        1000,
        codec,
        9,
        5,
    )
    assert [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in theirs] == [
        (r.offset, r.timestamp, r.key, r.value, tuple(tuple(h) for h in r.headers)) for r in records
    ]
    assert read_batch(data).records == records


def test_the_attribute_bits_are_reported():
    records = [Record(0, TS, None, b"x")]
    for kwargs, bits in [
        ({"compression": ZSTD}, 0x04),
        ({"log_append_time": TS + 9}, 0x08),
        ({"transactional": True}, 0x10),
        ({"control": True}, 0x20),
        ({"compression": LZ4, "transactional": True, "control": True}, 0x33),
    ]:
        data = build_batch(records, **kwargs)
        assert data[21:23] == struct.pack(">h", bits)
        header = read_batch_header(data)
        assert (header.compression, header.is_transactional, header.is_control) == (
            bits & 0x07,
            bool(bits & 0x10),
            bool(bits & 0x20),
        )


def test_a_log_append_time_batch_gives_every_record_its_max_timestamp():
    records = [Record(0, TS, None, b"a"), Record(1, TS + 1, None, b"b")]
    batch = read_batch(build_batch(records, log_append_time=TS + 500))
    assert batch.header.timestamp_type == LOG_APPEND_TIME
    assert [r.timestamp for r in batch.records] == [TS + 500, TS + 500]


def test_batches_back_to_back_read_in_order_and_a_partial_tail_is_left():
    first = build_batch([Record(0, TS, None, b"a")])
    second = build_batch([Record(1, TS, None, b"b"), Record(2, TS, None, b"c")])
    data = first + second + second[:30]
    assert list(batch_spans(data)) == [(0, len(first)), (len(first), len(second))]
    assert [r.value for batch in read_batches(data) for r in batch.records] == [b"a", b"b", b"c"]


def test_the_writer_refuses_what_no_batch_can_hold():
    with pytest.raises(ValueError):
        build_batch([])
    with pytest.raises(ValueError, match="offsets must increase"):
        build_batch([Record(3, TS, None, b"a"), Record(3, TS, None, b"b")])
