"""Record batches (magic 2) converted to the 0.8 format on produce, as Kafka's LogValidator converts them for
a log of message format v0: every codec, a set written by a third-party producer (kafka-python's
DefaultRecordBatchBuilder), and what magic 0 cannot hold refused with Kafka's error codes."""

from __future__ import annotations

import pytest
from crc32c import crc32c

from tests.support.bombs import compressed_zeros
from tests.unit.protocol.golden08 import HELLO_ENTRY
from tests.unit.records.test_inflate import peak_bytes
from tests.unit.records.test_record_batch_damage import seal
from zkafka.errors import (
    InvalidMessageError,
    InvalidRecordError,
    MessageSizeTooLargeError,
    UnsupportedCompressionTypeError,
    UnsupportedForMessageFormatError,
)
from zkafka.protocol.errors import ErrorCode
from zkafka.records import format08
from zkafka.records.compression import GZIP, LZ4, NO_COMPRESSION, SNAPPY, ZSTD
from zkafka.records.default_record import Header, Record
from zkafka.records.down_convert import plain_batches_to_set08, to_magic0
from zkafka.records.record_batch import build_batch

TS = 1_700_000_000_000
PAIRS = [(b"k0", b"v0"), (None, b"v1"), (b"k2", None), (None, b"")]
RECORDS = [Record(i, TS + i, key, value) for i, (key, value) in enumerate(PAIRS)]


def test_a_plain_batch_of_hello_becomes_the_sheets_magic_0_entry():
    assert to_magic0(build_batch([Record(0, TS, None, b"hello")])) == HELLO_ENTRY


@pytest.mark.parametrize("codec", [NO_COMPRESSION, GZIP, SNAPPY, LZ4], ids=["none", "gzip", "snappy", "lz4"])
def test_each_record_becomes_a_v0_message_compressed_again_with_the_batchs_codec(codec):
    converted = to_magic0(build_batch(RECORDS, compression=codec))
    assert [(m.key, m.value) for m in format08.iter_messages(converted)] == PAIRS
    tops = list(format08.iter_messages(converted, deep=False))
    assert [m.codec for m in tops] == ([NO_COMPRESSION] * 4 if codec == NO_COMPRESSION else [codec])
    if codec == LZ4:  # 0.8.2's KafkaLZ4Block framing: Kafka's own header checksum (0x1a for FLG 0x60, BD 0x40)
        assert tops[0].value[:7].hex() == "04224d1860401a"
    assigned = format08.assign_offsets(converted, 100)
    assert (assigned.first_offset, assigned.last_offset) == (100, 103)


def test_several_batches_are_each_converted():
    second = build_batch([Record(4, TS, b"k4", b"v4")], compression=GZIP)
    converted = to_magic0(build_batch(RECORDS) + second)
    assert [(m.key, m.value) for m in format08.iter_messages(converted)] == [*PAIRS, (b"k4", b"v4")]


def test_the_pure_one_pass_takes_whole_plain_batches_and_leaves_any_other_set_to_to_magic0():
    plain, second = build_batch(RECORDS), build_batch([Record(0, TS, b"k4", b"v4")])
    data, count = plain_batches_to_set08(plain + second, 10, 1000)
    messages = [(m.offset, m.key, m.value) for m in format08.iter_messages(data)]
    assert count == 5 and messages == [(10 + i, k, v) for i, (k, v) in enumerate([*PAIRS, (b"k4", b"v4")])]
    gzipped = build_batch(RECORDS, compression=GZIP)
    for other in (b"", plain[:-1], plain + second[:20], plain + HELLO_ENTRY, second + gzipped):
        assert plain_batches_to_set08(other, 10, 1000) is None
    assert plain_batches_to_set08(plain, 10, 29) is None  # an entry of 30 bytes over the limit


