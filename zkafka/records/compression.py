"""Compression codecs of wrapper messages and record batches: GZIP (JDK framing), Snappy (xerial stream
framing), on the 0.8 line only (0.8.2 added it) LZ4 in Kafka's framing (``zkafka.records.kafka_lz4``), and for
record batches of magic 2 only (Kafka 2.1, KIP-110) zstd (``zkafka.records.zstd``).

As Kafka's ``CompressionType`` does, the framing can depend on the message format (``magic``): LZ4 frames of
magic 1 and 2 carry the LZ4 spec's header checksum (KIP-57), those of magic 0 Kafka's 0.8.2 one.

Decompression can be bounded: with ``limit`` it stops as soon as the output would pass that many bytes and
raises MessageSizeTooLargeError, so a small payload that inflates to gigabytes (a "bomb") costs at most
``limit`` bytes and never a full inflation. Snappy blocks declare their inflated length up front: it is checked
before the block is inflated; LZ4 blocks are inflated one at a time (at most their frame's block maximum size).

The 0.7 line knows codecs 0-2 only: its callers pass ``codecs=CODECS_07`` and codec 3 stays unknown there.
"""

from __future__ import annotations

import struct
import zlib

import snappy

from zkafka.errors import InvalidMessageError, MessageSizeTooLargeError, UnknownCodecError
from zkafka.records.kafka_lz4 import lz4_compress, lz4_decompress
from zkafka.records.zstd import zstd_compress, zstd_decompress

NO_COMPRESSION = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4

CODEC_NAMES = {NO_COMPRESSION: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
ALL_CODECS = frozenset({NO_COMPRESSION, GZIP, SNAPPY, LZ4})  # the codecs of messages (magic 0 and 1)
CODECS_V2 = ALL_CODECS | {ZSTD}  # the codecs of record batches (magic 2)
CODECS_07 = frozenset({NO_COMPRESSION, GZIP, SNAPPY})  # 0.7's CompressionCodec: 3 is UnknownCodec
# The names DumpLogSegments prints (the Scala codec objects).
CODEC_OBJECT_NAMES = {
    NO_COMPRESSION: "NoCompressionCodec",
    GZIP: "GZIPCompressionCodec",
    SNAPPY: "SnappyCompressionCodec",
    LZ4: "LZ4CompressionCodec",
}

# The 10-byte header the JDKs of Kafka 0.7's time wrote: MTIME 0, XFL 0, OS 0.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"
_GZIP_TRAILER = struct.Struct("<II")

SNAPPY_MAGIC = b"\x82SNAPPY\x00"
SNAPPY_VERSION = 1
SNAPPY_MIN_COMPATIBLE_VERSION = 1
SNAPPY_BLOCK_SIZE = 32 * 1024
_SNAPPY_HEADER = SNAPPY_MAGIC + struct.pack(">ii", SNAPPY_VERSION, SNAPPY_MIN_COMPATIBLE_VERSION)
_INT32 = struct.Struct(">i")
# Snappy's densest element is a 3-byte copy of 64 bytes: no block inflates more than ~21.3x its length.
_SNAPPY_MAX_RATIO = 22
_SNAPPY_MAX_HEADER = 5  # the varint of the inflated length

# The cap for readers that know no better one (tools, the 0.7 line): far above any real wrapper.
DEFAULT_MAX_INFLATED = 64 * 1024 * 1024


def parse_codec(value: int | str, codecs: frozenset[int] = CODECS_07) -> int:
    """A codec id from its number or name (as config values and CLI options give it), one of ``codecs``
    (0.7's by default; ``ALL_CODECS`` adds 0.8.2's lz4)."""
    text = str(value).strip().lower()
    for codec in sorted(codecs):
        if text in (str(codec), CODEC_NAMES[codec]):
            return codec
    numbers = "/".join(str(codec) for codec in sorted(codecs))
    names = "/".join(CODEC_NAMES[codec] for codec in sorted(codecs))
    raise UnknownCodecError(f"unknown compression codec {value!r} (expected {numbers} or {names})")


def gzip_compress(data: bytes) -> bytes:
    """GZIP exactly as ``java.util.zip.GZIPOutputStream`` wrote it: fixed header, level-6 deflate, CRC, size."""
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15, 8, 0)
    body = deflater.compress(data) + deflater.flush()
    return _GZIP_HEADER + body + _GZIP_TRAILER.pack(zlib.crc32(data), len(data) & 0xFFFFFFFF)


def gzip_decompress(data: bytes, limit: int | None = None) -> bytes:
    """Decompress any valid gzip stream, including several concatenated members; with ``limit``, no more than
    that many bytes of output (MessageSizeTooLargeError once it would pass them)."""
    out = []
    total = 0
    rest = bytes(data)
    while rest:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        if limit is None:
            out.append(inflater.decompress(rest))
        else:
            pending = rest
            while pending:
                # One output byte more than the room left tells "over the limit" from "exactly at it".
                piece = inflater.decompress(pending, limit - total + 1)
                total += len(piece)
                if total > limit:
                    raise _inflated_too_far("gzip", limit)
                out.append(piece)
                pending = inflater.unconsumed_tail
        if not inflater.eof:
            raise InvalidMessageError("truncated gzip payload")
        rest = inflater.unused_data.lstrip(b"\x00")
    return b"".join(out)


