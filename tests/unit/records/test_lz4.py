"""LZ4 (codec 3) in 0.8.2's KafkaLZ4Block framing: golden bytes with Kafka's header checksum (0x1a where the
LZ4 spec says 0x82), round trips, frames of other writers, damage refused with clear errors, a bomb refused
block by block, and the 0.7 line still refusing codec 3."""

from __future__ import annotations

import random
import struct

import lz4.block
import lz4.frame
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.protocol.golden08 import hexbytes
from tests.unit.records.test_inflate import peak_bytes
from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError, UnknownCodecError
from zkafka.records import format07, format08
from zkafka.records.compression import (
    ALL_CODECS,
    CODECS_07,
    LZ4,
    compress,
    decompress,
    parse_codec,
)
from zkafka.records.kafka_lz4 import header_checksum, lz4_compress, lz4_decompress, xxh32
from zkafka.records.message07 import Message

KAFKA_HEADER = hexbytes("04224d18 60 40 1a")  # magic, FLG, BD 64 KiB, Kafka's HC over all six bytes
SPEC_HEADER = hexbytes("04224d18 60 40 82")  # the same with the LZ4 spec's HC (over FLG and BD)
END = hexbytes("00000000")


def frame(flg: int, bd: int, body: bytes, spec: bool = False, content_size: bytes = b"") -> bytes:
    """A frame with the given descriptor and a correct HC (Kafka's, or the spec's)."""
    descriptor = hexbytes("04224d18") + bytes([flg, bd]) + content_size
    return descriptor + bytes([header_checksum(descriptor, spec)]) + body


def block(data: bytes) -> bytes:
    packed = lz4.block.compress(data, store_size=False)
    return struct.pack("<I", len(packed)) + packed


def test_xxh32_known_values():
    assert [xxh32(data) for data in (b"", b"a", b"abc")] == [0x02CC5D05, 0x550D7456, 0x32D153FF]
    assert xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F  # past one 16-byte stripe


def test_the_header_checksum_is_kafkas_0x1a_not_the_specs_0x82():
    assert header_checksum(KAFKA_HEADER[:6]) == 0x1A
    assert header_checksum(KAFKA_HEADER[:6], spec_checksum=True) == 0x82


def test_golden_frames():
    assert lz4_compress(b"") == KAFKA_HEADER + END
    # 5 bytes do not compress: stored as is, bit 31 of the block size set
    assert lz4_compress(b"hello") == KAFKA_HEADER + hexbytes("05000080 68656c6c6f") + END
    assert lz4_compress(b"a" * 100) == KAFKA_HEADER + hexbytes("0b000000 1f6101004b5061616161 61") + END
    assert lz4_compress(b"hello", spec_checksum=True) == SPEC_HEADER + hexbytes("05000080 68656c6c6f") + END


def test_golden_08_wrapper_of_one_message():
    # offset 0 | N 55 | crc | magic 0 | codec 3 | null key | value: the frame of the sheet's "hello" entry
    assert format08.build_message_set([(None, b"hello")], LZ4) == hexbytes(
        "0000000000000000 00000037 a92e826a 00 03 ffffffff 00000029"
        "04224d1860401a 1a000000 16000100f0051387a77ab20000ffffffff0000000568656c6c6f 00000000"
    )


@pytest.mark.parametrize("size", [0, 1, 65535, 65536, 65537, 3 * 65536 + 7])
def test_round_trips_across_block_boundaries(size):
    data = (b"0123456789abcdef" * (size // 16 + 1))[:size]
    packed = compress(LZ4, data)
    assert decompress(LZ4, packed) == data
    assert len(packed) < size // 10 + 30  # compressible data is compressed, block by block
    assert lz4.frame.decompress(SPEC_HEADER + packed[7:]) == data  # a standard reader, once HC is the spec's


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=200_000))
def test_any_bytes_round_trip(data):
    assert lz4_decompress(lz4_compress(data)) == data
    assert lz4_decompress(lz4_compress(data, True), spec_checksum=True) == data


def test_incompressible_blocks_are_stored():
    data = random.Random(7).randbytes(70_000)
    packed = lz4_compress(data)
    (first,) = struct.unpack_from("<I", packed, 7)
    assert first == 65536 | 0x80000000 and packed[11 : 11 + 65536] == data[:65536]
    assert lz4_decompress(packed) == data


def test_frames_of_other_writers_are_read():
    data = b"zkafka " * 50_000
    # block checksums (FLG 0x70) and a larger block maximum size (BD 0x50, 256 KiB), re-headed with Kafka's HC
    standard = lz4.frame.compress(
        data,
        block_size=lz4.frame.BLOCKSIZE_MAX256KB,
        block_checksum=True,
        block_linked=False,
        store_size=False,
    )
    assert standard[4:6] == hexbytes("70 50")
    assert lz4_decompress(frame(0x70, 0x50, standard[7:])) == data
    assert lz4_decompress(standard, spec_checksum=True) == data
    codec = pytest.importorskip("kafka.codec")
    if codec.xxhash is not None:
        assert lz4_decompress(codec.lz4_encode_old_kafka(data)) == data
        assert codec.lz4_decode_old_kafka(lz4_compress(data)) == data