@pytest.mark.parametrize("codec", [NO_COMPRESSION, GZIP, SNAPPY, LZ4])
def test_a_batch_built_by_kafka_python_converts(codec):
    records = pytest.importorskip("kafka.record.default_records")
    builder = records.DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 20)
    for i, (key, value) in enumerate(PAIRS):
        builder.append(i, timestamp=TS + i, key=key, value=value, headers=[])
    converted = to_magic0(bytes(builder.build()))
    assert [(m.key, m.value) for m in format08.iter_messages(converted)] == PAIRS


def refusal(data: bytes, error: type) -> Exception:
    with pytest.raises(error) as caught:
        to_magic0(data)
    return caught.value


def test_a_record_with_headers_is_refused_as_unsupported_for_message_format():
    batch = build_batch([RECORDS[0], Record(1, TS, None, b"v", (Header("h", b"1"),))])
    err = refusal(batch, UnsupportedForMessageFormatError)
    assert err.error_code == ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT == 43 and "headers" in str(err)


def test_a_zstd_batch_is_refused_before_it_is_inflated():
    bomb = seal(b"\x28\xb5\x2f\xfd" + bytes(50), 1, ZSTD)  # never read: the codec alone refuses it
    assert refusal(bomb, UnsupportedCompressionTypeError).error_code == 76
    assert refusal(build_batch(RECORDS, compression=ZSTD), UnsupportedCompressionTypeError).error_code == 76


@pytest.mark.parametrize(
    "kwargs, error, code",
    [
        ({"transactional": True, "producer_id": 7, "producer_epoch": 0, "base_sequence": 0},
         UnsupportedForMessageFormatError, 43),
        ({"producer_id": 7, "producer_epoch": 0, "base_sequence": 0}, UnsupportedForMessageFormatError, 43),
        ({"control": True}, InvalidRecordError, 87),
    ],
    ids=["transactional", "idempotent", "control"],
)  # fmt: skip
def test_transactional_idempotent_and_control_batches_are_refused(kwargs, error, code):
    assert refusal(build_batch(RECORDS, **kwargs), error).error_code == code


def with_count(batch: bytes, count: int) -> bytes:
    """``batch`` declaring ``count`` records (its lastOffsetDelta kept), the CRC-32C made right again."""
    patched = bytearray(batch)
    patched[57:61] = count.to_bytes(4, "big", signed=True)
    patched[17:21] = crc32c(bytes(patched[21:])).to_bytes(4, "big")
    return bytes(patched)


def test_a_count_that_disagrees_with_the_offsets_or_the_records_is_refused():
    batch = build_batch(RECORDS)  # lastOffsetDelta 3
    for count in (3, 5, 0, -1):
        assert refusal(with_count(batch, count), InvalidRecordError).error_code == 87
    # count 4 and lastOffsetDelta 3, but only 3 records' bytes: the records disagree (CORRUPT_MESSAGE)
    fewer = build_batch(RECORDS[:3])[61:]
    assert refusal(seal(fewer, 4), InvalidMessageError).error_code == ErrorCode.CORRUPT_MESSAGE


def test_a_batch_after_other_entries_or_a_bad_crc_is_refused():
    batch = build_batch(RECORDS)
    assert refusal(batch + HELLO_ENTRY, InvalidRecordError).error_code == 87
    damaged = bytearray(batch)
    damaged[-1] ^= 1
    assert refusal(bytes(damaged), InvalidMessageError).error_code == ErrorCode.CORRUPT_MESSAGE


def test_a_partial_trailing_batch_is_dropped():
    batch = build_batch(RECORDS)
    assert to_magic0(batch + batch[:30]) == to_magic0(batch)


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_a_batch_bomb_is_refused_before_it_is_inflated(codec):
    limit = 1_000_000
    bomb = seal(compressed_zeros(codec, b"", 20 * limit), 1, codec)
    peak, error = peak_bytes(lambda: to_magic0(bomb, limit))
    assert isinstance(error, MessageSizeTooLargeError)
    assert peak < 3 * limit