def _inflated_too_far(codec: str, limit: int) -> MessageSizeTooLargeError:
    return MessageSizeTooLargeError(f"{codec} payload inflates past the limit of {limit} bytes")


def snappy_compress(data: bytes) -> bytes:
    """Snappy in the xerial ``SnappyOutputStream`` framing: 16-byte header, then length-prefixed 32 KiB blocks."""
    parts = [_SNAPPY_HEADER]
    view = memoryview(data)
    for start in range(0, len(data), SNAPPY_BLOCK_SIZE):
        block = snappy.compress(bytes(view[start : start + SNAPPY_BLOCK_SIZE]))
        parts.append(_INT32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def snappy_decompress(data: bytes, limit: int | None = None) -> bytes:
    """Read xerial framing; like ``SnappyInputStream``, fall back to one raw snappy block without the magic.

    Each block's declared inflated length is checked (against what its size allows and, with ``limit``,
    against the room left) before the block is inflated.
    """
    data = bytes(data)
    if not data.startswith(SNAPPY_MAGIC) or len(data) < len(_SNAPPY_HEADER):
        return _snappy_block(data, limit)
    (version,) = _INT32.unpack_from(data, len(SNAPPY_MAGIC))
    if version < SNAPPY_MIN_COMPATIBLE_VERSION:
        raise InvalidMessageError(f"unsupported xerial snappy stream version {version}")
    out = []
    total = 0
    pos = len(_SNAPPY_HEADER)
    while pos < len(data):
        if len(data) - pos < 4:
            raise InvalidMessageError("truncated snappy block header")
        (size,) = _INT32.unpack_from(data, pos)
        pos += 4
        if size < 0 or pos + size > len(data):
            raise InvalidMessageError("truncated snappy block")
        block = _snappy_block(data[pos : pos + size], limit, total)
        total += len(block)
        out.append(block)
        pos += size
    return b"".join(out)


def snappy_inflated_length(block: bytes) -> int:
    """The inflated length a raw snappy block declares (its varint prefix)."""
    length = shift = 0
    for i, byte in enumerate(block[:_SNAPPY_MAX_HEADER]):
        length |= (byte & 0x7F) << shift
        if not byte & 0x80:
            if length > 0xFFFFFFFF:
                break
            if length > _SNAPPY_MAX_RATIO * (len(block) - i - 1):
                raise InvalidMessageError(
                    f"corrupt snappy payload: a block of {len(block)} bytes declares {length} inflated"
                )
            return length
        shift += 7
    raise InvalidMessageError("corrupt snappy payload: bad length header")


def _snappy_block(block: bytes, limit: int | None = None, before: int = 0) -> bytes:
    """One raw block inflated, refused first if it would take the output (``before`` bytes so far) past
    ``limit``."""
    declared = snappy_inflated_length(block)
    if limit is not None and before + declared > limit:
        raise _inflated_too_far("snappy", limit)
    try:
        return snappy.uncompress(block)
    except Exception as exc:  # the snappy binding raises its own error types
        raise InvalidMessageError(f"corrupt snappy payload: {exc}") from exc


def compress(codec: int, data: bytes, codecs: frozenset[int] = ALL_CODECS, magic: int = 0) -> bytes:
    """Compress ``data`` (a serialized inner message set, or the records of a batch) with ``codec``, one of
    ``codecs``, in the framing of message format ``magic``."""
    if codec not in codecs:
        raise UnknownCodecError(f"unknown compression codec {codec}")
    if codec == GZIP:
        return gzip_compress(data)
    if codec == SNAPPY:
        return snappy_compress(data)
    if codec == LZ4:
        return lz4_compress(data, spec_checksum=magic > 0)
    if codec == ZSTD:
        return zstd_compress(data)
    if codec == NO_COMPRESSION:
        return bytes(data)
    raise UnknownCodecError(f"unknown compression codec {codec}")


def decompress(
    codec: int, data: bytes, limit: int | None = None, codecs: frozenset[int] = ALL_CODECS, magic: int = 0
) -> bytes:
    """Decompress a wrapper message payload or a batch's records (``codec`` one of ``codecs``, the framing of
    message format ``magic``); with ``limit``, refuse (MessageSizeTooLargeError) to produce more than that many
    bytes, stopping before the rest is inflated."""
    if codec not in codecs:
        raise UnknownCodecError(f"unknown compression codec {codec}")
    if codec == GZIP:
        try:
            return gzip_decompress(data, limit)
        except zlib.error as exc:
            raise InvalidMessageError(f"corrupt gzip payload: {exc}") from exc
    if codec == SNAPPY:
        return snappy_decompress(data, limit)
    if codec == LZ4:
        return lz4_decompress(data, limit, spec_checksum=magic > 0)
    if codec == ZSTD:
        return zstd_decompress(data, limit)
    if codec == NO_COMPRESSION:
        if limit is not None and len(data) > limit:
            raise _inflated_too_far("uncompressed", limit)
        return bytes(data)
    raise UnknownCodecError(f"unknown compression codec {codec}")