def test_0_10_content_size_is_read_only_with_the_specs_checksum():
    data = b"x" * 1000
    sized = frame(0x68, 0x40, block(data) + END, spec=True, content_size=struct.pack("<Q", 1000))
    assert lz4_decompress(sized, spec_checksum=True) == data
    with pytest.raises(InvalidMessageError, match="content size, content checksum and preset dictionary"):
        lz4_decompress(frame(0x68, 0x40, block(data) + END, content_size=struct.pack("<Q", 1000)))


@pytest.mark.parametrize(
    "payload, message",
    [
        (hexbytes("04224d"), r"truncated frame header \(3 bytes\)"),
        (hexbytes("02214c18 60 40 1a") + END, r"bad magic 02214c18 \(expected 04224d18\)"),
        (SPEC_HEADER + END, "frame descriptor checksum 0x82 is not Kafka's 0x1a"),
        (frame(0xA0, 0x40, END), "frame version 2 is unsupported"),
        (frame(0x40, 0x40, END), "dependent blocks are unsupported"),
        (frame(0x64, 0x40, END), r"FLG 0x64: content size, content checksum and preset dictionary"),
        (frame(0x61, 0x40, END), r"FLG 0x61: content size"),
        (frame(0x60, 0x30, END), "bad block descriptor BD 0x30"),
        (frame(0x60, 0x41, END), "bad block descriptor BD 0x41"),
        (KAFKA_HEADER, r"truncated block size \(no end mark\)"),
        (KAFKA_HEADER + hexbytes("05000080 68656c6c6f"), r"truncated block size \(no end mark\)"),
        (KAFKA_HEADER + hexbytes("05000080 68656c6c"), "truncated block at position 7"),
        (
            KAFKA_HEADER + hexbytes("01000180") + bytes(65537) + END,
            "block of 65537 bytes exceeds the maximum",
        ),
        (KAFKA_HEADER + hexbytes("03000000 ffffff") + END, "bad block at position 7"),
        (frame(0x70, 0x40, hexbytes("05000080 68656c6c6f 00000000") + END), "block checksum mismatch"),
    ],
    ids=[
        "short-header",
        "magic",
        "spec-hc",
        "version",
        "dependent",
        "content-checksum",
        "dictionary",
        "bd-size",
        "bd-reserved",
        "no-blocks",
        "no-end-mark",
        "truncated-block",
        "block-too-big",
        "bad-block",
        "block-checksum",
    ],
)
def test_damage_is_refused_with_a_clear_error(payload, message):
    with pytest.raises(InvalidMessageError, match=f"^corrupt lz4 payload: {message}"):
        decompress(LZ4, payload)


def test_a_corrupt_wrapper_on_the_08_line_is_an_invalid_message():
    wrapper = format08.encode_entry(0, format08.encode_message(None, SPEC_HEADER + END, LZ4))
    with pytest.raises(InvalidMessageError, match="is not Kafka's 0x1a"):
        format08.FORMAT08.validate(wrapper, 1_000_000)


def test_a_bomb_is_refused_block_by_block():
    zeros = block(bytes(65536))
    bomb = KAFKA_HEADER + zeros * 16_384 + END  # 1 GiB from ~4 MB
    limit = 1_000_000
    peak, error = peak_bytes(lambda: decompress(LZ4, bomb, limit))
    assert isinstance(error, MessageSizeTooLargeError)
    assert str(error) == "lz4 payload inflates past the limit of 1000000 bytes"
    assert peak < 2 * limit
    assert decompress(LZ4, KAFKA_HEADER + zeros * 3 + END, 3 * 65536) == bytes(3 * 65536)


def test_the_08_line_assigns_offsets_keeping_lz4():
    data = format08.build_message_set([(b"k", b"v1"), (None, b"v2")], LZ4)
    assigned = format08.assign_offsets(data, 40)
    (wrapper,) = format08.iter_messages(assigned.data, deep=False)
    assert (wrapper.offset, wrapper.codec, wrapper.value[:7]) == (41, LZ4, KAFKA_HEADER)
    assert [(m.offset, m.key, m.value) for m in format08.iter_messages(assigned.data)] == [
        (40, b"k", b"v1"),
        (41, None, b"v2"),
    ]


def test_the_07_line_keeps_refusing_codec_3():
    assert ALL_CODECS - CODECS_07 == {LZ4}
    with pytest.raises(UnknownCodecError, match="unknown compression codec 3"):
        format07.build_message_set([b"a"], LZ4)
    with pytest.raises(UnknownCodecError, match="unknown compression codec 3"):
        decompress(LZ4, lz4_compress(b"a"), codecs=CODECS_07)
    wrapper = Message(lz4_compress(format07.build_message_set([b"a"])), LZ4).to_entry()  # a valid frame
    with pytest.raises(UnknownCodecError, match="unknown compression codec 3"):
        list(format07.iter_messages(wrapper))
    with pytest.raises(UnknownCodecError, match="unknown compression codec 3"):
        format07.FORMAT07.validate(wrapper, 1_000_000)
    with pytest.raises(UnknownCodecError, match=r"'lz4' \(expected 0/1/2 or none/gzip/snappy\)"):
        parse_codec("lz4")
    assert parse_codec("lz4", ALL_CODECS) == parse_codec("3", ALL_CODECS) == LZ4
