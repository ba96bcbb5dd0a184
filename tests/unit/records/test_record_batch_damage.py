"""Hostile record batches (magic 2): each is assembled here from raw fields and sealed with a CRC-32C from
crcmod, so only the damage under test is wrong; each raises an InvalidMessageError (a bomb:
MessageSizeTooLargeError, as wrapper bombs do) with the batch's position, and nothing is allocated for what a
length or count announces."""

from __future__ import annotations

import struct
import zlib

import crcmod.predefined
import pytest
import zstandard

from tests.support.bombs import compressed_zeros
from tests.unit.records.test_inflate import peak_bytes
from zkafka.errors import (
    InvalidMessageError,
    MessageSizeTooLargeError,
    UnknownCodecError,
    UnknownMagicByteError,
)
from zkafka.records.compression import CODECS_V2, GZIP, SNAPPY, ZSTD, compress
from zkafka.records.record_batch import batch_spans, read_batch

CRC32C = crcmod.predefined.mkCrcFun("crc-32c")
TS = 1_700_000_000_000
PLAIN = bytes.fromhex("10 00 00 00 01 04 7631 00")  # length 8, attributes, deltas 0, null key, "v1", no headers


def seal(records: bytes, count: int, attributes: int = 0, magic: int = 2, length_delta: int = 0) -> bytes:
    """A batch of raw ``records`` bytes with a right CRC-32C (and a batchLength off by ``length_delta``)."""
    after_crc = struct.pack(">hiqqqhii", attributes, max(count - 1, 0), TS, TS, -1, -1, -1, count) + records
    length = 4 + 1 + 4 + len(after_crc) + length_delta
    return struct.pack(">qiib", 0, length, -1, magic) + struct.pack(">I", CRC32C(after_crc)) + after_crc


def refused(data: bytes, error: type = InvalidMessageError, match: str = "", **kwargs) -> Exception:
    with pytest.raises(error, match=match) as caught:
        read_batch(data, **kwargs)
    assert caught.value.position == 0
    return caught.value


def test_the_sealed_plain_batch_reads():
    assert [r.value for r in read_batch(seal(PLAIN, 1)).records] == [b"v1"]


@pytest.mark.parametrize(
    "records, match",
    [
        (bytes.fromhex("ffffffffff7f") + PLAIN[1:], "longer than 5 bytes"),  # record length varint
        (bytes.fromhex("1e 00") + b"\xff" * 10 + bytes.fromhex("00 00 01 00"), "longer than 10 bytes"),  # ts delta
        (bytes.fromhex("10 00 00 00 03 04 7631 00"), "invalid length -2"),  # key length -2
        (bytes.fromhex("10 00 00 00 01 05 7631 00"), "invalid length -3"),  # value length -3
        (bytes.fromhex("12 00 00 00 01 04 7631 d00f"), "declares 1000 headers but holds 0"),
        (bytes.fromhex("14 00 00 00 01 04 7631 02 01 00"), "header with a null key"),
        (bytes.fromhex("0e 00 00 00 01 01 00 00"), "declares 7 bytes but its fields take 6"),
        (bytes.fromhex("10 00 00 00 01 30 7631 00"), "a length of 24 runs past its end"),
        (bytes.fromhex("7e") + PLAIN[1:], "a length of 63 runs past the end of the records"),
        (bytes.fromhex("01") + PLAIN[1:], "a length of -1 runs past"),
    ],
    ids=[
        "varint-overflow", "varlong-overflow", "key-length", "value-length", "header-count", "null-header-key",
        "record-padding", "field-past-record", "record-past-records", "negative-record-length",
    ],
)  # fmt: skip
def test_a_damaged_record_is_refused(records, match):
    error = refused(seal(records, 1), match=match)
    assert error.resume == len(seal(records, 1))  # the batch's extent is sound: reading may go on after it


def test_records_that_disagree_with_the_count_are_refused():
    refused(seal(PLAIN * 2, 3), match="declares 3 records but holds 2")
    refused(seal(PLAIN * 2, 1), match="bytes follow the 1 records")
    refused(seal(PLAIN, -1), match="invalid record count -1")
    refused(seal(PLAIN, 2**31 - 1), match="declares 2147483647 records but holds 1")


