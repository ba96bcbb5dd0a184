"""zstd (codec 4, record batches only): frames written by the reference library read back, several frames
and skippable frames in one payload, the exact cap, and payloads that are not whole frames."""

from __future__ import annotations

import struct

import pytest
import zstandard

from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError, UnknownCodecError
from zkafka.records.compression import ALL_CODECS, CODECS_V2, ZSTD, compress, decompress
from zkafka.records.zstd import max_window, zstd_decompress

DATA = bytes(range(256)) * 400


def streamed(data: bytes, **kwargs) -> bytes:
    """A frame as a streaming writer (zstd-jni's ZstdOutputStream, librdkafka) leaves it: no content size."""
    compressor = zstandard.ZstdCompressor(write_content_size=False, **kwargs).compressobj()
    return compressor.compress(data) + compressor.flush()


def test_zstd_is_a_codec_of_record_batches_only():
    assert decompress(ZSTD, compress(ZSTD, DATA, CODECS_V2), None, CODECS_V2) == DATA
    assert ZSTD not in ALL_CODECS
    with pytest.raises(UnknownCodecError):
        decompress(ZSTD, compress(ZSTD, DATA, CODECS_V2))


@pytest.mark.parametrize(
    "payload",
    [
        streamed(DATA),
        streamed(DATA, write_checksum=True, level=19),
        zstandard.ZstdCompressor().compress(DATA[:5000]) + zstandard.ZstdCompressor().compress(DATA[5000:]),
        struct.pack("<II", 0x184D2A53, 3) + b"abc" + streamed(DATA),
    ],
    ids=["streamed", "checksum-level-19", "two-frames", "skippable-frame"],
)
def test_frames_of_the_reference_library_read_back(payload):
    assert zstd_decompress(payload, len(DATA)) == DATA


def test_decompress_stops_one_byte_past_the_limit():
    packed = compress(ZSTD, DATA, CODECS_V2)
    assert decompress(ZSTD, packed, len(DATA), CODECS_V2) == DATA
    with pytest.raises(MessageSizeTooLargeError, match=f"inflates past the limit of {len(DATA) - 1} bytes"):
        decompress(ZSTD, packed, len(DATA) - 1, CODECS_V2)


@pytest.mark.parametrize(
    "payload, match",
    [
        (b"", "no frame"),
        (streamed(DATA)[:-1], "truncated frame"),
        (streamed(DATA)[:6], "truncated frame"),
        (streamed(DATA) + b"\x28", "truncated frame"),
        (b"\x00" * 8, "bad magic"),
        (struct.pack("<II", 0x184D2A50, 99) + b"abc", "runs past the end"),
        (streamed(DATA)[:-3] + b"\xff\xff\xff", "zstd"),
    ],
    ids=["empty", "last-byte", "header", "trailing-byte", "magic", "skippable", "garbage"],
)
def test_what_is_not_whole_frames_is_refused(payload, match):
    with pytest.raises(InvalidMessageError, match=match):
        zstd_decompress(payload, 10 * len(DATA))


def test_the_window_cap_follows_the_limit_within_zstds_defaults():
    assert max_window(None) == max_window(1 << 40) == 128 << 20
    assert max_window(1000) == 8 << 20  # every level's streaming window up to 19 fits
    assert max_window((32 << 20) + 1) == 64 << 20
    level_22 = streamed(DATA, level=22)  # a 128 MiB window, what zstd and zstd-jni accept by default
    assert zstd_decompress(level_22) == DATA
    with pytest.raises(MessageSizeTooLargeError, match=f"needs a window of {128 << 20} bytes, over {64 << 20}"):
        zstd_decompress(level_22, 64 << 20)