def test_a_damaged_header_is_refused():
    good = seal(PLAIN, 1)
    assert refused(good[:-1], match="runs past the end").resume is None
    assert refused(seal(PLAIN, 1, length_delta=1000), match="runs past the end").resume is None
    refused(seal(b"", 0, length_delta=-1), match="batchLength of 48")
    refused(good[:60], match="fewer than a header")
    refused(seal(PLAIN, 1, magic=1), UnknownMagicByteError, "magic 1, not 2")
    refused(seal(PLAIN, 1, attributes=5), UnknownCodecError, "unknown compression codec 5")
    corrupt = bytearray(good)
    corrupt[-2] ^= 0x01
    refused(bytes(corrupt), match="fails its CRC-32C check")
    with pytest.raises(InvalidMessageError, match="batchLength of -5"):
        list(batch_spans(good + struct.pack(">qi", 0, -5)))


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, ZSTD], ids=["gzip", "snappy", "zstd"])
def test_a_compressed_batch_checks_its_inflated_records_the_same_way(codec):
    assert len(read_batch(seal(compress(codec, PLAIN * 3, CODECS_V2, magic=2), 3, codec)).records) == 3
    refused(seal(compress(codec, PLAIN * 3, CODECS_V2, magic=2), 4, codec), match="declares 4 records but holds 3")
    refused(seal(compress(codec, PLAIN[:-1], CODECS_V2, magic=2), 1, codec), match="runs past")


def test_a_truncated_zstd_payload_is_refused():
    payload = zstandard.ZstdCompressor().compress(PLAIN * 50)
    refused(seal(payload[:-2], 50, ZSTD), match="corrupt zstd payload: truncated frame")


def zstd_zeros(count: int) -> bytes:
    """A zstd frame of ``count`` zero bytes, compressed a chunk at a time (its header announces no size)."""
    compressor = zstandard.ZstdCompressor(level=1).compressobj()
    chunk = bytes(1 << 20)
    parts = [compressor.compress(chunk) for _ in range(count >> 20)]
    return b"".join(parts) + compressor.flush()


def zstd_announcing(size: int, content: bytes) -> bytes:
    """A frame of ``content`` whose header announces ``size`` bytes (a lie a one-shot decoder allocates)."""
    frame = bytearray(zstandard.ZstdCompressor(level=1, write_content_size=True).compress(content))
    assert frame[4] >> 6 == 3 or frame[4] >> 6 == 0  # 8-byte or 1-byte content size field
    descriptor = frame[4]
    frame[4] = (descriptor & 0x3F) | 0xC0
    at = 5 + (not descriptor & 0x20)
    old = 8 if descriptor >> 6 == 3 else 1
    return bytes(frame[:at]) + struct.pack("<Q", size) + bytes(frame[at + old :])


MAX = 1_000_000


@pytest.mark.parametrize(
    "codec, payload",
    [(GZIP, lambda: compressed_zeros(GZIP, b"", 200 * MAX)), (ZSTD, lambda: zstd_zeros(200 * MAX))],
    ids=["gzip", "zstd"],
)
def test_a_bomb_is_refused_with_memory_bounded_by_the_cap(codec, payload):
    bomb = seal(payload(), 1, codec)
    assert len(bomb) < MAX
    peak, error = peak_bytes(lambda: read_batch(bomb, max_inflated=MAX))
    assert isinstance(error, MessageSizeTooLargeError) and error.position == 0
    assert peak < 4 * MAX


def test_a_zstd_frame_announcing_more_than_it_holds_is_not_allocated():
    lying = zstd_announcing(2**40, PLAIN)
    peak, error = peak_bytes(lambda: read_batch(seal(lying, 1, ZSTD), max_inflated=MAX))
    assert isinstance(error, MessageSizeTooLargeError) and "needs a window of 1099511627776" in str(error)
    assert peak < 4 * MAX


def test_gzip_of_the_records_is_checked_too():
    deflated = compress(GZIP, PLAIN)
    broken = deflated[:-8] + struct.pack("<II", zlib.crc32(PLAIN) ^ 1, len(PLAIN))
    refused(seal(broken, 1, GZIP), match="gzip")
